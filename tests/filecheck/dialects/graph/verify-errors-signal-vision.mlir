// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of the signal and vision ops: each case breaks one shape
// rule, and the message names it.

// A DFT along the trailing (real, imaginary) axis.
func.func @dft_last_axis(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %axis = graph.constant dense<-1> : tensor<i64>
  // expected-error @+1 {{axis -1 must be a signal axis of a rank-2 input, not the last}}
  %y = graph.dft %x, axis %axis : (tensor<4x2xf32>, tensor<i64>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// CHECK: sym_name = "dft_last_axis"

// -----

// A signal whose trailing dim is neither 1 (real) nor 2 (complex).
func.func @dft_three_components(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{input must end in a dim of 1 (real) or 2 (complex), got [4, 3]}}
  %y = graph.dft %x : (tensor<4x3xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// CHECK: sym_name = "dft_three_components"

// -----

// A grid with three components for a 2-D image.
func.func @grid_components(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{grid must be [N, *output, 2], got [1, 2, 2, 3]}}
  %y = graph.grid_sample %x, %g : (tensor<1x1x4x4xf32>, tensor<1x2x2x3xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}

// CHECK: sym_name = "grid_components"

// -----

// An unknown padding mode.
func.func @grid_padding(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{unknown padding_mode 'wrap' (one of zeros, border, reflection)}}
  %y = graph.grid_sample %x, %g {padding_mode = "wrap"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}

// CHECK: sym_name = "grid_padding"

// -----

// Col2Im input whose block count does not fill the image.
func.func @col2im_blocks(%x: tensor<1x4x10xf32>) -> tensor<1x1x4x4xf32> {
  %image = graph.constant dense<[4, 4]> : tensor<2xi64>
  %block = graph.constant dense<[2, 2]> : tensor<2xi64>
  // expected-error @+1 {{input has 10 blocks, the image holds 9}}
  %y = graph.col2im %x, %image, %block : (tensor<1x4x10xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x4x4xf32>
  func.return %y : tensor<1x1x4x4xf32>
}

// CHECK: sym_name = "col2im_blocks"
