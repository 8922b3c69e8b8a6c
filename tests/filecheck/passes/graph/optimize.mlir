// RUN: ember-opt %s -p 'graph-optimize{level=2}' --print-between-passes 2>&1 >/dev/null | filecheck %s
// RUN: ember-opt %s -p 'graph-optimize{level=0}' | filecheck %s --check-prefix=O0
// RUN: ember-opt %s -p 'graph-optimize{level=2 layout=none}' | filecheck %s --check-prefix=NCHW
// RUN: ember-opt %s -p 'graph-optimize{level=2 layout=none disabled=graph-fuse,graph-fold-batchnorm}' | filecheck %s --check-prefix=DISABLED

// The named pipeline expands into its passes, so --print-between-passes shows
// the flow: shapes, then the clean-up to a fixed point (x * 1 vanishes, the
// BatchNorm folds into the conv), the NHWC layout (the weights' conversion
// folded by the next clean-up), then fusion. Level 0 only folds what the
// lowering needs; layout=none keeps NCHW. (The conv is big enough for NHWC
// to pay: 288 multiply-accumulates per output element against 2 moved
// elements; see layout-cost.mlir for one that is not.)
func.func @main(%x: tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> {
  %w = graph.constant dense<5.000000e-01> : tensor<32x32x3x3xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %scale = graph.constant dense<2.000000e+00> : tensor<32xf32>
  %bias = graph.constant dense<1.000000e+00> : tensor<32xf32>
  %mean = graph.constant dense<0.000000e+00> : tensor<32xf32>
  %var = graph.constant dense<1.000000e+00> : tensor<32xf32>
  %m = graph.mul %x, %one : (tensor<1x32x4x4xf32>, tensor<f32>) -> tensor<1x32x4x4xf32>
  %c = graph.conv %m, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x4x4xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x4x4xf32>
  %n = graph.batch_normalization %c, %scale, %bias, %mean, %var : (tensor<1x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32>
  %r = graph.relu %n : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  func.return %r : tensor<1x32x4x4xf32>
}
// CHECK:       IR after graph-infer-shapes:
// CHECK:         graph.mul
// CHECK:         graph.batch_normalization
// CHECK:       IR after graph-simplify:
// CHECK-NOT:     graph.mul
// CHECK-NOT:     graph.batch_normalization
// CHECK:         graph.conv %x, %{{.*}}, B %{{.*}}
// CHECK-NEXT:    graph.relu
// CHECK:       IR after graph-layout:
// CHECK:         graph.layout_transform %x {source = "NCHW", target = "NHWC"}
// CHECK:         graph.layout_transform %{{.*}} {source = "OIHW", target = "HWIO"}
// CHECK:       IR after graph-simplify:
// CHECK-NOT:     {source = "OIHW"
// CHECK:         %r = graph.fused "conv" (%x_nhwc)
// CHECK:           graph.conv_nhwc
// CHECK-NEXT:      graph.relu
// CHECK:         %r_nchw = graph.layout_transform %r {source = "NHWC", target = "NCHW"}
// CHECK-NEXT:    func.return %r_nchw

// NCHW:        %r = graph.fused "conv" (%x)
// NCHW:          graph.conv %x_1
// NCHW-NEXT:     graph.relu
// NCHW-NOT:    graph.layout_transform

// O0:          graph.mul
// O0:          graph.conv
// O0:          graph.batch_normalization
// O0:          graph.relu
// O0-NOT:      graph.fused

// DISABLED-NOT:  graph.fused
// DISABLED:      graph.conv %x
// DISABLED-NEXT: graph.batch_normalization
// DISABLED-NEXT: graph.relu
