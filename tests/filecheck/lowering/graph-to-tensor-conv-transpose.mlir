// RUN: ember-opt %s -p convert-graph-to-tensor --split-input-file | filecheck %s
// RUN: ember-opt %s | ember-opt | filecheck %s --check-prefix=ROUNDTRIP

// A transposed convolution is a stride-1 convolution of the input spread out
// by the strides: a strided tensor.insert_slice into a fill of 0, at the
// padding (k - 1) * d - pad = 1 from the start (output_padding adds one at
// the end), by a weight whose dims are swapped and whose kernel is flipped:
// W'[f, c, ky, kx] = W[c, f, 2 - ky, 2 - kx], here a generic (the weight is
// an input; a constant one is flipped at compile time).
func.func @upsample(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %y = graph.conv_transpose %x, %w {output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}

// ROUNDTRIP: %y = graph.conv_transpose %x, %w {output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>

// CHECK-LABEL: func.func @upsample
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x8x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = tensor.insert_slice %x into %[[Z]][0, 0, 1, 1] [1, 4, 3, 3] [1, 1, 2, 2] : tensor<1x4x3x3xf32> into tensor<1x4x8x8xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> ((((d0 floordiv 2) * 4) + d1), (d0 mod 2), ((d2 * -1) + 2), ((d3 * -1) + 2))>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]{{.*}} ins(%w : tensor<4x2x3x3xf32>)
// CHECK:         linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[S]], %{{.*}} : tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) outs(%{{.*}} : tensor<1x2x6x6xf32>)

// -----

// A symbolic batch: the fill and the insert take its size as a value.
func.func @symbolic_batch(%x: tensor<?x4x3x3xf32, #graph.dims<N>>, %w: tensor<4x2x2x2xf32>) -> tensor<?x2x6x6xf32, #graph.dims<N>> attributes {graph.symbols = {N = #graph.range<1, 8>}} {
  %y = graph.conv_transpose %x, %w {strides = array<i64: 2, 2>} : (tensor<?x4x3x3xf32, #graph.dims<N>>, tensor<4x2x2x2xf32>) -> tensor<?x2x6x6xf32, #graph.dims<N>>
  func.return %y : tensor<?x2x6x6xf32, #graph.dims<N>>
}

// CHECK-LABEL: func.func @symbolic_batch
// CHECK:         %N = tensor.dim {ember.symbol = "N"} %x
// CHECK:         %[[E:.*]] = tensor.empty(%N) : tensor<?x4x7x7xf32, #graph.dims<N>>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : {{.*}})
// CHECK-NEXT:    %{{.*}} = tensor.insert_slice %x into %[[Z]][0, 0, 1, 1] [%N, 4, 3, 3] [1, 1, 2, 2] : tensor<?x4x3x3xf32, #graph.dims<N>> into tensor<?x4x7x7xf32, #graph.dims<N>>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} outs(%{{.*}} : tensor<?x2x6x6xf32, #graph.dims<N>>)

// -----

// Constant weights, stride 2: by phases, without the zeros. The outputs at
// each (row, column) phase come from the taps of that phase alone: a
// stride-1 convolution of X padded by taps - 1 (phases with as many taps
// share the pad), by those taps flipped, inserted at the phase with stride
// 2; then the pads crop.
func.func @by_phases(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x6x6xf32> {
  %w = graph.constant dense<1.0> : tensor<2x1x3x2xf32>
  %y = graph.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<2x1x3x2xf32>) -> tensor<1x1x6x6xf32>
  func.return %y : tensor<1x1x6x6xf32>
}

// CHECK-LABEL: func.func @by_phases
// CHECK:         %[[P:.*]] = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 1, 0]
// CHECK:         %[[C0:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %{{.*}} : tensor<1x2x5x3xf32>, tensor<1x2x2x1xf32>)
// CHECK-NEXT:    %[[Y0:.*]] = tensor.insert_slice %[[C0]] into %{{.*}}[0, 0, 0, 0] [1, 1, 4, 3] [1, 1, 2, 2] : tensor<1x1x4x3xf32> into tensor<1x1x7x6xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[C1:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %{{.*}} : tensor<1x2x5x3xf32>, tensor<1x2x2x1xf32>)
// CHECK-NEXT:    %[[Y1:.*]] = tensor.insert_slice %[[C1]] into %[[Y0]][0, 0, 0, 1]
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%x, %{{.*}} : tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>)
// CHECK-NEXT:    tensor.insert_slice {{.*}}[0, 0, 1, 0] [1, 1, 3, 3] [1, 1, 2, 2]
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%x, %{{.*}} : tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>)
// CHECK-NEXT:    %[[Y3:.*]] = tensor.insert_slice {{.*}}[0, 0, 1, 1] [1, 1, 3, 3] [1, 1, 2, 2]
// CHECK-NEXT:    %y = tensor.extract_slice %[[Y3]][0, 0, 1, 0] [1, 1, 6, 6] [1, 1, 1, 1] : tensor<1x1x7x6xf32> to tensor<1x1x6x6xf32>
