// RUN: ember-opt %s -p "graph-layout{layout=NHWC max-conversion-ratio=0.01}" | filecheck %s
// RUN: ember-opt %s -p "graph-optimize{level=2}" | filecheck %s
// RUN: ember-opt %s -p "graph-layout{layout=NHWC}" | filecheck %s --check-prefix=ANYWAY

// A small 1x1 conv whose result every following op needs in NCHW (a channel
// shuffle by reshape and transpose): converting would move 2 elements per
// multiply-accumulate (256 in and back out, 128 outputs x 2 channels), more
// than the max-conversion-ratio of 0.01 that -O2 (graph-optimize) uses, so
// the function stays NCHW. Without a limit (the pass's default) it converts.
func.func @shuffle(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x1x8x8xf32> {
  %w = graph.constant dense<5.000000e-01> : tensor<2x2x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x2x8x8xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x8x8xf32>
  %shape = graph.constant dense<[1, 1, 2, 8, 8]> : tensor<5xi64>
  %r = graph.reshape %c, %shape : (tensor<1x2x8x8xf32>, tensor<5xi64>) -> tensor<1x1x2x8x8xf32>
  %t = graph.transpose %r {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x1x2x8x8xf32>) -> tensor<1x2x1x8x8xf32>
  func.return %t : tensor<1x2x1x8x8xf32>
}
// CHECK-LABEL: func.func @shuffle
// CHECK-NOT:     graph.layout_transform
// CHECK:         graph.conv %x
// CHECK-NOT:     graph.layout_transform

// ANYWAY-LABEL: func.func @shuffle
// ANYWAY:         graph.layout_transform %x {source = "NCHW", target = "NHWC"}
// ANYWAY:         graph.conv_nhwc
// ANYWAY:         graph.layout_transform %{{.*}} {source = "NHWC", target = "NCHW"}
