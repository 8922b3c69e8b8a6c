// RUN: ember-opt %s -p 'graph-optimize{level=2}' --print-between-passes | filecheck %s
// RUN: ember-opt %s -p 'graph-optimize{level=0}' | filecheck %s --check-prefix=O0

// The named pipeline expands into its passes, so --print-between-passes shows
// the flow: shapes, then the clean-up to a fixed point (x * 1 vanishes, the
// BatchNorm folds into the conv), then fusion. Level 0 only folds what the
// lowering needs.
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<5.000000e-01> : tensor<2x2x1x1xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %scale = graph.constant dense<2.000000e+00> : tensor<2xf32>
  %bias = graph.constant dense<1.000000e+00> : tensor<2xf32>
  %mean = graph.constant dense<0.000000e+00> : tensor<2xf32>
  %var = graph.constant dense<1.000000e+00> : tensor<2xf32>
  %m = graph.mul %x, %one : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %c = graph.conv %m, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = graph.batch_normalization %c, %scale, %bias, %mean, %var : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %n : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}
// CHECK:       IR after graph-infer-shapes:
// CHECK:         graph.mul
// CHECK:         graph.batch_normalization
// CHECK:       IR after graph-simplify:
// CHECK-NOT:     graph.mul
// CHECK-NOT:     graph.batch_normalization
// CHECK:         graph.conv %x, %{{.*}}, B %{{.*}}
// CHECK-NEXT:    graph.relu
// CHECK:       func.func @main
// CHECK-NEXT:    %r = graph.fused "conv" (%x)
// CHECK:           graph.conv
// CHECK-NEXT:      graph.relu

// O0:          graph.mul
// O0:          graph.conv
// O0:          graph.batch_normalization
// O0:          graph.relu
// O0-NOT:      graph.fused
