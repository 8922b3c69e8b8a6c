// RUN: ember-opt %s --split-input-file --verify-diagnostics -p convert-graph-to-tensor | filecheck %s

// DFT: one contraction with the constant [k, c_out, t, c_in] matrix of the
// transform (here a real 2-point DFT along axis 0: [[1, 1], [1, -1]] with
// zero imaginary parts), reducing over t and c_in in f64, then rounded to
// the input's f32 once.
func.func @dft(%x: tensor<2x3x1xf32>) -> tensor<2x3x2xf32> {
  %axis = graph.constant dense<0> : tensor<i64>
  %y = graph.dft %x, axis %axis : (tensor<2x3x1xf32>, tensor<i64>) -> tensor<2x3x2xf32>
  func.return %y : tensor<2x3x2xf32>
}

// CHECK-LABEL: func.func @dft
// CHECK-NEXT:    %[[M:.*]] = graph.constant {{.*}} : tensor<2x2x2x1xf64>
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %[[M]] : tensor<2x3x1xf32>, tensor<2x2x2x1xf64>)
// CHECK:           arith.extf %{{.*}} : f32 to f64
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         %y = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x3x2xf64>)
// CHECK:           arith.truncf %{{.*}} : f64 to f32

// -----

// A dft_length shorter than the axis cuts the input first.
func.func @cut(%x: tensor<1x8x2xf32>) -> tensor<1x4x2xf32> {
  %n = graph.constant dense<4> : tensor<i64>
  %y = graph.dft %x, dft_length %n {inverse = 1 : i64} : (tensor<1x8x2xf32>, tensor<i64>) -> tensor<1x4x2xf32>
  func.return %y : tensor<1x4x2xf32>
}

// CHECK-LABEL: func.func @cut
// CHECK:         %[[CUT:.*]] = tensor.extract_slice %x[0, 0, 0] [1, 4, 2] [1, 1, 1] : tensor<1x8x2xf32> to tensor<1x4x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[CUT]], %{{.*}} : tensor<1x4x2xf32>, tensor<4x2x4x2xf64>)

// -----

// STFT reads frame f at f * frame_step + t through its map, times the window.
func.func @stft(%s: tensor<1x16x1xf32>, %w: tensor<4xf32>) -> tensor<1x7x3x2xf32> {
  %step = graph.constant dense<2> : tensor<i64>
  %y = graph.stft %s, %step, window %w : (tensor<1x16x1xf32>, tensor<i64>, tensor<4xf32>) -> tensor<1x7x3x2xf32>
  func.return %y : tensor<1x7x3x2xf32>
}

// CHECK-LABEL: func.func @stft
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, ((d1 * 2) + d4), d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%s, %{{.*}}, %w : tensor<1x16x1xf32>, tensor<3x2x4x1xf64>, tensor<4xf32>)

// -----

// Windows of a constant size are constants.
func.func @window() -> tensor<4xf32> {
  %size = graph.constant dense<4> : tensor<i32>
  %h = graph.hann_window %size : (tensor<i32>) -> tensor<4xf32>
  func.return %h : tensor<4xf32>
}

// CHECK-LABEL: func.func @window
// CHECK-NEXT:    %h = graph.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01]> : tensor<4xf32>

// -----

// An axis known only at run time.
func.func @runtime_axis(%x: tensor<2x2x1xf32>, %axis: tensor<i64>) -> tensor<2x2x2xf32> {
  %y = graph.dft %x, axis %axis : (tensor<2x2x1xf32>, tensor<i64>) -> tensor<2x2x2xf32>
  func.return %y : tensor<2x2x2xf32>
}

// CHECK: {{^}}convert-graph-to-tensor: cannot lower 1 op: graph.dft (axis and dft_length must be constants){{$}}
