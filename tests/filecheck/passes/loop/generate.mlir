// RUN: ember-opt %s -p loop-generate --split-input-file | filecheck %s

// loop-generate on buffer-level IR, as convert-tensor-to-loop leaves it or as
// written by hand: each structured op on memrefs becomes the loop nest its
// schedule describes (the default without one), where it stands. Tensor
// inputs through both passes are in generate-from-tensors.mlir (default
// schedules) and generate-schedule.mlir (schedules from tensor-level IR);
// errors in generate-errors.mlir.

// A hand-written schedule on a buffer-level matmul (dims m, n, k): m tiled
// by 4 (10 = 2*4 + 2: a peeled remainder of 2 rows from 8), the order m, k,
// n, n unrolled by 4 (13 = 3*4 + 1: a remainder loop from 12) with the vector
// hint on both innermost loops.
func.func @matmul(%a: memref<10x7xf32>, %b: memref<7x13xf32>, %c: memref<10x13xf32>) {
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [4, 0, 0], parallel = [0, 1], unroll = 4, vector = 8>} ins(%a, %b : memref<10x7xf32>, memref<7x13xf32>) outs(%c : memref<10x13xf32>)
  func.return
}

// CHECK-LABEL: func.func @matmul(%a: memref<10x7xf32>, %b: memref<7x13xf32>, %c: memref<10x13xf32>) {
// CHECK-NOT:     linalg.matmul
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[MT:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[MP:.*]]: index):
// CHECK-NEXT:        %[[M:.*]] = arith.addi %[[MT]], %[[MP]] : index
// CHECK-NEXT:        scf.for %[[K:.*]] = %c0{{(_[0-9]+)?}} to %c7{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:          "scf.parallel"(%c0{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:          ^bb0(%[[N:.*]]: index):
// CHECK-NEXT:            memref.load %a[%[[M]], %[[K]]] : memref<10x7xf32>
// CHECK-NEXT:            memref.load %b[%[[K]], %[[N]]] : memref<7x13xf32>
// CHECK-COUNT-3:         arith.mulf
// CHECK:                 arith.mulf
// CHECK:                 memref.store
// CHECK-NEXT:            scf.reduce
// CHECK-NEXT:          }) {loop.vector_width = 8 : i64} : (index, index, index) -> ()
// CHECK-NEXT:          "scf.parallel"(%c12{{(_[0-9]+)?}}, %c13{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK:               }) {loop.vector_width = 8 : i64} : (index, index, index) -> ()
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[MR:.*]]: index):
// CHECK-NEXT:      %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:      arith.addi %[[EIGHT]], %[[MR]] : index
// CHECK:         }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// Data movement through subviews: the copy reads and writes the subviews'
// sources, each index scaled by the stride (a muli, none for stride 1) and
// shifted by the offset (an addi, none for offset 0); the subviews are gone.
// The fill of an unsigned type stores the bits of a signless constant.
func.func @copies(%x: memref<4x8xf32>, %y: memref<3x6xf32>, %u: memref<3xui8>) {
  %s = memref.subview %x[1, 0] [2, 3] [2, 3] : memref<4x8xf32> to memref<2x3xf32, strided<[16, 3], offset: 8>>
  %d = memref.subview %y[1, 2] [2, 3] [1, 1] : memref<3x6xf32> to memref<2x3xf32, strided<[6, 1], offset: 8>>
  linalg.copy ins(%s : memref<2x3xf32, strided<[16, 3], offset: 8>>) outs(%d : memref<2x3xf32, strided<[6, 1], offset: 8>>)
  %bits = arith.constant -1 : i8
  %v = arith.bitcast %bits : i8 to ui8
  linalg.fill ins(%v : ui8) outs(%u : memref<3xui8>)
  func.return
}

// CHECK-LABEL: func.func @copies(%x: memref<4x8xf32>, %y: memref<3x6xf32>, %u: memref<3xui8>) {
// CHECK-NOT:     memref.subview
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[I2:.*]] = arith.muli %[[I]], %[[TWO]] : index
// CHECK-NEXT:        %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[ROW:.*]] = arith.addi %[[I2]], %[[ONE]] : index
// CHECK-NEXT:        %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[COL:.*]] = arith.muli %[[J]], %[[THREE]] : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %x[%[[ROW]], %[[COL]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[ROW2:.*]] = arith.addi %[[I]], %[[ONE2]] : index
// CHECK-NEXT:        %[[TWO2:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[COL2:.*]] = arith.addi %[[J]], %[[TWO2]] : index
// CHECK-NEXT:        memref.store %[[V]], %y[%[[ROW2]], %[[COL2]]] : memref<3x6xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[K:.*]]: index):
// CHECK-NEXT:      %[[B:.*]] = arith.constant -1 : i8
// CHECK-NEXT:      %[[U:.*]] = arith.bitcast %[[B]] : i8 to ui8
// CHECK-NEXT:      memref.store %[[U]], %u[%[[K]]] : memref<3xui8>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A gather on buffers: one nest over what it writes.
func.func @gather(%table: memref<100x16xf32>, %ids: memref<5xi64>, %out: memref<5x16xf32>) {
  ember_linalg.gather %table[%ids] outs(%out : memref<5x16xf32>) {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : memref<100x16xf32>, memref<5xi64>
  func.return
}

// CHECK-LABEL: func.func @gather(
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK:           "scf.parallel"(%c0{{(_[0-9]+)?}}, %c16{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK:             memref.load %ids[
// CHECK:             arith.minsi
// CHECK-NEXT:        %[[V:.*]] = memref.load %table[
// CHECK-NEXT:        memref.store %[[V]], %out[
// CHECK-NOT:     ember_linalg.gather

// -----

// Must not fire: ops on tensors are left for bufferization.
func.func @tensors(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %m : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @tensors(
// CHECK-NEXT:    %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    func.return %m : tensor<4x5xf32>
