// RUN: ember-opt %s -p graph-expand-qlinear | filecheck %s

// graph-expand-qlinear: quantised products back into QDQ chains for the CPU
// pipeline. The bias dequantises with x_scale * w_scale (here 0.5 * 0.25,
// or per channel); QGemm without y_scale ends at the Gemm.

func.func @conv(%x: tensor<1x3x8x8xi8>) -> tensor<1x4x8x8xi8> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %zx = graph.constant dense<-3> : tensor<i8>
  %w = graph.constant dense<1> : tensor<4x3x3x3xi8>
  %sw = graph.constant dense<0.25> : tensor<f32>
  %zw = graph.constant dense<0> : tensor<i8>
  %b = graph.constant dense<7> : tensor<4xi32>
  %sy = graph.constant dense<2.0> : tensor<f32>
  %zy = graph.constant dense<-128> : tensor<i8>
  %y = graph.qlinear_conv %x, %sx, %zx, %w, %sw, %zw, %sy, %zy, B %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<4xi32>) -> tensor<1x4x8x8xi8>
  func.return %y : tensor<1x4x8x8xi8>
}

// CHECK-LABEL: func.func @conv(
// CHECK:         %[[X:.*]] = graph.dequantize_linear %x, %sx, x_zero_point %zx {axis = 1 : i64} : {{.*}} -> tensor<1x3x8x8xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.dequantize_linear %w, %sw, x_zero_point %zw {axis = 0 : i64} : {{.*}} -> tensor<4x3x3x3xf32>
// CHECK-NEXT:    %[[SB:.*]] = graph.constant dense<1.250000e-01> : tensor<1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.dequantize_linear %b, %[[SB]] {axis = 0 : i64} : (tensor<4xi32>, tensor<1xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv %[[X]], %[[W]], B %[[B]] {pads = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:    %y = graph.quantize_linear %[[C]], %sy, y_zero_point %zy : (tensor<1x4x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4x8x8xi8>
// CHECK-NEXT:    func.return %y

