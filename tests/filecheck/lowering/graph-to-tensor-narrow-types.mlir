// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// convert-graph-to-tensor on the narrow types (docs/types.md). A cast to a
// float8 type is integer arithmetic on the f32's bits (float_conversions.py):
// round to nearest even, then (saturate = 0) NaN for what overflows
// f8E4M3FN, and an `arith.bitcast` of the byte to the float8 type. A bf16 is
// the top half of an f32. Blocked dequantisation reads the scale and zero
// point through a map dividing the blocked index by block_size.

func.func @to_float8(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %y = graph.cast %x {to = f8E4M3FN, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  func.return %y : tensor<4xf8E4M3FN>
}
func.func @from_bfloat16(%x: tensor<4xbf16>) -> tensor<4xf32> {
  %y = graph.cast %x {to = f32} : (tensor<4xbf16>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @dequantize_blocked(%x: tensor<2x6xi4>) -> tensor<2x6xf32> {
  %s = graph.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %z = graph.constant dense<[[1, -1], [0, 7]]> : tensor<2x2xi4>
  %y = graph.dequantize_linear %x, %s, x_zero_point %z {axis = 1 : i64, block_size = 3 : i64} : (tensor<2x6xi4>, tensor<2x2xf32>, tensor<2x2xi4>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}

// CHECK-LABEL: func.func @to_float8(
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f8E4M3FN):
// CHECK-NEXT:      %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// The exponent rebiased from f32's 127 to f8E4M3FN's 7:
// CHECK:           arith.constant -120 : i32
// Rounded to nearest even: (value + half - 1 + odd) >> shift.
// CHECK:           %[[ODD:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
// CHECK:           %[[UP:.*]] = arith.addi %{{.*}}, %[[ODD]] : i32
// CHECK-NEXT:      %[[ROUNDED:.*]] = arith.shrui %[[UP]], %{{.*}} : i32
// Above the largest finite magnitude (0x7E = 448) or infinite: NaN (0x7F).
// CHECK-NEXT:      %[[MAX:.*]] = arith.constant 126 : i32
// CHECK-NEXT:      %[[BIG:.*]] = arith.cmpi ugt, %[[ROUNDED]], %[[MAX]] : i32
// CHECK-NEXT:      %[[OVER:.*]] = arith.ori %{{.*}}, %[[BIG]] : i1
// CHECK-NEXT:      %[[NAN:.*]] = arith.constant 127 : i32
// CHECK-NEXT:      arith.select %[[OVER]], %[[NAN]], %[[ROUNDED]] : i32
// CHECK:           %[[BYTE:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK-NEXT:      %[[F8:.*]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
// CHECK-NEXT:      linalg.yield %[[F8]] : f8E4M3FN

// CHECK-LABEL: func.func @from_bfloat16(
// CHECK:         ^bb0(%[[B:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT:      %[[I16:.*]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK-NEXT:      %[[I32:.*]] = arith.extui %[[I16]] : i16 to i32
// CHECK-NEXT:      %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK-NEXT:      %[[TOP:.*]] = arith.shli %[[I32]], %[[SIXTEEN]] : i32
// CHECK-NEXT:      %[[F:.*]] = arith.bitcast %[[TOP]] : i32 to f32
// CHECK-NEXT:      linalg.yield %[[F]] : f32

// CHECK-LABEL: func.func @dequantize_blocked(
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, (d1 floordiv 3))>, affine_map<(d0, d1) -> (d0, (d1 floordiv 3))>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s, %z : tensor<2x6xi4>, tensor<2x2xf32>, tensor<2x2xi4>)
// CHECK-NEXT:    ^bb0(%[[Q:.*]]: i4, %[[SC:.*]]: f32, %[[ZP:.*]]: i4, %{{.*}}: f32):
// CHECK-NEXT:      %[[QI:.*]] = arith.extsi %[[Q]] : i4 to i32
// CHECK-NEXT:      %[[ZI:.*]] = arith.extsi %[[ZP]] : i4 to i32
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[QI]], %[[ZI]] : i32
// CHECK-NEXT:      %[[DF:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[DF]], %[[SC]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
