// RUN: ember-opt %s -p loop-generate --split-input-file | filecheck %s

// A 6x3 by 3x20 matmul with the micro-kernel micro = [m, n, 4, 16] in
// vectors of 8: each 4 x 16 block loads its 4 x 2 accumulators from C,
// carries them through the k loop (iter_args), broadcasts A[m, k] once per
// row, loads B[k, n:n+8] once per vector (shared by the rows), one
// vector.fma per accumulator, and stores them after the loop; the k loop is
// marked `loop.no_unroll` (its body is unrolled already), scalar loops are
// not. The last 4
// columns (short of a vector) run the scalar body for each block's rows;
// the last 2 rows (short of MR) run as a block of 2 rows.
func.func @matmul(%a: memref<6x3xf32>, %b: memref<3x20xf32>, %c: memref<6x20xf32>) {
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 4, 16]>} ins(%a, %b : memref<6x3xf32>, memref<3x20xf32>) outs(%c : memref<6x20xf32>)
  func.return
}

// CHECK-LABEL: func.func @matmul
// CHECK:         "scf.parallel"(%c0, %c4, %c4)
// CHECK-NEXT:    ^bb0(%[[ROW:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0, %c16, %c16)
// CHECK-NEXT:      ^bb0(%[[COL:.*]]: index):
// CHECK:             %[[COL8:.*]] = arith.addi %[[COL]], %c8 : index
// CHECK-NEXT:        %[[C00:.*]] = vector.load %c[%[[ROW]], %[[COL]]] : memref<6x20xf32>, vector<8xf32>
// CHECK-NEXT:        %[[C01:.*]] = vector.load %c[%[[ROW]], %[[COL8]]] : memref<6x20xf32>, vector<8xf32>
// CHECK-COUNT-6:     vector.load %c
// CHECK-NEXT:        %{{.*}} = scf.for %[[K:.*]] = %c0 to %c3 step %c1 iter_args(%[[ACC00:.*]] = %[[C00]], %[[ACC01:.*]] = %[[C01]], {{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:          %[[A0:.*]] = memref.load %a[%[[ROW]], %[[K]]] : memref<6x3xf32>
// CHECK-NEXT:          %[[A0S:.*]] = vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK-NEXT:          %[[B0:.*]] = vector.load %b[%[[K]], %[[COL]]] : memref<3x20xf32>, vector<8xf32>
// CHECK-NEXT:          %[[N00:.*]] = vector.fma %[[A0S]], %[[B0]], %[[ACC00]] : vector<8xf32>
// CHECK-NEXT:          %[[B1:.*]] = vector.load %b[%[[K]], %[[COL8]]] : memref<3x20xf32>, vector<8xf32>
// CHECK-NEXT:          %[[N01:.*]] = vector.fma %[[A0S]], %[[B1]], %[[ACC01]] : vector<8xf32>
// CHECK-NEXT:          %[[A1:.*]] = memref.load %a[%{{.*}}, %[[K]]] : memref<6x3xf32>
// CHECK-NEXT:          %[[A1S:.*]] = vector.broadcast %[[A1]] : f32 to vector<8xf32>
// CHECK-NEXT:          vector.fma %[[A1S]], %[[B0]], %{{.*}} : vector<8xf32>
// CHECK-NEXT:          vector.fma %[[A1S]], %[[B1]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-4:       vector.fma
// CHECK:               scf.yield %[[N00]], %[[N01]], {{.*}} : vector<8xf32>
// CHECK-NEXT:        } {loop.no_unroll}
// CHECK-COUNT-8:     vector.store
// CHECK:           scf.reduce
// The last 4 columns of the block's rows: the scalar body, m, k, n.
// CHECK:           "scf.parallel"(%c0, %c4, %c1)
// CHECK:             scf.for
// CHECK:               "scf.parallel"(%c0, %c4, %c1)
// CHECK:                 arith.addi %c16, %{{.*}} : index
// CHECK:                 arith.mulf
// CHECK-NOT:   vector.store
// CHECK-NOT:   loop.no_unroll
// The last 2 rows: a block of 2 x 2 accumulators from row 4.
// CHECK:         "scf.parallel"(%c0, %c16, %c16)
// CHECK:           vector.load %c[%c4, %{{.*}}]
// CHECK:           scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-4:     vector.fma
// CHECK:           } {loop.no_unroll}
// CHECK:           vector.store %{{.*}}, %c[%c5, %{{.*}}]
// CHECK:         "scf.parallel"(%c0, %c2, %c1)
// CHECK:           arith.mulf
// CHECK-NOT:     loop.no_unroll

// -----

