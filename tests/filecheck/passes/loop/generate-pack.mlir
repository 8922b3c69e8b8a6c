// RUN: ember-opt %s -p loop-generate --split-input-file | filecheck %s

// A schedule's `pack = [...]` (docs/schedules.md): each listed input is
// copied, before the op's loops, into a fresh buffer allocated where the op
// stands and laid out tile by tile: an operand dim indexed by a dim tiled t
// (extent E) becomes (ceil(E / t), t), tile numbers first. The copy is a
// nest of its own, tiled as the op's dims (its remainders peeled, so the
// padding of a last, partial tile is never written); each tile loop divides
// its iv by the tile for the tile number. The op's loops then read the
// packed buffer at (tile numbers, point ivs) and the operand no more.

// A matmul (m, n, k) tiled 4 x 5 x 3, packing B (k, n): every tile divides
// its extent, so B (6x10) becomes 2 x 2 tiles of 3 x 5.
func.func @divide(%a: memref<8x6xf32>, %b: memref<6x10xf32>, %c: memref<8x10xf32>) {
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [4, 5, 3], parallel = [0, 1], pack = [1]>} ins(%a, %b : memref<8x6xf32>, memref<6x10xf32>) outs(%c : memref<8x10xf32>)
  func.return
}

// CHECK-LABEL: func.func @divide
// CHECK-NEXT:    %b_packed = memref.alloc() : memref<2x2x3x5xf32>
// The copy: tile loops over k and n, point loops over one tile.
// CHECK:         "scf.parallel"(%c0, %c6, %c3)
// CHECK-NEXT:    ^bb0(%[[K_TILE:.*]]: index):
// CHECK-NEXT:      %[[K_NUMBER:.*]] = arith.divui %[[K_TILE]], %c3 : index
// CHECK-NEXT:      "scf.parallel"(%c0, %c10, %c5)
// CHECK-NEXT:      ^bb0(%[[N_TILE:.*]]: index):
// CHECK-NEXT:        %[[N_NUMBER:.*]] = arith.divui %[[N_TILE]], %c5 : index
// CHECK-NEXT:        "scf.parallel"(%c0, %c3, %c1)
// CHECK-NEXT:        ^bb0(%[[K_POINT:.*]]: index):
// CHECK-NEXT:          %[[K:.*]] = arith.addi %[[K_TILE]], %[[K_POINT]] : index
// CHECK-NEXT:          "scf.parallel"(%c0, %c5, %c1)
// CHECK-NEXT:          ^bb0(%[[N_POINT:.*]]: index):
// CHECK-NEXT:            %[[N:.*]] = arith.addi %[[N_TILE]], %[[N_POINT]] : index
// CHECK-NEXT:            %[[V:.*]] = memref.load %b[%[[K]], %[[N]]] : memref<6x10xf32>
// CHECK-NEXT:            memref.store %[[V]], %b_packed[%[[K_NUMBER]], %[[N_NUMBER]], %[[K_POINT]], %[[N_POINT]]] : memref<2x2x3x5xf32>
// The matmul: m's tile loop, then k's and n's with their tile numbers (m's
// is not needed: B does not depend on m); B is read packed, A and C as ever.
// CHECK:         "scf.parallel"(%c0_1, %c8, %c4)
// CHECK-NEXT:    ^bb0(%[[M_TILE:.*]]: index):
// CHECK-NEXT:      scf.for %[[K_TILE2:.*]] = %c0_1 to %c6_1 step %c3_1 {
// CHECK-NEXT:        %[[K_NUMBER2:.*]] = arith.divui %[[K_TILE2]], %c3_1 : index
// CHECK-NEXT:        "scf.parallel"(%c0_1, %c10_1, %c5_1)
// CHECK-NEXT:        ^bb0(%[[N_TILE2:.*]]: index):
// CHECK-NEXT:          %[[N_NUMBER2:.*]] = arith.divui %[[N_TILE2]], %c5_1 : index
// CHECK:                 scf.for %[[K_POINT2:.*]] = %c0_1 to %c3_1 step %c1_1 {
// CHECK:                   ^bb0(%[[N_POINT2:.*]]: index):
// CHECK:                     memref.load %a[
// CHECK-NEXT:                memref.load %b_packed[%[[K_NUMBER2]], %[[N_NUMBER2]], %[[K_POINT2]], %[[N_POINT2]]] : memref<2x2x3x5xf32>
// CHECK-NEXT:                memref.load %c[
// CHECK-NOT:     memref.load %b[
// CHECK:         func.return

// -----

