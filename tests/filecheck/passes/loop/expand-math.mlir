// RUN: ember-opt %s -p loop-expand-math --split-input-file | filecheck %s

// exp: clamp (NaN-propagating), n = round(x log2 e) by the 1.5 * 2^23 trick,
// r = x - n ln2 in two parts, 1 + r + r^2 P(r) (contractible into fmas),
// then two exponent-bit scale factors. No call remains.
func.func @exp(%x: f32) -> f32 {
  %y = math.exp %x : f32
  func.return %y : f32
}

// CHECK-LABEL: func.func @exp
// CHECK-NOT:     math.exp
// CHECK:         %[[LOW:.*]] = arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[A:.*]] = arith.maximumf %x, %[[LOW]] : f32
// CHECK-NEXT:    %[[HIGH:.*]] = arith.constant 8.900000e+01 : f32
// CHECK-NEXT:    %[[C:.*]] = arith.minimumf %[[A]], %[[HIGH]] : f32
// At the lowest x, e^x is computed from 0 and replaced by 0 (no product underflows).
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[LOW2:.*]] = arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[UNDER:.*]] = arith.cmpf ole, %[[C]], %[[LOW2]] : f32
// CHECK-NEXT:    %{{.*}} = arith.select %[[UNDER]], %[[ZERO]], %[[C]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.constant 0x4B400000 : f32
// CHECK:         %[[T:.*]] = arith.addf %{{.*}}, %[[R]] : f32
// CHECK-NEXT:    %[[NF:.*]] = arith.subf %[[T]], %[[R]] : f32
// CHECK-NEXT:    %[[TB:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK-NEXT:    %[[RB:.*]] = arith.bitcast %[[R]] : f32 to i32
// CHECK-NEXT:    %[[N:.*]] = arith.subi %[[TB]], %[[RB]] : i32
// CHECK:         arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:         %[[HALF:.*]] = arith.shrsi %[[N]], %{{.*}} : i32
// CHECK-NEXT:    %[[REST:.*]] = arith.subi %[[N]], %[[HALF]] : i32
// CHECK:         arith.shli
// CHECK-NEXT:    arith.bitcast %{{.*}} : i32 to f32
// CHECK:         arith.shli
// CHECK-NEXT:    arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    %[[SCALED:.*]] = arith.mulf
// CHECK-NEXT:    %y = arith.select %[[UNDER]], %[[ZERO]], %[[SCALED]] : f32
// CHECK-NEXT:    func.return %y : f32

// -----

// tanh: the small-argument polynomial or 1 - 2 / (e^2|x| + 1), picked by
// |x| < 0.625, with x's sign (tanh(-0) is -0); erf: a clamp to [-4, 4], then x * N(x^2) / D(x^2).
func.func @tanh_erf(%x: f32) -> (f32, f32) {
  %t = math.tanh %x : f32
  %e = math.erf %x : f32
  func.return %t, %e : f32, f32
}

// CHECK-LABEL: func.func @tanh_erf
// CHECK-NOT:     math.tanh
// CHECK:         %[[ABS:.*]] = math.absf %x : f32
// CHECK:         arith.divf
// CHECK-NEXT:    %[[LARGE:.*]] = arith.subf
// CHECK-NEXT:    %[[BOUND:.*]] = arith.constant 6.250000e-01 : f32
// CHECK-NEXT:    %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[BOUND]] : f32
// CHECK-NEXT:    %[[PICK:.*]] = arith.select %[[SMALL]], %{{.*}}, %[[LARGE]] : f32
// CHECK-NEXT:    %t = math.copysign %[[PICK]], %x : f32
// CHECK-NOT:     math.erf
// CHECK:         arith.constant -4.000000e+00 : f32
// CHECK-NEXT:    arith.maximumf %x
// CHECK-NEXT:    arith.constant 4.000000e+00 : f32
// CHECK-NEXT:    arith.minimumf
// CHECK:         %[[RATIO:.*]] = arith.divf
// CHECK-NEXT:    %e = arith.mulf %{{.*}}, %[[RATIO]] : f32
// CHECK-NEXT:    func.return %t, %e : f32, f32

// -----

// powf by a constant 2, 3 or 4 (an arith.constant or a one-element weight,
// as an ONNX Pow's initializer arrives): products.
func.func @powers(%x: f32) -> (f32, f32, f32) {
  %two = arith.constant 2.0 : f32
  %three = "loop.weight"() <{value = dense<3.0> : tensor<f32>}> : () -> memref<f32>
  %four = "loop.weight"() <{value = dense<4.0> : tensor<1xf32>}> : () -> memref<1xf32>
  %c0 = arith.constant 0 : index
  %e3 = memref.load %three[] : memref<f32>
  %e4 = memref.load %four[%c0] : memref<1xf32>
  %s = math.powf %x, %two : f32
  %c = math.powf %x, %e3 : f32
  %q = math.powf %x, %e4 : f32
  func.return %s, %c, %q : f32, f32, f32
}

