// RUN: ember-opt %s -p convert-tensor-to-loop,convert-linalg-to-loops | filecheck %s
// RUN: ember-opt %s -p convert-tensor-to-loop,convert-linalg-to-loops,loop-pack-weights,loop-plan-memory,loop-outline-kernels,convert-loop-to-llvm | filecheck %s --check-prefix=LLVM

// Bufferization leaves upstream linalg ops on memrefs, so xDSL's own
// `convert-linalg-to-loops` can stand in for Ember's `loop-generate` (which
// obeys schedules; the upstream pass knows none): it makes scf.for nests in
// the declared dim order, and Ember's later passes lower what it leaves.
func.func @relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %zero = arith.constant 0.000000e+00 : f32
    %y = arith.maximumf %p, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @relu(%x: memref<4x8xf32>, %out0: memref<4x8xf32>) {
// CHECK-NOT:     linalg.generic
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %p = memref.load %x[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:        %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %y = arith.maximumf %p, %zero : f32
// CHECK-NEXT:        memref.store %y, %out0[%[[I]], %[[J]]] : memref<4x8xf32>

// LLVM-LABEL: llvm.func @relu(%x: !llvm.ptr, %out0: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) {
// LLVM-NEXT:    llvm.call @relu_kernel0(%x, %out0) : (!llvm.ptr, !llvm.ptr) -> ()
// LLVM:         llvm.func @relu_kernel0(
// LLVM:           llvm.call_intrinsic "llvm.maximum.f32"
