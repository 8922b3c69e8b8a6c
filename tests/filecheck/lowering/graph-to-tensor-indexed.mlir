// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop | filecheck %s --check-prefix=BUFFERS
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop,loop-generate | filecheck %s --check-prefix=LOOPS

// GatherElements: one index per result element, at the element's own
// position, replacing its axis.
func.func @gather_elements(%x: tensor<4x5xf32>, %i: tensor<2x5xi64>) -> tensor<2x5xf32> {
  %y = graph.gather_elements %x, %i : (tensor<4x5xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @gather_elements
// CHECK-NEXT:    %y = ember_linalg.gather %x[%i] {index_maps = [affine_map<(d0, d1) -> (d0, d1)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<4x5xf32>, tensor<2x5xi64> -> tensor<2x5xf32>

// GatherND: a tuple of indices along the last axis of %i picks an element;
// with batch_dims = 1 the first axis is shared.
func.func @gather_nd(%x: tensor<4x5xf32>, %i: tensor<3x2xi64>, %b: tensor<2x6x3xf32>, %ib: tensor<2x4x1xi64>) -> (tensor<3xf32>, tensor<2x4x3xf32>) {
  %y = graph.gather_nd %x, %i : (tensor<4x5xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  %z = graph.gather_nd %b, %ib {batch_dims = 1 : i64} : (tensor<2x6x3xf32>, tensor<2x4x1xi64>) -> tensor<2x4x3xf32>
  func.return %y, %z : tensor<3xf32>, tensor<2x4x3xf32>
}

// CHECK-LABEL: func.func @gather_nd
// CHECK-NEXT:    %y = ember_linalg.gather %x[%i] {index_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0, 1)>], data_map = affine_map<(d0)[s0, s1] -> (s0, s1)>}
// CHECK-NEXT:    %z = ember_linalg.gather %b[%ib] {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>], data_map = affine_map<(d0, d1, d2)[s0] -> (d0, s0, d2)>}

// ScatterND with reduction = "add": the reduction is the combine region. On
// buffers the scatter updates its result's buffer in place, a copy of the
// data first (the data is an argument, which must not change); the loop
// over the updates is sequential, so repeated targets add up in order, and
// a point whose index is out of range stores the element back unchanged.
func.func @scatter_nd(%x: tensor<4x5xf32>, %i: tensor<3x2xi64>, %u: tensor<3xf32>) -> tensor<4x5xf32> {
  %y = graph.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<4x5xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<4x5xf32>
  func.return %y : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @scatter_nd
// CHECK-NEXT:    %y = ember_linalg.scatter %u[%i] into %x {index_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0, 1)>], data_map = affine_map<(d0)[s0, s1] -> (s0, s1)>} : tensor<3xf32>, tensor<3x2xi64>, tensor<4x5xf32> -> tensor<4x5xf32> {
// CHECK-NEXT:    ^bb0(%[[U:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[U]], %[[C]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    }

// BUFFERS-LABEL: func.func @scatter_nd
// BUFFERS-NEXT:    linalg.copy ins(%x : memref<4x5xf32>) outs(%out0 : memref<4x5xf32>)
// BUFFERS-NEXT:    ember_linalg.scatter %u[%i] into %out0 {{.*}} : memref<3xf32>, memref<3x2xi64>, memref<4x5xf32> {

// LOOPS-LABEL: func.func @scatter_nd
// LOOPS:         scf.for %[[P:.*]] = %{{.*}} to %c3{{(_[0-9]+)?}} step
// LOOPS:           %[[ROW_OK:.*]] = arith.cmpi ult, %{{.*}}, %c4{{(_[0-9]+)?}} : index
// LOOPS:           %[[COL_OK:.*]] = arith.cmpi ult, %{{.*}}, %c5{{(_[0-9]+)?}} : index
// LOOPS-NEXT:      %[[OK:.*]] = arith.andi %[[ROW_OK]], %[[COL_OK]] : i1
// LOOPS:           %[[OLD:.*]] = memref.load %out0[%[[R:.*]], %[[K:.*]]] : memref<4x5xf32>
// LOOPS-NEXT:      %[[UPD:.*]] = memref.load %u[%[[P]]] : memref<3xf32>
// LOOPS-NEXT:      %[[SUM:.*]] = arith.addf %[[UPD]], %[[OLD]] : f32
// LOOPS-NEXT:      %[[NEW:.*]] = arith.select %[[OK]], %[[SUM]], %[[OLD]] : f32
// LOOPS-NEXT:      memref.store %[[NEW]], %out0[%[[R]], %[[K]]] : memref<4x5xf32>

// ScatterElements on an intermediate value that nothing else reads scatters
// into that value's buffer (no copy).
func.func @scatter_in_place(%x: tensor<4x5xf32>, %i: tensor<2x5xi64>, %u: tensor<2x5xf32>) -> tensor<4x5xf32> {
  %e = graph.exp %x : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %y = graph.scatter_elements %e, %i, %u : (tensor<4x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
  %z = graph.neg %y : (tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %z : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @scatter_in_place
// CHECK:         ember_linalg.scatter %u[%i] into %e {{.*}} {
// CHECK-NEXT:    ^bb0(%[[U:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[U]] : f32

// BUFFERS-LABEL: func.func @scatter_in_place
// BUFFERS:         %[[E:.*]] = memref.alloc() : memref<4x5xf32>
// BUFFERS-NOT:     linalg.copy
// BUFFERS:         ember_linalg.scatter %u[%i] into %[[E]]
// BUFFERS-NOT:     linalg.copy
// BUFFERS:         linalg.generic {{.*}} ins(%[[E]] : memref<4x5xf32>) outs(%out0 : memref<4x5xf32>)

// Trilu: a select on the positions of the last two dims; a constant k
// (here absent: 0) folds in, a symbolic square mask keeps its sizes.
func.func @trilu(%x: tensor<4x5xf32>, %k: tensor<i64>, %mask: tensor<?x?xi1, #graph.dims<S, S>>) -> (tensor<4x5xf32>, tensor<?x?xi1, #graph.dims<S, S>>) {
  %lower = graph.trilu %x, k %k {upper = 0 : i64} : (tensor<4x5xf32>, tensor<i64>) -> tensor<4x5xf32>
  %causal = graph.trilu %mask : (tensor<?x?xi1, #graph.dims<S, S>>) -> tensor<?x?xi1, #graph.dims<S, S>>
  func.return %lower, %causal : tensor<4x5xf32>, tensor<?x?xi1, #graph.dims<S, S>>
}

// CHECK-LABEL: func.func @trilu
// CHECK:         %lower = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%x, %k : tensor<4x5xf32>, tensor<i64>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[K:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[ROW:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[COL:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[COL]], %[[ROW]] : index
// CHECK-NEXT:      %[[D64:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK-NEXT:      %[[KEEP:.*]] = arith.cmpi sle, %[[D64]], %[[K]] : i64
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %{{.*}} = arith.select %[[KEEP]], %[[X]], %[[ZERO]] : f32
// CHECK:         %causal = linalg.generic {{.*}} ins(%mask : tensor<?x?xi1, #graph.dims<S, S>>)
// CHECK:           %{{.*}} = arith.cmpi sge, %{{.*}}, %{{.*}} : i64