// 10x7 by 7x13, tiled 4 x 5 x 3 and run k, m, n: no tile divides its extent.
// B (7x13) becomes 3 x 3 tiles of 3 x 5, the last ones padded (k: 7 = 2*3 +
// 1, n: 13 = 2*5 + 3). The copy's remainders, like the op's, are peeled and
// use a constant tile number (2) for the last tile.
func.func @remainders(%a: memref<10x7xf32>, %b: memref<7x13xf32>, %c: memref<10x13xf32>) {
  linalg.matmul {schedule = #loop.schedule<order = [2, 0, 1], tiles = [4, 5, 3], parallel = [0, 1], pack = [1]>} ins(%a, %b : memref<10x7xf32>, memref<7x13xf32>) outs(%c : memref<10x13xf32>)
  func.return
}

// CHECK-LABEL: func.func @remainders
// CHECK-NEXT:    %b_packed = memref.alloc() : memref<3x3x3x5xf32>
// CHECK:         %c2 = arith.constant 2 : index
// The four nests of the copy: full k and n tiles, the n remainder (3
// columns from 10), the k remainder (1 row from 6), both.
// CHECK:         memref.store %{{.*}}, %b_packed[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<3x3x3x5xf32>
// CHECK:         "scf.parallel"(%c0, %c3, %c1)
// CHECK:           %c10_1 = arith.constant 10 : index
// CHECK:           memref.store %{{.*}}, %b_packed[%{{.*}}, %c2, %{{.*}}, %{{.*}}] : memref<3x3x3x5xf32>
// CHECK:         "scf.parallel"(%c0, %c1, %c1)
// CHECK:           %c6_1 = arith.constant 6 : index
// CHECK:           memref.store %{{.*}}, %b_packed[%c2, %{{.*}}, %{{.*}}, %{{.*}}] : memref<3x3x3x5xf32>
// CHECK:         memref.store %{{.*}}, %b_packed[%c2, %c2, %{{.*}}, %{{.*}}] : memref<3x3x3x5xf32>
// The matmul's eight copies of the body (k, m and n, each full or the
// remainder, in that nesting) read the packed buffer, the last tile of k
// and of n at the constant tile number (%c2_1 in this nest).
// CHECK:         %c2_1 = arith.constant 2 : index
// CHECK:         scf.for %{{.*}} = %c0_1 to %c6_3 step %c3_1 {
// CHECK:         memref.load %b_packed[%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK:         memref.load %b_packed[%{{[0-9]+}}, %c2_1, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK:         memref.load %b_packed[%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK:         memref.load %b_packed[%{{[0-9]+}}, %c2_1, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK:         memref.load %b_packed[%c2_1, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK:         memref.load %b_packed[%c2_1, %c2_1, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK:         memref.load %b_packed[%c2_1, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK:         memref.load %b_packed[%c2_1, %c2_1, %{{[0-9]+}}, %{{[0-9]+}}] : memref<3x3x3x5xf32>
// CHECK-NOT:     memref.load %b[
// CHECK:         func.return

// -----

// An untiled dim stays whole among the inner dims (n here); only k's tile
// number is taken. Without tiles, packing is a plain copy of the operand.
func.func @untiled(%a: memref<8x6xf32>, %b: memref<6x10xf32>, %c: memref<8x10xf32>, %d: memref<8x10xf32>) {
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 0, 4], pack = [1]>} ins(%a, %b : memref<8x6xf32>, memref<6x10xf32>) outs(%c : memref<8x10xf32>)
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], pack = [0]>} ins(%a, %b : memref<8x6xf32>, memref<6x10xf32>) outs(%d : memref<8x10xf32>)
  func.return
}

// CHECK-LABEL: func.func @untiled
// CHECK-NEXT:    %b_packed = memref.alloc() : memref<2x4x10xf32>
// CHECK:         memref.store %{{.*}}, %b_packed[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x4x10xf32>
// CHECK:         memref.load %b_packed[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x4x10xf32>
// CHECK:         %a_packed = memref.alloc() : memref<8x6xf32>
// CHECK-NOT:     arith.divui
// CHECK:         memref.store %{{.*}}, %a_packed[%{{.*}}, %{{.*}}] : memref<8x6xf32>
// CHECK:         memref.load %a_packed[%{{.*}}, %{{.*}}] : memref<8x6xf32>
// CHECK:         func.return

// -----

// A constant operand (`loop.weight`) is packed at compile time: a new
// weight holds its values tile by tile (the padding of a partial tile is
// zero), next to the original, and no copy runs. Here B (k = 2, n = 3) with
// n tiled by 2: tile 0 holds columns 0 and 1, tile 1 column 2 and a zero.
// The original goes where nothing else reads it.
func.func @constant(%a: memref<4x2xf32>, %c: memref<4x3xf32>) {
  %b = loop.weight dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32> -> memref<2x3xf32>
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 2, 0], parallel = [0, 1], pack = [1]>} ins(%a, %b : memref<4x2xf32>, memref<2x3xf32>) outs(%c : memref<4x3xf32>)
  func.return
}

