// RUN: ember-opt %s -p graph-fuse-qdq,dce | filecheck %s

// graph-fuse-qdq: DequantizeLinear -> Conv/MatMul/Gemm -> QuantizeLinear
// chains become quantised products, with every scale and zero point passed
// on and the int32 bias taken as it is. A Relu before a QuantizeLinear whose
// zero point is the type's lowest value is absorbed (saturation clamps
// there).

func.func @conv(%x: tensor<1x3x8x8xi8>) -> tensor<1x4x8x8xi8> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %zx = graph.constant dense<-3> : tensor<i8>
  %w = graph.constant dense<1> : tensor<4x3x3x3xi8>
  %sw = graph.constant dense<0.25> : tensor<f32>
  %zw = graph.constant dense<0> : tensor<i8>
  %b = graph.constant dense<7> : tensor<4xi32>
  %sb = graph.constant dense<0.125> : tensor<f32>
  %zb = graph.constant dense<0> : tensor<i32>
  %sy = graph.constant dense<2.0> : tensor<f32>
  %zy = graph.constant dense<-128> : tensor<i8>
  %dx = graph.dequantize_linear %x, %sx, x_zero_point %zx : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>) -> tensor<1x3x8x8xf32>
  %dw = graph.dequantize_linear %w, %sw, x_zero_point %zw : (tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<4x3x3x3xf32>
  %db = graph.dequantize_linear %b, %sb, x_zero_point %zb : (tensor<4xi32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  %c = graph.conv %dx, %dw, B %db {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %c : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = graph.quantize_linear %r, %sy, y_zero_point %zy : (tensor<1x4x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4x8x8xi8>
  func.return %y : tensor<1x4x8x8xi8>
}

// CHECK-LABEL: func.func @conv(
// CHECK-NOT:     graph.dequantize_linear
// CHECK:         %y = graph.qlinear_conv %x, %sx, %zx, %w, %sw, %zw, %sy, %zy, B %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<4xi32>) -> tensor<1x4x8x8xi8>
// CHECK-NEXT:    func.return %y

// A Gemm with a transposed weight quantised per output channel (B's axis 0)
// and a per-channel bias.
func.func @gemm(%a: tensor<2x6xi8>) -> tensor<2x3xi8> {
  %sa = graph.constant dense<0.5> : tensor<f32>
  %za = graph.constant dense<1> : tensor<i8>
  %w = graph.constant dense<1> : tensor<3x6xi8>
  %sw = graph.constant dense<[0.25, 0.5, 1.0]> : tensor<3xf32>
  %zw = graph.constant dense<0> : tensor<3xi8>
  %c = graph.constant dense<[1, 2, 3]> : tensor<3xi32>
  %sc = graph.constant dense<[0.125, 0.25, 0.5]> : tensor<3xf32>
  %sy = graph.constant dense<0.75> : tensor<f32>
  %zy = graph.constant dense<4> : tensor<i8>
  %da = graph.dequantize_linear %a, %sa, x_zero_point %za : (tensor<2x6xi8>, tensor<f32>, tensor<i8>) -> tensor<2x6xf32>
  %dw = graph.dequantize_linear %w, %sw, x_zero_point %zw {axis = 0 : i64} : (tensor<3x6xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x6xf32>
  %dc = graph.dequantize_linear %c, %sc {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  %g = graph.gemm %da, %dw, C %dc {transB = 1 : i64} : (tensor<2x6xf32>, tensor<3x6xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = graph.quantize_linear %g, %sy, y_zero_point %zy : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// CHECK-LABEL: func.func @gemm(
// CHECK:         %y = graph.qgemm %a, %sa, %za, %w, %sw, %zw, C %c, y_scale %sy, y_zero_point %zy {transB = 1 : i64}
// CHECK-NEXT:    func.return %y

func.func @matmul(%a: tensor<2x6xi8>) -> tensor<2x3xi8> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %w = graph.constant dense<1> : tensor<6x3xi8>
  %da = graph.dequantize_linear %a, %s, x_zero_point %z : (tensor<2x6xi8>, tensor<f32>, tensor<i8>) -> tensor<2x6xf32>
  %dw = graph.dequantize_linear %w, %s, x_zero_point %z : (tensor<6x3xi8>, tensor<f32>, tensor<i8>) -> tensor<6x3xf32>
  %m = graph.matmul %da, %dw : (tensor<2x6xf32>, tensor<6x3xf32>) -> tensor<2x3xf32>
  %y = graph.quantize_linear %m, %s, y_zero_point %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// CHECK-LABEL: func.func @matmul(
// CHECK:         %y = graph.qlinear_matmul %a, %s, %z, %w, %s, %z, %s, %z : (tensor<2x6xi8>, tensor<f32>, tensor<i8>, tensor<6x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>

// Must not fire: a Relu before a zero point that is not the lowest value
// (it would clamp values the Relu zeroes); the product's result used
// elsewhere too; a bias whose scale is not x_scale * w_scale; a weight
// quantised per axis along its input channels; an activation scale that is
// not a constant.
func.func @not_fused(%x: tensor<2x6xi8>, %sx_arg: tensor<f32>) -> (tensor<2x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xi8>) {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %w = graph.constant dense<1> : tensor<6x3xi8>
  %s6 = graph.constant dense<0.5> : tensor<6xf32>
  %z6 = graph.constant dense<0> : tensor<6xi8>
  %c = graph.constant dense<1> : tensor<3xi32>
  %dx = graph.dequantize_linear %x, %s, x_zero_point %z : (tensor<2x6xi8>, tensor<f32>, tensor<i8>) -> tensor<2x6xf32>
  %dw = graph.dequantize_linear %w, %s, x_zero_point %z : (tensor<6x3xi8>, tensor<f32>, tensor<i8>) -> tensor<6x3xf32>
  %m1 = graph.matmul %dx, %dw : (tensor<2x6xf32>, tensor<6x3xf32>) -> tensor<2x3xf32>
  %r1 = graph.relu %m1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %y1 = graph.quantize_linear %r1, %s, y_zero_point %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %m2 = graph.matmul %dx, %dw : (tensor<2x6xf32>, tensor<6x3xf32>) -> tensor<2x3xf32>
  %y2 = graph.quantize_linear %m2, %s, y_zero_point %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %dc = graph.dequantize_linear %c, %s : (tensor<3xi32>, tensor<f32>) -> tensor<3xf32>
  %g3 = graph.gemm %dx, %dw, C %dc : (tensor<2x6xf32>, tensor<6x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y3 = graph.quantize_linear %g3, %s, y_zero_point %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %dw4 = graph.dequantize_linear %w, %s6, x_zero_point %z6 {axis = 0 : i64} : (tensor<6x3xi8>, tensor<6xf32>, tensor<6xi8>) -> tensor<6x3xf32>
  %m4 = graph.matmul %dx, %dw4 : (tensor<2x6xf32>, tensor<6x3xf32>) -> tensor<2x3xf32>
  %y4 = graph.quantize_linear %m4, %s, y_zero_point %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %dx5 = graph.dequantize_linear %x, %sx_arg, x_zero_point %z : (tensor<2x6xi8>, tensor<f32>, tensor<i8>) -> tensor<2x6xf32>
  %m5 = graph.matmul %dx5, %dw : (tensor<2x6xf32>, tensor<6x3xf32>) -> tensor<2x3xf32>
  %y5 = graph.quantize_linear %m5, %s, y_zero_point %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y1, %m2, %y2, %y3, %y4, %y5 : tensor<2x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xi8>
}

// CHECK-LABEL: func.func @not_fused(
// CHECK-NOT:     graph.qlinear
// CHECK-NOT:     graph.qgemm
// CHECK:         %y1 = graph.quantize_linear %r1
// CHECK:         %y2 = graph.quantize_linear %m2
// CHECK:         %y3 = graph.quantize_linear %g3
// CHECK:         %y4 = graph.quantize_linear %m4
// CHECK:         %y5 = graph.quantize_linear %m5
// CHECK-NOT:     graph.qlinear
// CHECK:         func.return
