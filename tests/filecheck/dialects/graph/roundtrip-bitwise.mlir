// RUN: ember-opt %s | ember-opt | filecheck %s

// The bitwise ops (integers only, broadcasting), BitShift (direction), BitCast
// (a reinterpretation to a type of the same size), IsInf, Swish, Shrink (any
// numeric type) and the inverse hyperbolic functions.

func.func @bitwise(%a: tensor<3x4xi32>, %b: tensor<4xi32>, %u: tensor<3xui8>, %s: tensor<3xui8>, %x: tensor<2x3xf32>, %k: tensor<2xi16>) -> (tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3xui8>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xi16>) {
  %and = graph.bitwise_and %a, %b : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %or = graph.bitwise_or %a, %b : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %xor = graph.bitwise_xor %a, %b : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  %not = graph.bitwise_not %a : (tensor<3x4xi32>) -> tensor<3x4xi32>
  %shift = graph.bit_shift %u, %s {direction = "RIGHT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %bits = graph.bit_cast %x {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %inf = graph.is_inf %x {detect_negative = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %swish = graph.swish %x {alpha = 5.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %shrink = graph.shrink %x {bias = 1.000000e+00 : f32, lambd = 1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %acosh = graph.acosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %shrink_int = graph.shrink %k : (tensor<2xi16>) -> tensor<2xi16>
  func.return %and, %or, %xor, %not, %shift, %bits, %inf, %swish, %shrink, %acosh, %shrink_int : tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3xui8>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xi16>
}

// CHECK:      %and = graph.bitwise_and %a, %b : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %or = graph.bitwise_or %a, %b : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %xor = graph.bitwise_xor %a, %b : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %not = graph.bitwise_not %a : (tensor<3x4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %shift = graph.bit_shift %u, %s {direction = "RIGHT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
// CHECK-NEXT: %bits = graph.bit_cast %x {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT: %inf = graph.is_inf %x {detect_negative = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %swish = graph.swish %x {alpha = 5.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %shrink = graph.shrink %x {bias = 1.000000e+00 : f32, lambd = 1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %acosh = graph.acosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %shrink_int = graph.shrink %k : (tensor<2xi16>) -> tensor<2xi16>
