// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The shape rules of the losses and the bit ops name the broken rule.

// A loss's targets are the scores' shape without the class axis.
func.func @nll_targets(%x: tensor<3x5x2xf32>, %t: tensor<3x5xi64>) -> tensor<f32> {
  %y = graph.negative_log_likelihood_loss %x, %t : (tensor<3x5x2xf32>, tensor<3x5xi64>) -> tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK:      sym_name = "nll_targets"
// CHECK:      Operation does not verify: graph.negative_log_likelihood_loss: target [3, 5] must be input's shape without its class axis, [3, 2]

// -----

// reduction is none, sum or mean.
func.func @sce_reduction(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> tensor<f32> {
  %y = graph.softmax_cross_entropy_loss %x, %t {reduction = "max"} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK:      sym_name = "sce_reduction"
// CHECK:      Operation does not verify: graph.softmax_cross_entropy_loss: reduction must be one of none, sum, mean, got 'max'

// -----

// The bitwise ops take integers only.
func.func @bitwise_float(%a: tensor<3xf32>) -> tensor<3xf32> {
  %y = graph.bitwise_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK:      sym_name = "bitwise_float"
// CHECK:      Operation does not verify: graph.bitwise_and: operands must be integer tensors, got f32

// -----

// BitCast keeps the size of the elements.
func.func @bit_cast_size(%a: tensor<3xf32>) -> tensor<3xi64> {
  %y = graph.bit_cast %a {to = i64} : (tensor<3xf32>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// CHECK:      sym_name = "bit_cast_size"
// CHECK:      Operation does not verify: graph.bit_cast: cannot reinterpret f32 as i64: their sizes differ
