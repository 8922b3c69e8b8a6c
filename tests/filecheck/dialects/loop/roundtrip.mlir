// RUN: ember-opt %s | filecheck %s
// RUN: ember-opt %s | ember-opt | filecheck %s
// RUN: ember-opt %s --print-op-generic | ember-opt | filecheck %s

// Every op of the loop dialect prints in its custom form and parses back to
// the same text, also from the generic form (loop.yield is implicit in the
// custom form of loop.for and restored by its parser).

// loop.for: parallel and sequential, step 2, an empty body, attributes after
// the body. loop.alloc with and without an arena offset, loop.weight with and
// without a blob offset, loop.reshape views (the second one changes the
// element type, same bytes).
func.func @loops(%in: memref<4x8xf32>, %out0: memref<32xf32>) {
  %w = loop.weight dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32> -> memref<8xf32>
  %z = loop.weight dense<0> : tensor<2x2xi32> at 64 -> memref<2x2xi32>
  %buf = loop.alloc : memref<4x8xf32>
  %placed = loop.alloc {offset = 128 : i64} : memref<16xi8>
  loop.for %i = 0 to 4 step 1 parallel {
    loop.for %j = 0 to 8 step 2 {
      %x = memref.load %in[%i, %j] : memref<4x8xf32>
      %y = memref.load %w[%j] : memref<8xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %buf[%i, %j] : memref<4x8xf32>
    }
  } {tile = 4 : i64}
  loop.for %k = 2 to 2 step 3 {
  }
  %flat = loop.reshape %buf : memref<4x8xf32> -> memref<32xf32>
  %bytes = loop.reshape %placed : memref<16xi8> -> memref<4xi32>
  func.return
}

// CHECK-LABEL: func.func @loops(%in: memref<4x8xf32>, %out0: memref<32xf32>) {
// CHECK-NEXT:    %w = loop.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32> -> memref<8xf32>
// CHECK-NEXT:    %z = loop.weight dense<0> : tensor<2x2xi32> at 64 -> memref<2x2xi32>
// CHECK-NEXT:    %buf = loop.alloc : memref<4x8xf32>
// CHECK-NEXT:    %placed = loop.alloc {offset = 128 : i64} : memref<16xi8>
// CHECK-NEXT:    loop.for %i = 0 to 4 step 1 parallel {
// CHECK-NEXT:      loop.for %j = 0 to 8 step 2 {
// CHECK-NEXT:        %x = memref.load %in[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:        %y = memref.load %w[%j] : memref<8xf32>
// CHECK-NEXT:        %s = arith.addf %x, %y : f32
// CHECK-NEXT:        memref.store %s, %buf[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    } {tile = 4 : i64}
// CHECK-NEXT:    loop.for %k = 2 to 2 step 3 {
// CHECK-NEXT:    }
// CHECK-NEXT:    %flat = loop.reshape %buf : memref<4x8xf32> -> memref<32xf32>
// CHECK-NEXT:    %bytes = loop.reshape %placed : memref<16xi8> -> memref<4xi32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// loop.weight literals: more than 16 elements print in hex, i1 data, a
// scalar buffer. A loop may start below zero.
func.func @weights() {
  %ramp = loop.weight dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]> : tensor<20xi32> -> memref<20xi32>
  %mask = loop.weight dense<[true, false, true]> : tensor<3xi1> at 128 -> memref<3xi1>
  %s = loop.weight dense<2.5> : tensor<f32> -> memref<f32>
  loop.for %i = -2 to 3 step 1 {
    %v = memref.load %ramp[%i] : memref<20xi32>
  }
  func.return
}

// CHECK-LABEL: func.func @weights() {
// CHECK-NEXT:    %ramp = loop.weight dense<"0x000000000100000002000000030000000400000005000000060000000700000008000000090000000A0000000B0000000C0000000D0000000E0000000F00000010000000110000001200000013000000"> : tensor<20xi32> -> memref<20xi32>
// CHECK-NEXT:    %mask = loop.weight dense<[true, false, true]> : tensor<3xi1> at 128 -> memref<3xi1>
// CHECK-NEXT:    %s = loop.weight dense<2.500000e+00> : tensor<f32> -> memref<f32>
// CHECK-NEXT:    loop.for %i = -2 to 3 step 1 {
// CHECK-NEXT:      %v = memref.load %ramp[%i] : memref<20xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
