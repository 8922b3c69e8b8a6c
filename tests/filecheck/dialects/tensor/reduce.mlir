// RUN: ember-opt %s --split-input-file | ember-opt --split-input-file | filecheck %s
// RUN: ember-opt %s --split-input-file -p convert-tensor-to-loop | filecheck %s --check-prefix=LOOP

// tensor.reduce folds the input into `init` over `dimensions`; it bufferizes
// through generalize(): the reduced dim is a (non-parallel) loop, the
// output's last dim stays innermost.
func.func @reduce(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<2x4xf32>
  %r = tensor.reduce {dimensions = array<i64: 1>, kind = "add"} ins(%x : tensor<2x3x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK: %r = tensor.reduce {dimensions = array<i64: 1>, kind = "add"} ins(%x : tensor<2x3x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
// LOOP-LABEL: func.func @reduce
// LOOP:         memref.store %{{.*}}, %out0[%{{.*}}, %{{.*}}] : memref<2x4xf32>
// LOOP:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// LOOP-NEXT:         ^bb0(%[[I:.*]]: index):
// LOOP-NEXT:      scf.for %[[K:.*]] = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// LOOP-NEXT:        "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// LOOP-NEXT:        ^bb0(%[[J:.*]]: index):
// LOOP-NEXT:          %[[X:.*]] = memref.load %x[%[[I]], %[[K]], %[[J]]] : memref<2x3x4xf32>
// LOOP-NEXT:          %[[ACC:.*]] = memref.load %out0[%[[I]], %[[J]]] : memref<2x4xf32>
// LOOP-NEXT:          %[[SUM:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// LOOP-NEXT:          memref.store %[[SUM]], %out0[%[[I]], %[[J]]] : memref<2x4xf32>
