// RUN: ember-opt %s -p loop-pack-weights --split-input-file | filecheck %s

// loop-pack-weights gives every loop.weight its byte offset in the weights
// blob (printed as `at N`): in order of appearance, each at a multiple of 64
// bytes; identical weights (same data, same type) share one offset; the
// function gets loop.weights_bytes, the blob size rounded up to 64.

// 16 bytes at 0; 80 bytes at 64 (next free: 144, rounded to 192); %w3 is %w1
// again; 3 bytes of i1 at 192; the same data as %w1 under another shape is
// another weight (256); a splat and the same values written out are one
// weight (320); a weight inside a loop nest is packed too (and an old offset
// is replaced). Blob: 320 + 16 rounded up = 384 bytes.
func.func @weights(%out0: memref<4xf32>) {
  %w1 = loop.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> -> memref<4xf32>
  %w2 = loop.weight dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]> : tensor<20xi32> -> memref<20xi32>
  %w3 = loop.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> -> memref<4xf32>
  %w4 = loop.weight dense<[true, false, true]> : tensor<3xi1> -> memref<3xi1>
  %w5 = loop.weight dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32> -> memref<2x2xf32>
  %s1 = loop.weight dense<5.0> : tensor<4xf32> -> memref<4xf32>
  %s2 = loop.weight dense<[5.0, 5.0, 5.0, 5.0]> : tensor<4xf32> -> memref<4xf32>
  loop.for %i = 0 to 4 step 1 parallel {
    %w6 = loop.weight dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> at 999 -> memref<4xf32>
    %v = memref.load %w6[%i] : memref<4xf32>
    memref.store %v, %out0[%i] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @weights(%out0: memref<4xf32>) attributes {loop.weights_bytes = 384 : i64} {
// CHECK-NEXT:    %w1 = loop.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> at 0 -> memref<4xf32>
// CHECK-NEXT:    %w2 = loop.weight dense<"0x{{[0-9A-F]+}}"> : tensor<20xi32> at 64 -> memref<20xi32>
// CHECK-NEXT:    %w3 = loop.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> at 0 -> memref<4xf32>
// CHECK-NEXT:    %w4 = loop.weight dense<[true, false, true]> : tensor<3xi1> at 192 -> memref<3xi1>
// CHECK-NEXT:    %w5 = loop.weight dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32> at 256 -> memref<2x2xf32>
// CHECK-NEXT:    %s1 = loop.weight dense<5.000000e+00> : tensor<4xf32> at 320 -> memref<4xf32>
// CHECK-NEXT:    %s2 = loop.weight dense<5.000000e+00> : tensor<4xf32> at 320 -> memref<4xf32>
// CHECK-NEXT:    loop.for %i = 0 to 4 step 1 parallel {
// CHECK-NEXT:      %w6 = loop.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> at 0 -> memref<4xf32>

// -----

// Each function is packed on its own: offsets start at 0 again. A single
// 8-byte weight still takes a 64-byte blob.
func.func @other() {
  %w = loop.weight dense<[9.0, 9.0]> : tensor<2xf32> -> memref<2xf32>
  func.return
}

// CHECK-LABEL: func.func @other() attributes {loop.weights_bytes = 64 : i64} {
// CHECK-NEXT:    %w = loop.weight dense<9.000000e+00> : tensor<2xf32> at 0 -> memref<2xf32>

// -----

// No weights: an empty blob.
func.func @none(%x: memref<4xf32>) {
  func.return
}

// CHECK-LABEL: func.func @none(%x: memref<4xf32>) attributes {loop.weights_bytes = 0 : i64} {
