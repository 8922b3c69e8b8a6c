// RUN: ember-opt %s | ember-opt | filecheck %s

// The random ops (ops_random.py): RandomUniform and RandomNormal of a
// `shape` in `dtype` (an ONNX type number; 1: f32, 11: f64), their Like
// forms of the input's shape, and Bernoulli of the probabilities' shape in
// `dtype` (7: i64) or their type.

func.func @random(%x: tensor<2x3xf16>, %p: tensor<4xf32>) -> (tensor<2x3xf64>, tensor<2x3xf16>, tensor<5xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<4xf32>) {
  %u = graph.random_uniform {dtype = 11 : i64, high = 3.0 : f32, low = -1.0 : f32, seed = 2.0 : f32, shape = array<i64: 2, 3>} : () -> tensor<2x3xf64>
  %ul = graph.random_uniform_like %x : (tensor<2x3xf16>) -> tensor<2x3xf16>
  %n = graph.random_normal {mean = 1.0 : f32, scale = 2.0 : f32, shape = array<i64: 5>} : () -> tensor<5xf32>
  %nl = graph.random_normal_like %x {dtype = 1 : i64, seed = 7.0 : f32} : (tensor<2x3xf16>) -> tensor<2x3xf32>
  %b = graph.bernoulli %p {dtype = 7 : i64} : (tensor<4xf32>) -> tensor<4xi64>
  %bp = graph.bernoulli %p {seed = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %u, %ul, %n, %nl, %b, %bp : tensor<2x3xf64>, tensor<2x3xf16>, tensor<5xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<4xf32>
}

// CHECK-LABEL: func.func @random
// CHECK-NEXT: %u = graph.random_uniform {dtype = 11 : i64, high = 3.000000e+00 : f32, low = -1.000000e+00 : f32, seed = 2.000000e+00 : f32, shape = array<i64: 2, 3>} : () -> tensor<2x3xf64>
// CHECK-NEXT: %ul = graph.random_uniform_like %x : (tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK-NEXT: %n = graph.random_normal {mean = 1.000000e+00 : f32, scale = 2.000000e+00 : f32, shape = array<i64: 5>} : () -> tensor<5xf32>
// CHECK-NEXT: %nl = graph.random_normal_like %x {dtype = 1 : i64, seed = 7.000000e+00 : f32} : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK-NEXT: %b = graph.bernoulli %p {dtype = 7 : i64} : (tensor<4xf32>) -> tensor<4xi64>
// CHECK-NEXT: %bp = graph.bernoulli %p {seed = 1.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>

// Multinomial: sample_size classes per row of logits, in dtype (7: i64).
func.func @multinomial(%x: tensor<2x3xf32>) -> tensor<2x4xi64> {
  %y = graph.multinomial %x {dtype = 7 : i64, sample_size = 4 : i64, seed = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x4xi64>
  func.return %y : tensor<2x4xi64>
}

// CHECK-LABEL: func.func @multinomial
// CHECK-NEXT: %y = graph.multinomial %x {dtype = 7 : i64, sample_size = 4 : i64, seed = 1.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x4xi64>
