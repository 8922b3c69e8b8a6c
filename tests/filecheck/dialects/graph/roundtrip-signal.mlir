// RUN: ember-opt %s | ember-opt | filecheck %s

// The ops of ops_signal.py: DFT (real one-sided, the one-sided inverse with a
// dft_length), STFT with a window, a symmetric Hann window and a float64
// MelWeightMatrix (output_datatype).

func.func @signal(%x: tensor<2x10x8x1xf32>, %c: tensor<2x10x8x2xf32>, %s: tensor<1x64x1xf32>, %w: tensor<16xf32>) -> (tensor<2x6x8x2xf32>, tensor<2x10x8x1xf32>, tensor<1x13x9x2xf32>, tensor<10xf32>, tensor<9x8xf64>) {
  %axis = graph.constant dense<1> : tensor<i64>
  %len = graph.constant dense<10> : tensor<i64>
  %step = graph.constant dense<4> : tensor<i64>
  %size = graph.constant dense<10> : tensor<i32>
  %r = graph.dft %x, axis %axis {onesided = 1 : i64} : (tensor<2x10x8x1xf32>, tensor<i64>) -> tensor<2x6x8x2xf32>
  %i = graph.dft %c, dft_length %len, axis %axis {inverse = 1 : i64, onesided = 1 : i64} : (tensor<2x10x8x2xf32>, tensor<i64>, tensor<i64>) -> tensor<2x10x8x1xf32>
  %st = graph.stft %s, %step, window %w : (tensor<1x64x1xf32>, tensor<i64>, tensor<16xf32>) -> tensor<1x13x9x2xf32>
  %h = graph.hann_window %size {periodic = 0 : i64} : (tensor<i32>) -> tensor<10xf32>
  %b = graph.constant dense<8> : tensor<i32>
  %n = graph.constant dense<16> : tensor<i32>
  %rate = graph.constant dense<8000> : tensor<i32>
  %lo = graph.constant dense<0.0> : tensor<f32>
  %hi = graph.constant dense<4000.0> : tensor<f32>
  %m = graph.mel_weight_matrix %b, %n, %rate, %lo, %hi {output_datatype = 11 : i64} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<9x8xf64>
  func.return %r, %i, %st, %h, %m : tensor<2x6x8x2xf32>, tensor<2x10x8x1xf32>, tensor<1x13x9x2xf32>, tensor<10xf32>, tensor<9x8xf64>
}

// CHECK-LABEL: func.func @signal
// CHECK:         %r = graph.dft %x, axis %axis {onesided = 1 : i64} : (tensor<2x10x8x1xf32>, tensor<i64>) -> tensor<2x6x8x2xf32>
// CHECK-NEXT:    %i = graph.dft %c, dft_length %len, axis %axis {inverse = 1 : i64, onesided = 1 : i64} : (tensor<2x10x8x2xf32>, tensor<i64>, tensor<i64>) -> tensor<2x10x8x1xf32>
// CHECK-NEXT:    %st = graph.stft %s, %step, window %w : (tensor<1x64x1xf32>, tensor<i64>, tensor<16xf32>) -> tensor<1x13x9x2xf32>
// CHECK-NEXT:    %h = graph.hann_window %size {periodic = 0 : i64} : (tensor<i32>) -> tensor<10xf32>
// CHECK:         %m = graph.mel_weight_matrix %b, %n, %rate, %lo, %hi {output_datatype = 11 : i64} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<9x8xf64>