// CHECK-LABEL: func.func @powers
// CHECK-NOT:     math.powf
// CHECK:         %s = arith.mulf %x, %x : f32
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %x, %x : f32
// CHECK-NEXT:    %c = arith.mulf %[[SQ]], %x : f32
// CHECK-NEXT:    %[[SQ2:.*]] = arith.mulf %x, %x : f32
// CHECK-NEXT:    %q = arith.mulf %[[SQ2]], %[[SQ2]] : f32

// -----

// powf by 0.5 and 0.75 (LRN's beta): square roots, -inf selected apart
// (pow gives +inf there, a square root NaN); sqrt(x) + 0 turns sqrt(-0) = -0
// into pow's +0.
func.func @roots(%x: f32) -> (f32, f32) {
  %half = arith.constant 0.5 : f32
  %beta = arith.constant 0.75 : f32
  %r = math.powf %x, %half : f32
  %b = math.powf %x, %beta : f32
  func.return %r, %b : f32, f32
}

// CHECK-LABEL: func.func @roots
// CHECK-NOT:     math.powf
// CHECK:         %[[S:.*]] = math.sqrt %x : f32
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[P:.*]] = arith.addf %[[S]], %[[Z]] : f32
// CHECK-NEXT:    %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[IS:.*]] = arith.cmpf oeq, %x, %[[NINF]] : f32
// CHECK-NEXT:    %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:    %r = arith.select %[[IS]], %[[INF]], %[[P]] : f32
// CHECK-NEXT:    %[[H:.*]] = math.sqrt %x : f32
// CHECK-NEXT:    %[[Q:.*]] = math.sqrt %[[H]] : f32
// CHECK-NEXT:    %[[HQ:.*]] = arith.mulf %[[H]], %[[Q]] : f32
// CHECK:         %b = arith.select %{{.*}}, %{{.*}}, %[[HQ]] : f32

// -----

// Must not fire: f64 and f16 (libm keeps its precision), a vector operand,
// other math ops, powf by a non-integer constant, by a run-time value or
// by a weight of several elements.
func.func @kept(%d: f64, %h: f16, %v: vector<4xf32>, %x: f32, %y: f32, %i: index) -> (f64, f16, vector<4xf32>, f32, f32, f32, f32, f32) {
  %a = math.exp %d : f64
  %b = math.tanh %h : f16
  %c = math.exp %v : vector<4xf32>
  %s = math.sin %x : f32
  %half = arith.constant 2.5 : f32
  %p = math.powf %x, %half : f32
  %q = math.powf %x, %y : f32
  %w = "loop.weight"() <{value = dense<[3.0, 2.0]> : tensor<2xf32>}> : () -> memref<2xf32>
  %e = memref.load %w[%i] : memref<2xf32>
  %r = math.powf %x, %e : f32
  func.return %a, %b, %c, %s, %p, %q, %r, %x : f64, f16, vector<4xf32>, f32, f32, f32, f32, f32
}

// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %a = math.exp %d : f64
// CHECK-NEXT:    %b = math.tanh %h : f16
// CHECK-NEXT:    %c = math.exp %v : vector<4xf32>
// CHECK-NEXT:    %s = math.sin %x : f32
// CHECK-NEXT:    %half = arith.constant 2.500000e+00 : f32
// CHECK-NEXT:    %p = math.powf %x, %half : f32
// CHECK-NEXT:    %q = math.powf %x, %y : f32
// CHECK:         %r = math.powf %x, %e : f32

// -----

// In a kernel function the exponent is an argument: where every call passes
// a one-element weight of one value (3), the power is that constant's; where
// the calls pass two values, pow stays a call.
func.func @calls(%x: memref<4xf32>, %y: memref<4xf32>) {
  %three = "loop.weight"() <{value = dense<3.0> : tensor<1xf32>}> : () -> memref<1xf32>
  %also_three = "loop.weight"() <{value = dense<3.0> : tensor<1xf32>}> : () -> memref<1xf32>
  %two = "loop.weight"() <{value = dense<2.0> : tensor<1xf32>}> : () -> memref<1xf32>
  func.call @same(%x, %three, %y) : (memref<4xf32>, memref<1xf32>, memref<4xf32>) -> ()
  func.call @same(%x, %also_three, %y) : (memref<4xf32>, memref<1xf32>, memref<4xf32>) -> ()
  func.call @differ(%x, %three, %y) : (memref<4xf32>, memref<1xf32>, memref<4xf32>) -> ()
  func.call @differ(%x, %two, %y) : (memref<4xf32>, memref<1xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @same(%x: memref<4xf32>, %n: memref<1xf32>, %y: memref<4xf32>) attributes {ember.kernel} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %e = memref.load %n[%c0] : memref<1xf32>
  %p = math.powf %v, %e : f32
  memref.store %p, %y[%c0] : memref<4xf32>
  func.return
}
func.func private @differ(%x: memref<4xf32>, %n: memref<1xf32>, %y: memref<4xf32>) attributes {ember.kernel} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %e = memref.load %n[%c0] : memref<1xf32>
  %p = math.powf %v, %e : f32
  memref.store %p, %y[%c0] : memref<4xf32>
  func.return
}
// CHECK-LABEL: func.func private @same
// CHECK-NOT:     math.powf
// CHECK:         arith.mulf
// CHECK:         func.return
// CHECK-LABEL: func.func private @differ
// CHECK:         math.powf
