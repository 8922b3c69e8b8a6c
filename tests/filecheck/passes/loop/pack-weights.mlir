// RUN: ember-opt %s -p loop-pack-weights --split-input-file | filecheck %s

// loop-pack-weights lays every loop.weight out in the weights blob: in order
// of appearance, each at a multiple of 64 bytes; identical weights (same
// data, same type) share one place. The blob becomes an argument
// `%weights: memref<Nxi8> {ember.weights}` after the function's own, each
// weight a memref.view of it at its byte offset, and the function gets
// loop.weights_bytes, the blob size rounded up to 64.

// 16 bytes at 0; 80 bytes at 64 (next free: 144, rounded to 192); %w3 is %w1
// again; 3 bytes of i1 at 192; the same data as %w1 under another shape is
// another weight (256); a splat and the same values written out are one
// weight (320); a weight inside a loop nest is packed too. Blob: 320 + 16
// rounded up = 384 bytes.
func.func @weights(%out0: memref<4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  %w1 = loop.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> -> memref<4xf32>
  %w2 = loop.weight dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]> : tensor<20xi32> -> memref<20xi32>
  %w3 = loop.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> -> memref<4xf32>
  %w4 = loop.weight dense<[true, false, true]> : tensor<3xi1> -> memref<3xi1>
  %w5 = loop.weight dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32> -> memref<2x2xf32>
  %s1 = loop.weight dense<5.0> : tensor<4xf32> -> memref<4xf32>
  %s2 = loop.weight dense<[5.0, 5.0, 5.0, 5.0]> : tensor<4xf32> -> memref<4xf32>
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %w6 = loop.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> -> memref<4xf32>
    %v = memref.load %w6[%i] : memref<4xf32>
    memref.store %v, %out0[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @weights(%out0: memref<4xf32>, %weights: memref<384xi8> {ember.weights}) attributes {loop.weights_bytes = 384 : i64} {
// CHECK-NEXT:    %[[AT0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[AT64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[AT192:.*]] = arith.constant 192 : index
// CHECK-NEXT:    %[[AT256:.*]] = arith.constant 256 : index
// CHECK-NEXT:    %[[AT320:.*]] = arith.constant 320 : index
// CHECK:         %w1 = memref.view %weights[%[[AT0]]][] : memref<384xi8> to memref<4xf32>
// CHECK-NEXT:    %w2 = memref.view %weights[%[[AT64]]][] : memref<384xi8> to memref<20xi32>
// CHECK-NEXT:    %w3 = memref.view %weights[%[[AT0]]][] : memref<384xi8> to memref<4xf32>
// CHECK-NEXT:    %w4 = memref.view %weights[%[[AT192]]][] : memref<384xi8> to memref<3xi1>
// CHECK-NEXT:    %w5 = memref.view %weights[%[[AT256]]][] : memref<384xi8> to memref<2x2xf32>
// CHECK-NEXT:    %s1 = memref.view %weights[%[[AT320]]][] : memref<384xi8> to memref<4xf32>
// CHECK-NEXT:    %s2 = memref.view %weights[%[[AT320]]][] : memref<384xi8> to memref<4xf32>
// CHECK-NEXT:    "scf.parallel"
// CHECK-NEXT:    ^bb0(%i: index):
// CHECK-NEXT:      %w6 = memref.view %weights[%[[AT0]]][] : memref<384xi8> to memref<4xf32>
// CHECK-NOT:     loop.weight

// -----

// Each function is packed on its own: offsets start at 0 again. A single
// 8-byte weight still takes a 64-byte blob.
func.func @other() {
  %w = loop.weight dense<[9.0, 9.0]> : tensor<2xf32> -> memref<2xf32>
  func.return
}

// CHECK-LABEL: func.func @other(%weights: memref<64xi8> {ember.weights}) attributes {loop.weights_bytes = 64 : i64} {
// CHECK-NEXT:    %[[AT0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %w = memref.view %weights[%[[AT0]]][] : memref<64xi8> to memref<2xf32>

// -----

// No weights: an empty blob, still an argument (the ABI always has one).
func.func @none(%x: memref<4xf32>) {
  func.return
}

// CHECK-LABEL: func.func @none(%x: memref<4xf32>, %weights: memref<0xi8> {ember.weights}) attributes {loop.weights_bytes = 0 : i64} {

// -----

// Kernels take their weights as arguments from the entry function: they get
// no blob, and a function that has one already is left alone.
func.func private @kernel(%x: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func @packed(%weights: memref<64xi8> {ember.weights}) {
  func.return
}

// CHECK-LABEL: func.func private @kernel(%x: memref<4xf32>) attributes {ember.kernel} {
// CHECK-LABEL: func.func @packed(%weights: memref<64xi8> {ember.weights}) {
