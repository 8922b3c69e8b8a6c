// RUN: ember-opt %s --split-input-file | ember-opt --split-input-file | filecheck %s
// RUN: ember-opt %s --split-input-file -p convert-tensor-to-loop | filecheck %s --check-prefix=LOOP

// tensor.transpose, tensor.broadcast and tensor.concat round-trip, and
// bufferize into copy loops (transpose and broadcast through generalize()).
func.func @transpose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty : tensor<3x2xf32>
  %t = tensor.transpose {permutation = array<i64: 1, 0>} ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %t : tensor<3x2xf32>
}
// CHECK: %t = tensor.transpose {permutation = array<i64: 1, 0>} ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
// LOOP-LABEL: func.func @transpose
// LOOP:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// LOOP-NEXT:         ^bb0(%[[I:.*]]: index):
// LOOP-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// LOOP-NEXT:      ^bb0(%[[J:.*]]: index):
// LOOP-NEXT:        %[[V:.*]] = memref.load %x[%[[J]], %[[I]]] : memref<2x3xf32>
// LOOP-NEXT:        memref.store %[[V]], %out0[%[[I]], %[[J]]] : memref<3x2xf32>

// -----

func.func @broadcast(%v: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty : tensor<4x3xf32>
  %b = tensor.broadcast {dimensions = array<i64: 0>} ins(%v : tensor<3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %b : tensor<4x3xf32>
}
// CHECK: %b = tensor.broadcast {dimensions = array<i64: 0>} ins(%v : tensor<3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
// LOOP-LABEL: func.func @broadcast
// LOOP:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// LOOP-NEXT:         ^bb0(%[[I:.*]]: index):
// LOOP-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// LOOP-NEXT:      ^bb0(%[[J:.*]]: index):
// LOOP-NEXT:        %[[V:.*]] = memref.load %v[%[[J]]] : memref<3xf32>
// LOOP-NEXT:        memref.store %[[V]], %out0[%[[I]], %[[J]]] : memref<4x3xf32>

// -----

func.func @concat(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %c = tensor.concat %x, %y {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  func.return %c : tensor<2x8xf32>
}
// CHECK: %c = tensor.concat %x, %y {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// LOOP-LABEL: func.func @concat
// LOOP:             memref.store %{{.*}}, %out0[%[[A:.*]], %[[B:.*]]] : memref<2x8xf32>
// LOOP:             %[[THREE:.*]] = arith.constant 3 : index
// LOOP-NEXT:        %[[SHIFTED:.*]] = arith.addi %{{.*}}, %[[THREE]] : index
// LOOP-NEXT:        %[[Y:.*]] = memref.load %y[%{{.*}}, %{{.*}}] : memref<2x5xf32>
// LOOP-NEXT:        memref.store %[[Y]], %out0[%{{.*}}, %[[SHIFTED]]] : memref<2x8xf32>
