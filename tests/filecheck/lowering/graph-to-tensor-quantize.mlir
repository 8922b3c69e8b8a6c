// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// convert-graph-to-tensor on QuantizeLinear and DequantizeLinear: one
// all-parallel generic each. A per-axis scale and zero point are reshaped
// to broadcast along the axis ([3] -> [3, 1] for axis 1 of a rank-3 input);
// quantisation divides, rounds half to even, adds the zero point, clamps to
// the result type and converts; dequantisation subtracts the zero point in
// i32 before converting and scaling.

func.func @quantize_per_axis(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xi8> {
  %s = graph.constant dense<[0.01, 0.02, 0.04]> : tensor<3xf32>
  %z = graph.constant dense<[0, 1, 2]> : tensor<3xi8>
  %q = graph.quantize_linear %x, %s, y_zero_point %z {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3x4xi8>
  func.return %q : tensor<2x3x4xi8>
}
func.func @dequantize(%x: tensor<2x3x4xui8>) -> tensor<2x3x4xf32> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<128> : tensor<ui8>
  %y = graph.dequantize_linear %x, %s, x_zero_point %z : (tensor<2x3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @quantize_per_axis(
// CHECK:         %[[S:.*]] = tensor.reshape %s({{.*}}) : (tensor<3xf32>, tensor<2xi64>) -> tensor<3x1xf32>
// CHECK:         %[[Z:.*]] = tensor.reshape %z({{.*}}) : (tensor<3xi8>, tensor<2xi64>) -> tensor<3x1xi8>
// CHECK:         %q = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %[[S]], %[[Z]] : tensor<2x3x4xf32>, tensor<3x1xf32>, tensor<3x1xi8>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT:      %[[D:.*]] = arith.divf %[[X]], %[[SC]] : f32
// CHECK-NEXT:      %[[R:.*]] = math.roundeven %[[D]] : f32
// CHECK-NEXT:      %[[ZF:.*]] = arith.sitofp %[[ZP]] : i8 to f32
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[R]], %[[ZF]] : f32
// CHECK-NEXT:      %[[LO:.*]] = arith.constant -1.280000e+02 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[A]], %[[LO]] : f32
// CHECK-NEXT:      %[[HI:.*]] = arith.constant 1.270000e+02 : f32
// CHECK-NEXT:      %{{.*}} = arith.minimumf %[[M]], %[[HI]] : f32
// CHECK:           arith.fptosi
// CHECK:           arith.trunci %{{.*}} : i32 to i8

// CHECK-LABEL: func.func @dequantize(
// CHECK:         ^bb0(%[[Q:.*]]: ui8, %[[SC:.*]]: f32, %[[ZP:.*]]: ui8, %{{.*}}: f32):
// CHECK-NEXT:      %[[QI:.*]] = arith.extui %[[Q]] : ui8 to i32
// CHECK-NEXT:      %[[ZI:.*]] = arith.extui %[[ZP]] : ui8 to i32
// CHECK-NEXT:      %[[DIFF:.*]] = arith.subi %[[QI]], %[[ZI]] : i32
// CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[DIFF]] : i32 to f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
