// RUN: ember-opt %s | ember-opt | filecheck %s
// RUN: ember-opt %s --print-op-generic | ember-opt | filecheck %s

// The loop level is upstream IR (scf, memref, arith) plus loop.weight and the
// ABI buffers marked {ember.weights} / {ember.arena} (and loop.kernel:
// kernel.mlir); all of it prints and parses back to the same text, also from
// the generic form, discardable attributes included.
func.func @loops(%in: memref<4x8xf32>, %out0: memref<32xf32>, %arena: memref<128xi8> {ember.arena}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %w = loop.weight dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32> -> memref<8xf32>
  %buf = memref.view %arena[%c0][] : memref<128xi8> to memref<4x8xf32>
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    scf.for %j = %c0 to %c8 step %c2 {
      %x = memref.load %in[%i, %j] : memref<4x8xf32>
      %y = memref.load %w[%j] : memref<8xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %buf[%i, %j] : memref<4x8xf32>
    }
    scf.reduce
  }) {ember.note = 4 : i64} : (index, index, index) -> ()
  %flat = memref.reinterpret_cast %buf to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32>
  func.return
}

// CHECK-LABEL: func.func @loops(%in: memref<4x8xf32>, %out0: memref<32xf32>, %arena: memref<128xi8> {ember.arena}) {
// CHECK:         %w = loop.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32> -> memref<8xf32>
// CHECK-NEXT:    %buf = memref.view %arena[%c0][] : memref<128xi8> to memref<4x8xf32>
// CHECK-NEXT:    "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%i: index):
// CHECK-NEXT:      scf.for %j = %c0 to %c8 step %c2 {
// CHECK:           }
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) {ember.note = 4 : i64} : (index, index, index) -> ()
// CHECK-NEXT:    %flat = memref.reinterpret_cast %buf to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// loop.weight literals: more than 16 elements print in hex, i1 data, a
// scalar buffer.
func.func @weights() {
  %ramp = loop.weight dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]> : tensor<20xi32> -> memref<20xi32>
  %mask = loop.weight dense<[true, false, true]> : tensor<3xi1> -> memref<3xi1>
  %s = loop.weight dense<2.5> : tensor<f32> -> memref<f32>
  func.return
}

// CHECK-LABEL: func.func @weights() {
// CHECK-NEXT:    %ramp = loop.weight dense<"0x000000000100000002000000030000000400000005000000060000000700000008000000090000000A0000000B0000000C0000000D0000000E0000000F00000010000000110000001200000013000000"> : tensor<20xi32> -> memref<20xi32>
// CHECK-NEXT:    %mask = loop.weight dense<[true, false, true]> : tensor<3xi1> -> memref<3xi1>
// CHECK-NEXT:    %s = loop.weight dense<2.500000e+00> : tensor<f32> -> memref<f32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
