// RUN: ember-opt %s --split-input-file -p convert-graph-to-tensor | filecheck %s

// A pointwise grouped convolution (1x1, stride 1, no padding) flattens its
// spatial dims: one generic over (n, f, p, c) on 1x8x49 positions, reshaped
// back, so its innermost loop runs over all 49 positions, not a row of 7.
func.func @pointwise(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32> {
  %w = graph.constant dense<1.0> : tensor<8x2x1x1xf32>
  %y = graph.conv %x, %w {group = 4 : i64, kernel_shape = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x7x7xf32>
  func.return %y : tensor<1x8x7x7xf32>
}

// CHECK-LABEL: func.func @pointwise
// CHECK:         tensor.reshape %x({{.*}}) : (tensor<1x8x7x7xf32>, tensor<3xi64>) -> tensor<1x8x49xf32>
// CHECK:         tensor.reshape %w({{.*}}) : (tensor<8x2x1x1xf32>, tensor<2xi64>) -> tensor<8x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, (((d1 floordiv 2) * 2) + d3), d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<1x8x49xf32>)
// CHECK:         %y = tensor.reshape {{.*}} : (tensor<1x8x49xf32>, tensor<4xi64>) -> tensor<1x8x7x7xf32>

// -----

// Must not fire: a strided or padded 1x1 grouped convolution, a 3x3 one and
// an ungrouped 1x1 keep their window generic (or linalg's named conv).
func.func @not_pointwise(%x: tensor<1x8x7x7xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x9x9xf32>, tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>) {
  %w = graph.constant dense<1.0> : tensor<8x2x1x1xf32>
  %w3 = graph.constant dense<1.0> : tensor<8x2x3x3xf32>
  %wd = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %s = graph.conv %x, %w {group = 4 : i64, kernel_shape = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x4x4xf32>
  %p = graph.conv %x, %w {group = 4 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x7x7xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x9x9xf32>
  %k = graph.conv %x, %w3 {group = 4 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x7x7xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x7x7xf32>
  %d = graph.conv %x, %wd {kernel_shape = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x7x7xf32>
  func.return %s, %p, %k, %d : tensor<1x8x4x4xf32>, tensor<1x8x9x9xf32>, tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>
}

// CHECK-LABEL: func.func @not_pointwise
// CHECK-NOT:     tensor<1x8x49xf32>
// CHECK:         %s = linalg.generic {{.*}} ins(%x, %w : tensor<1x8x7x7xf32>, tensor<8x2x1x1xf32>)
// CHECK:         %p = linalg.generic {{.*}} ins(%{{.*}}, %w : tensor<1x8x9x9xf32>, tensor<8x2x1x1xf32>)
// CHECK:         %k = linalg.generic {{.*}} ins(%{{.*}}, %w3 : tensor<1x8x9x9xf32>, tensor<8x2x3x3xf32>)
// CHECK:         %d = linalg.conv_2d_nchw_fchw
// CHECK-NOT:     tensor<1x8x49xf32>