func.func @qgemm_float(%a: tensor<2x6xui8>) -> tensor<2x3xf32> {
  %sa = graph.constant dense<0.5> : tensor<f32>
  %za = graph.constant dense<128> : tensor<ui8>
  %w = graph.constant dense<1> : tensor<3x6xi8>
  %sw = graph.constant dense<[0.25, 0.5, 1.0]> : tensor<3xf32>
  %zw = graph.constant dense<0> : tensor<3xi8>
  %y = graph.qgemm %a, %sa, %za, %w, %sw, %zw {transB = 1 : i64, alpha = 2.0 : f32} : (tensor<2x6xui8>, tensor<f32>, tensor<ui8>, tensor<3x6xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @qgemm_float(
// CHECK:         %[[W:.*]] = graph.dequantize_linear %w, %sw, x_zero_point %zw {axis = 0 : i64}
// CHECK-NEXT:    %y = graph.gemm %{{.*}}, %[[W]] {transB = 1 : i64, alpha = 2.000000e+00 : f32} : (tensor<2x6xf32>, tensor<3x6xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %y

// The integer products stay in integers: operands cast to i32 less their
// zero points (a constant one folded and shaped to broadcast along its
// axis, one of 0 left out), then the i32 Conv or MatMul.

func.func @conv_integer(%x: tensor<1x3x5x5xui8>, %w: tensor<4x3x3x3xi8>) -> tensor<1x4x5x5xi32> {
  %xz = graph.constant dense<7> : tensor<ui8>
  %wz = graph.constant dense<[1, -2, 0, 3]> : tensor<4xi8>
  %y = graph.conv_integer %x, %w, x_zero_point %xz, w_zero_point %wz {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<1x4x5x5xi32>
  func.return %y : tensor<1x4x5x5xi32>
}

// CHECK-LABEL: func.func @conv_integer(
// CHECK:         %[[X:.*]] = graph.cast %x {to = i32} : (tensor<1x3x5x5xui8>) -> tensor<1x3x5x5xi32>
// CHECK-NEXT:    %[[XZ:.*]] = graph.constant dense<7> : tensor<i32>
// CHECK-NEXT:    %[[XC:.*]] = graph.sub %[[X]], %[[XZ]] : (tensor<1x3x5x5xi32>, tensor<i32>) -> tensor<1x3x5x5xi32>
// CHECK-NEXT:    %[[W:.*]] = graph.cast %w {to = i32} : (tensor<4x3x3x3xi8>) -> tensor<4x3x3x3xi32>
// CHECK-NEXT:    %[[WZ:.*]] = graph.constant dense<{{\[\[\[\[}}1]]], {{\[\[\[}}-2]]], {{\[\[\[}}0]]], {{\[\[\[}}3]]]]> : tensor<4x1x1x1xi32>
// CHECK-NEXT:    %[[WC:.*]] = graph.sub %[[W]], %[[WZ]] : (tensor<4x3x3x3xi32>, tensor<4x1x1x1xi32>) -> tensor<4x3x3x3xi32>
// CHECK-NEXT:    %y = graph.conv %[[XC]], %[[WC]] {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xi32>, tensor<4x3x3x3xi32>) -> tensor<1x4x5x5xi32>
// CHECK-NEXT:    func.return %y

func.func @matmul_integer(%a: tensor<2x4x6xi8>, %b: tensor<6x5xui8>, %az: tensor<4xi8>) -> tensor<2x4x5xi32> {
  %bz = graph.constant dense<0> : tensor<ui8>
  %y = graph.matmul_integer %a, %b, a_zero_point %az, b_zero_point %bz : (tensor<2x4x6xi8>, tensor<6x5xui8>, tensor<4xi8>, tensor<ui8>) -> tensor<2x4x5xi32>
  func.return %y : tensor<2x4x5xi32>
}

// CHECK-LABEL: func.func @matmul_integer(
// CHECK:         %[[A:.*]] = graph.cast %a {to = i32} : (tensor<2x4x6xi8>) -> tensor<2x4x6xi32>
// CHECK-NEXT:    %[[AZ:.*]] = graph.cast %az {to = i32} : (tensor<4xi8>) -> tensor<4xi32>
// CHECK-NEXT:    %[[SHAPE:.*]] = graph.constant dense<[4, 1]> : tensor<2xi64>
// CHECK-NEXT:    %[[ROWS:.*]] = graph.reshape %[[AZ]], %[[SHAPE]] : (tensor<4xi32>, tensor<2xi64>) -> tensor<4x1xi32>
// CHECK-NEXT:    %[[AC:.*]] = graph.sub %[[A]], %[[ROWS]] : (tensor<2x4x6xi32>, tensor<4x1xi32>) -> tensor<2x4x6xi32>
// CHECK-NEXT:    %[[B:.*]] = graph.cast %b {to = i32} : (tensor<6x5xui8>) -> tensor<6x5xi32>
// CHECK-NEXT:    %y = graph.matmul %[[AC]], %[[B]] : (tensor<2x4x6xi32>, tensor<6x5xi32>) -> tensor<2x4x5xi32>
// CHECK-NEXT:    func.return %y

// DynamicQuantizeLinear: ONNX's function body, with a scale of 1 when the
// range (widened to hold 0) is empty.

func.func @dynamic_quantize_linear(%x: tensor<2x7xf32>) -> (tensor<2x7xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = graph.dynamic_quantize_linear %x : (tensor<2x7xf32>) -> (tensor<2x7xui8>, tensor<f32>, tensor<ui8>)
  func.return %y, %s, %z : tensor<2x7xui8>, tensor<f32>, tensor<ui8>
}

// CHECK-LABEL: func.func @dynamic_quantize_linear(
// CHECK:         %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[QMAX:.*]] = graph.constant dense<2.550000e+02> : tensor<f32>
// CHECK-NEXT:    %[[MIN:.*]] = graph.reduce_min %x {keepdims = 0 : i64} : (tensor<2x7xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[LO:.*]] = graph.min %[[MIN]], %[[ZERO]]
// CHECK-NEXT:    %[[MAX:.*]] = graph.reduce_max %x {keepdims = 0 : i64} : (tensor<2x7xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[HI:.*]] = graph.max %[[MAX]], %[[ZERO]]
// CHECK-NEXT:    %[[RANGE:.*]] = graph.sub %[[HI]], %[[LO]]
// CHECK-NEXT:    %[[SPREAD:.*]] = graph.div %[[RANGE]], %[[QMAX]]
// CHECK-NEXT:    %[[FLAT:.*]] = graph.equal %[[HI]], %[[LO]] : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:    %s = graph.where %[[FLAT]], %[[ONE]], %[[SPREAD]]
// CHECK-NEXT:    %[[SCALED:.*]] = graph.div %[[LO]], %s
// CHECK-NEXT:    %[[POINT:.*]] = graph.sub %[[ZERO]], %[[SCALED]]
// CHECK-NEXT:    %[[CLIPPED:.*]] = graph.clip %[[POINT]], min %[[ZERO]], max %[[QMAX]]
// CHECK-NEXT:    %[[ROUNDED:.*]] = graph.round %[[CLIPPED]]
// CHECK-NEXT:    %z = graph.cast %[[ROUNDED]] {to = ui8} : (tensor<f32>) -> tensor<ui8>
// CHECK-NEXT:    %y = graph.quantize_linear %x, %s, y_zero_point %z : (tensor<2x7xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x7xui8>
// CHECK-NEXT:    func.return %y, %s, %z