// CHECK-LABEL: func.func @constant
// CHECK-NEXT:    %b_packed = loop.weight dense<{{\[\[\[}}0.000000e+00, 1.000000e+00], [3.000000e+00, 4.000000e+00]], {{\[\[}}2.000000e+00, 0.000000e+00], [5.000000e+00, 0.000000e+00]]]> : tensor<2x2x2xf32> -> memref<2x2x2xf32>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.store %{{.*}}, %b_packed
// CHECK:         memref.load %b_packed[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x2x2xf32>
// CHECK-NOT:     %b[
// CHECK:         func.return

// -----

// A weight that another op reads as it is stays; a weight read through a
// static subview is packed from the elements the subview covers (rows 1
// and 2 of a 3 x 2 weight, one tile of k each).
func.func @shared(%a: memref<4x2xf32>, %c: memref<4x2xf32>, %d: memref<4x2xf32>) {
  %w = loop.weight dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]> : tensor<3x2xf32> -> memref<3x2xf32>
  %b = memref.subview %w[1, 0] [2, 2] [1, 1] : memref<3x2xf32> to memref<2x2xf32, strided<[2, 1], offset: 2>>
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 0, 1], pack = [1]>} ins(%a, %b : memref<4x2xf32>, memref<2x2xf32, strided<[2, 1], offset: 2>>) outs(%c : memref<4x2xf32>)
  linalg.matmul ins(%a, %b : memref<4x2xf32>, memref<2x2xf32, strided<[2, 1], offset: 2>>) outs(%d : memref<4x2xf32>)
  func.return
}

// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %w = loop.weight dense<{{\[\[}}0.000000e+00, 1.000000e+00], [2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00]]> : tensor<3x2xf32> -> memref<3x2xf32>
// CHECK-NEXT:    %w_packed = loop.weight dense<{{\[\[\[}}2.000000e+00, 3.000000e+00]], {{\[\[}}4.000000e+00, 5.000000e+00]]]> : tensor<2x1x2xf32> -> memref<2x1x2xf32>
// CHECK:         memref.load %w_packed[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x1x2xf32>
// CHECK:         memref.load %w[%{{.*}}, %{{.*}}] : memref<3x2xf32>
// CHECK:         func.return

// -----

// In a kernel function (a group outlined before loop-generate) the weight
// is an argument: where every call passes a loop.weight, each call's weight
// is packed at compile time and passed in a new argument that the loops
// read; the unpacked argument, read no more, goes, and so do the weights
// only it received.
func.func @calls(%a: memref<4x2xf32>, %c: memref<4x3xf32>, %d: memref<4x3xf32>) {
  %b0 = loop.weight dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32> -> memref<2x3xf32>
  %b1 = loop.weight dense<[[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]> : tensor<2x3xf32> -> memref<2x3xf32>
  func.call @k(%a, %b0, %c) : (memref<4x2xf32>, memref<2x3xf32>, memref<4x3xf32>) -> ()
  func.call @k(%a, %b1, %d) : (memref<4x2xf32>, memref<2x3xf32>, memref<4x3xf32>) -> ()
  func.return
}
func.func private @k(%a: memref<4x2xf32>, %b: memref<2x3xf32>, %c: memref<4x3xf32>) attributes {ember.kernel} {
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 2, 0], parallel = [0, 1], pack = [1]>} ins(%a, %b : memref<4x2xf32>, memref<2x3xf32>) outs(%c : memref<4x3xf32>)
  func.return
}

// CHECK-LABEL: func.func @calls
// CHECK-NEXT:    %b0_packed = loop.weight dense<{{\[\[\[}}0.000000e+00, 1.000000e+00], [3.000000e+00, 4.000000e+00]], {{\[\[}}2.000000e+00, 0.000000e+00], [5.000000e+00, 0.000000e+00]]]> : tensor<2x2x2xf32> -> memref<2x2x2xf32>
// CHECK-NEXT:    %b1_packed = loop.weight dense<{{\[\[\[}}6.000000e+00, 7.000000e+00], [9.000000e+00, 1.000000e+01]], {{\[\[}}8.000000e+00, 0.000000e+00], [1.100000e+01, 0.000000e+00]]]> : tensor<2x2x2xf32> -> memref<2x2x2xf32>
// CHECK-NEXT:    func.call @k(%a, %c, %b0_packed) : (memref<4x2xf32>, memref<4x3xf32>, memref<2x2x2xf32>) -> ()
// CHECK-NEXT:    func.call @k(%a, %d, %b1_packed) : (memref<4x2xf32>, memref<4x3xf32>, memref<2x2x2xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK:       func.func private @k(%a: memref<4x2xf32>, %c: memref<4x3xf32>, %b_packed: memref<2x2x2xf32>) attributes {ember.kernel}
// CHECK-NOT:     memref.alloc
// CHECK:         memref.load %b_packed[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x2x2xf32>
// CHECK:         func.return
