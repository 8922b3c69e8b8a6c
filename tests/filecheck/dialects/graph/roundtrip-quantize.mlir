// RUN: ember-opt %s | ember-opt | filecheck %s

// Every op of ops_quantize.py: QuantizeLinear per tensor (the result takes
// the zero point's type; without one, uint8) and per axis; DequantizeLinear
// of int8 activations and of an int32 bias; DynamicQuantizeLinear. And the
// integer products of ops_qlinear.py, with and without zero points.

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

func.func @integer(%x: tensor<1x3x5x5xui8>, %w: tensor<4x3x3x3xi8>, %a: tensor<2x4x6xi8>, %b: tensor<6x5xi8>, %f: tensor<2x7xf32>) -> (tensor<1x4x5x5xi32>, tensor<1x4x3x3xi32>, tensor<2x4x5xi32>, tensor<2x4x5xi32>, tensor<2x7xui8>, tensor<f32>, tensor<ui8>) {
  %xz = graph.constant dense<7> : tensor<ui8>
  %wz = graph.constant dense<[1, -2, 0, 3]> : tensor<4xi8>
  %az = graph.constant dense<[1, 2, 3, 4]> : tensor<4xi8>
  %bz = graph.constant dense<-1> : tensor<5xi8>
  %c = graph.conv_integer %x, %w, x_zero_point %xz, w_zero_point %wz {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<1x4x5x5xi32>
  %c0 = graph.conv_integer %x, %w : (tensor<1x3x5x5xui8>, tensor<4x3x3x3xi8>) -> tensor<1x4x3x3xi32>
  %m = graph.matmul_integer %a, %b, a_zero_point %az, b_zero_point %bz : (tensor<2x4x6xi8>, tensor<6x5xi8>, tensor<4xi8>, tensor<5xi8>) -> tensor<2x4x5xi32>
  %m0 = graph.matmul_integer %a, %b : (tensor<2x4x6xi8>, tensor<6x5xi8>) -> tensor<2x4x5xi32>
  %y, %s, %z = graph.dynamic_quantize_linear %f : (tensor<2x7xf32>) -> (tensor<2x7xui8>, tensor<f32>, tensor<ui8>)
  func.return %c, %c0, %m, %m0, %y, %s, %z : tensor<1x4x5x5xi32>, tensor<1x4x3x3xi32>, tensor<2x4x5xi32>, tensor<2x4x5xi32>, tensor<2x7xui8>, tensor<f32>, tensor<ui8>
}

// CHECK-LABEL: func.func @integer(
// CHECK:         %c = graph.conv_integer %x, %w, x_zero_point %xz, w_zero_point %wz {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<1x4x5x5xi32>
// CHECK-NEXT:    %c0 = graph.conv_integer %x, %w : (tensor<1x3x5x5xui8>, tensor<4x3x3x3xi8>) -> tensor<1x4x3x3xi32>
// CHECK-NEXT:    %m = graph.matmul_integer %a, %b, a_zero_point %az, b_zero_point %bz : (tensor<2x4x6xi8>, tensor<6x5xi8>, tensor<4xi8>, tensor<5xi8>) -> tensor<2x4x5xi32>
// CHECK-NEXT:    %m0 = graph.matmul_integer %a, %b : (tensor<2x4x6xi8>, tensor<6x5xi8>) -> tensor<2x4x5xi32>
// CHECK-NEXT:    %y, %s, %z = graph.dynamic_quantize_linear %f : (tensor<2x7xf32>) -> (tensor<2x7xui8>, tensor<f32>, tensor<ui8>)
