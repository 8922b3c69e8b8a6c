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
// LOOP:         loop.for %[[I:.*]] = 0 to 2 step 1 parallel {
// LOOP-NEXT:      loop.for %[[K:.*]] = 0 to 3 step 1 {
// LOOP-NEXT:        loop.for %[[J:.*]] = 0 to 4 step 1 parallel {
// LOOP-NEXT:          %[[X:.*]] = memref.load %x[%[[I]], %[[K]], %[[J]]] : memref<2x3x4xf32>
// LOOP-NEXT:          %[[ACC:.*]] = memref.load %out0[%[[I]], %[[J]]] : memref<2x4xf32>
// LOOP-NEXT:          %[[SUM:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// LOOP-NEXT:          memref.store %[[SUM]], %out0[%[[I]], %[[J]]] : memref<2x4xf32>
