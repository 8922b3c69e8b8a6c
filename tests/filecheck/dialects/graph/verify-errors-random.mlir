// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The random ops' shape rules name the broken rule.

// RandomUniform draws floats only.
func.func @integer_dtype() -> tensor<2xi32> {
  %y = graph.random_uniform {dtype = 6 : i64, shape = array<i64: 2>} : () -> tensor<2xi32>
  func.return %y : tensor<2xi32>
}

// CHECK:      Operation does not verify: graph.random_uniform: dtype must be a float type, got i32

// -----

// Without dtype, a Like op takes the input's type, which must be a float.
func.func @integer_like(%x: tensor<3xi64>) -> tensor<3xi64> {
  %y = graph.random_normal_like %x : (tensor<3xi64>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// CHECK:      Operation does not verify: graph.random_normal_like: input must be a float tensor without dtype, got tensor<3xi64>

// -----

// Bernoulli's probabilities are floats.
func.func @integer_probabilities(%p: tensor<3xi32>) -> tensor<3xi32> {
  %y = graph.bernoulli %p : (tensor<3xi32>) -> tensor<3xi32>
  func.return %y : tensor<3xi32>
}

// CHECK:      Operation does not verify: graph.bernoulli: input must be a float tensor, got tensor<3xi32>

// -----

// The result has `shape`.
func.func @wrong_shape() -> tensor<3xf32> {
  %y = graph.random_normal {shape = array<i64: 2>} : () -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK:      Operation does not verify: graph.random_normal

// -----

// Multinomial's samples are int32 or int64 class indices.
func.func @float_classes(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %y = graph.multinomial %x {dtype = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %y : tensor<2x1xf32>
}

// CHECK:      Operation does not verify: graph.multinomial: dtype must be int32 or int64, got f32

// -----

// Its logits are [batch, classes].
func.func @one_row(%x: tensor<3xf32>) -> tensor<1x1xi32> {
  %y = graph.multinomial %x : (tensor<3xf32>) -> tensor<1x1xi32>
  func.return %y : tensor<1x1xi32>
}

// CHECK:      Operation does not verify: graph.multinomial: input must be a 2-D float tensor, got tensor<3xf32>
