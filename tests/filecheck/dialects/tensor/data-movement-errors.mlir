// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @not_a_permutation(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty : tensor<3x2xf32>
  %t = tensor.transpose {permutation = array<i64: 1, 1>} ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %t : tensor<3x2xf32>
}
// CHECK: tensor.transpose: [1, 1] is not a permutation of 2 dims

// -----

func.func @wrong_transposed_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty : tensor<2x3xf32>
  %t = tensor.transpose {permutation = array<i64: 1, 0>} ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %t : tensor<2x3xf32>
}
// CHECK: tensor.transpose: (2, 3) permuted by [1, 0] is not (2, 3)

// -----

func.func @bad_broadcast(%v: tensor<3xf32>) -> tensor<4x5xf32> {
  %e = tensor.empty : tensor<4x5xf32>
  %b = tensor.broadcast {dimensions = array<i64: 0>} ins(%v : tensor<3xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %b : tensor<4x5xf32>
}
// CHECK: tensor.broadcast: (3,) does not broadcast to (4, 5) along [0]

// -----

func.func @bad_concat(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>) -> tensor<2x8xf32> {
  %c = tensor.concat %x, %y {dim = 1 : i64} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x8xf32>
  func.return %c : tensor<2x8xf32>
}
// CHECK: tensor.concat: [(2, 3), (3, 5)] do not concatenate to (2, 8) along 1

// -----

func.func @bad_reduce_kind(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<2xf32>
  %r = tensor.reduce {dimensions = array<i64: 1>, kind = "mean"} ins(%x : tensor<2x3xf32>) outs(%f : tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
// CHECK: tensor.reduce: kind must be one of ['add', 'max', 'min', 'mul'], got 'mean'

// -----

func.func @bad_reduce_shape(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<3xf32>
  %r = tensor.reduce {dimensions = array<i64: 1>, kind = "add"} ins(%x : tensor<2x3xf32>) outs(%f : tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
// CHECK: tensor.reduce: reducing (2, 3) over [1] does not give (3,)
