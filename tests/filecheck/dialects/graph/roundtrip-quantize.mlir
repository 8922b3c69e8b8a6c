// RUN: ember-opt %s | filecheck %s
// RUN: ember-opt %s | ember-opt | filecheck %s

// Every op of ops_quantize.py: QuantizeLinear per tensor (the result takes
// the zero point's type; without one, uint8) and per axis; DequantizeLinear
// of int8 activations and of an int32 bias.

func.func @qdq(%x: tensor<1x3x4x4xf32>, %b: tensor<8xi32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xui8>, tensor<1x3x4x4xi8>, tensor<8xf32>) {
  %s = graph.constant dense<0.05> : tensor<f32>
  %z = graph.constant dense<-3> : tensor<i8>
  %sc = graph.constant dense<[0.01, 0.02, 0.04]> : tensor<3xf32>
  %zc = graph.constant dense<[0, 1, 2]> : tensor<3xi8>
  %q = graph.quantize_linear %x, %s, y_zero_point %z : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xi8>
  %u = graph.quantize_linear %x, %s : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xui8>
  %c = graph.quantize_linear %x, %sc, y_zero_point %zc {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x4x4xi8>
  %d = graph.dequantize_linear %q, %s, x_zero_point %z : (tensor<1x3x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xf32>
  %bias = graph.dequantize_linear %b, %s : (tensor<8xi32>, tensor<f32>) -> tensor<8xf32>
  func.return %d, %u, %c, %bias : tensor<1x3x4x4xf32>, tensor<1x3x4x4xui8>, tensor<1x3x4x4xi8>, tensor<8xf32>
}

// CHECK-LABEL: func.func @qdq(
// CHECK:         %q = graph.quantize_linear %x, %s, y_zero_point %z : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xi8>
// CHECK-NEXT:    %u = graph.quantize_linear %x, %s : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xui8>
// CHECK-NEXT:    %c = graph.quantize_linear %x, %sc, y_zero_point %zc {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x4x4xi8>
// CHECK-NEXT:    %d = graph.dequantize_linear %q, %s, x_zero_point %z : (tensor<1x3x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %bias = graph.dequantize_linear %b, %s : (tensor<8xi32>, tensor<f32>) -> tensor<8xf32>