// Must not fire: B reaches the op as a subview taking every other column,
// so consecutive n are not adjacent in memory; the op keeps its scalar loops.
func.func @strided_columns(%a: memref<4x3xf32>, %wide: memref<3x32xf32>, %c: memref<4x16xf32>) {
  %b = memref.subview %wide[0, 0] [3, 16] [1, 2] : memref<3x32xf32> to memref<3x16xf32, strided<[32, 2]>>
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], vector = 8, micro = [0, 1, 4, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32, strided<[32, 2]>>) outs(%c : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @strided_columns
// CHECK-NOT:     vector.
// CHECK:         arith.mulf
// CHECK-NOT:     vector.
// CHECK:         func.return

// -----

// The fill of C just before the matmul, when every element of C is written
// by one block (all columns in whole vectors, k untiled): the blocks start
// their accumulators at the fill's value (one broadcast), and the fill runs
// no loop of its own; C is only stored.
func.func @filled(%a: memref<4x3xf32>, %b: memref<3x16xf32>, %c: memref<4x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], vector = 8, micro = [0, 1, 4, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32>) outs(%c : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @filled
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     memref.store
// CHECK-NOT:     vector.load %c
// CHECK:         %[[SPLAT:.*]] = vector.broadcast %zero : f32 to vector<8xf32>
// CHECK-NEXT:    scf.for {{.*}} iter_args(%{{.*}} = %[[SPLAT]], %{{.*}} = %[[SPLAT]], {{.*}})
// CHECK-NOT:     vector.load %c
// CHECK-COUNT-8: vector.store %{{.*}}, %c
// CHECK-NOT:     memref.store
// CHECK:         func.return

// -----

// A stride-2 NCHW convolution, m = f, n = ow: the input steps by 2 along n,
// so each vector of it is two loads (at 2 * ow + kw and 7 elements further)
// and a shuffle of their even lanes; the second load's last lane is the last
// element the vector uses (2 * 7 + 2 = 16, the row's end), so nothing past
// the input is read.
func.func @stride2(%x: memref<1x1x3x17xf32>, %w: memref<4x1x3x3xf32>, %o: memref<1x4x1x8xf32>) {
  linalg.conv_2d_nchw_fchw {schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3], vector = 8, micro = [1, 3, 4, 8]>, strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x1x3x17xf32>, memref<4x1x3x3xf32>) outs(%o : memref<1x4x1x8xf32>)
  func.return
}

// CHECK-LABEL: func.func @stride2
// CHECK:         scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args
// CHECK:           scf.for %[[KW:.*]] = %c0 to %c3 step %c1 iter_args
// CHECK:           %[[AT:.*]] = arith.addi %{{.*}}, %[[KW]] : index
// CHECK-NEXT:      %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT:      %[[FURTHER:.*]] = arith.addi %[[AT]], %[[C7]] : index
// CHECK-NEXT:      %[[LOW:.*]] = vector.load %x[%{{.*}}, %{{.*}}, %{{.*}}, %[[AT]]] : memref<1x1x3x17xf32>, vector<8xf32>
// CHECK-NEXT:      %[[HIGH:.*]] = vector.load %x[%{{.*}}, %{{.*}}, %{{.*}}, %[[FURTHER]]] : memref<1x1x3x17xf32>, vector<8xf32>
// CHECK-NEXT:      %[[EVEN:.*]] = vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 9, 11, 13, 15] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:      memref.load %w
// CHECK-NEXT:      vector.broadcast
// CHECK-NEXT:      vector.fma %[[EVEN]]
// CHECK-COUNT-3:   vector.fma %[[EVEN]]

// -----

// A filled matmul whose n, tiled by one block of 16, ends in a tile of 12
// columns, not whole vectors: the last tile runs as one block of as many
// vectors as cover it (2), the last ending on column 28 (at 16 + 4), so the
// blocks still start from the fill and no column is left to the scalar body.
func.func @filled_narrow_tile(%a: memref<2x3xf32>, %b: memref<3x28xf32>, %c: memref<2x28xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x28xf32>)
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 16, 0], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<2x3xf32>, memref<3x28xf32>) outs(%c : memref<2x28xf32>)
  func.return
}

// CHECK-LABEL: func.func @filled_narrow_tile
// CHECK-NOT:     linalg.fill
// CHECK:         "scf.parallel"(%c0, %c16, %c16)
// CHECK-COUNT-4:   vector.store %{{.*}}, %c
// The last tile, from column 16: vectors at 16 + 0 and 16 + 4.
// CHECK:         "scf.parallel"(%c0, %c2, %c2)
// CHECK:           %[[FIRST:.*]] = arith.addi %{{.*}}, %c0 : index
// CHECK:           %[[LAST:.*]] = arith.addi %{{.*}}, %c4 : index
// CHECK:           vector.broadcast %zero
// CHECK:           vector.load %b[%{{.*}}, %[[FIRST]]] : memref<3x28xf32>, vector<8xf32>
// CHECK:           vector.load %b[%{{.*}}, %[[LAST]]] : memref<3x28xf32>, vector<8xf32>
// CHECK:           vector.store %{{.*}}, %c[%{{.*}}, %[[FIRST]]]
// CHECK-NEXT:      vector.store %{{.*}}, %c[%{{.*}}, %[[LAST]]]
// CHECK-NOT:     arith.mulf
// CHECK-NOT:     memref.store
// CHECK:         func.return
