// RUN: ember-opt %s | ember-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: ember-opt %s -p convert-tensor-to-loop,loop-generate | filecheck %s
// RUN: ember-opt %s -p convert-tensor-to-loop | filecheck %s --check-prefix=BUFFERS
// RUN: ember-opt %s -p convert-tensor-to-loop | ember-opt | filecheck %s --check-prefix=BUFFERS

// ember_linalg.gather reads its indices at run time (an embedding lookup).
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<2x5xi64>) -> tensor<2x5x16xf32> {
  %e = ember_linalg.gather %table[%ids] {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>], data_map = affine_map<(d0, d1, d2)[s0] -> (s0, d2)>} : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>
  func.return %e : tensor<2x5x16xf32>
}

// ROUNDTRIP: %e = ember_linalg.gather %table[%ids] {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>], data_map = affine_map<(d0, d1, d2)[s0] -> (s0, d2)>} : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>

// Bufferized, the gather writes its output buffer (and round-trips so).
// BUFFERS:      func.func @embedding(%table: memref<100x16xf32>, %ids: memref<2x5xi64>, %out0: memref<2x5x16xf32>) {
// BUFFERS-NEXT:   ember_linalg.gather %table[%ids] outs(%out0 : memref<2x5x16xf32>) {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>], data_map = affine_map<(d0, d1, d2)[s0] -> (s0, d2)>} : memref<100x16xf32>, memref<2x5xi64>
// BUFFERS-NEXT:   func.return

// One nest over the result; the index is loaded, wrapped if negative and
// clamped into [0, 99] before the table is read.
// CHECK:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:   "scf.parallel"(%c0{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:   ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:     "scf.parallel"(%c0{{(_[0-9]+)?}}, %c16{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:     ^bb0(%[[K:.*]]: index):
// CHECK:            %[[RAW:.*]] = memref.load %ids[%[[I]], %[[J]]] : memref<2x5xi64>
// CHECK-NEXT:       %[[IDX:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK:            %[[NEG:.*]] = arith.cmpi slt, %[[IDX]], %{{.*}} : index
// CHECK:            %[[WRAP:.*]] = arith.select %[[NEG]]
// CHECK-NEXT:       %[[LOW:.*]] = arith.maxsi %[[WRAP]], %{{.*}} : index
// CHECK:            %[[ROW:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
// CHECK-NEXT:       %[[V:.*]] = memref.load %table[%[[ROW]], %[[K]]] : memref<100x16xf32>
// CHECK-NEXT:       memref.store %[[V]], %out0[%[[I]], %[[J]], %[[K]]] : memref<2x5x16xf32>
