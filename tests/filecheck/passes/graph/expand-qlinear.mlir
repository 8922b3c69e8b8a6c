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
