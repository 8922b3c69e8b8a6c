// RUN: ember-opt %s --split-input-file -p convert-tensor-to-loop,loop-generate,licm | filecheck %s --check-prefix=LICM
// RUN: ember-opt %s --split-input-file -p 'convert-tensor-to-loop,loop-generate,scf-parallel-loop-tiling{parallel-loop-tile-sizes=2}' | filecheck %s --check-prefix=TILE
// RUN: ember-opt %s --split-input-file -p convert-tensor-to-loop,loop-generate,licm,loop-fuse,loop-pack-weights,loop-plan-memory,loop-outline-kernels,convert-loop-to-llvm | filecheck %s --check-prefix=LLVM

// The loop level is upstream scf/memref/arith IR, so xDSL's own loop passes
// run on what Ember's bufferization produces, and Ember's later passes on
// what they leave. A reduction is a sequential scf.for whose body computes
// 2 * x[i] with a constant made inside the body: xDSL's `licm` (which moves
// code out of scf.for) hoists it before the loop, and the rest of the CPU
// pipeline then lowers the nest to the llvm dialect.
func.func @twice_sum(%x: tensor<8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<8xf32>) outs(%f : tensor<f32>) {
  ^bb0(%p: f32, %o: f32):
    %two = arith.constant 2.000000e+00 : f32
    %m = arith.mulf %p, %two : f32
    %n = arith.addf %o, %m : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  func.return %y : tensor<f32>
}

// LICM-LABEL: func.func @twice_sum
// LICM:         %two = arith.constant 2.000000e+00 : f32
// LICM-NEXT:    scf.for %[[I:.*]] = %c0{{.*}} to %c8 step %c1{{.*}} {
// LICM-NEXT:      %[[X:.*]] = memref.load %x[%[[I]]] : memref<8xf32>
// LICM-NEXT:      %[[ACC:.*]] = memref.load %out0[] : memref<f32>
// LICM-NEXT:      %m = arith.mulf %[[X]], %two : f32

// LLVM-LABEL: llvm.func @twice_sum(%x: !llvm.ptr, %out0: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) {
// LLVM:         llvm.func @twice_sum_kernel{{[0-9]+}}(
// LLVM:           llvm.fmul

// -----

// `scf-parallel-loop-tiling` tiles the innermost scf.parallel of the nest by
// 2: a tile loop around a point loop whose size is what is left of the
// range; after licm, the CPU pipeline lowers this nest too.
func.func @flat(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 * 4 + d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// TILE-LABEL: func.func @flat
// TILE:         "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// TILE-NEXT:    ^bb0(%[[ROW:.*]]: index):
// TILE:           "scf.parallel"(%c0, %c4, %[[TILE_STEP:.*]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// TILE-NEXT:      ^bb0(%[[TILE:.*]]: index):
// TILE-NEXT:        %[[SIZE:.*]] = affine.min
// TILE-NEXT:        "scf.parallel"(%{{.*}}, %[[SIZE]], %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// TILE-NEXT:        ^bb0(%[[POINT:.*]]: index):
// TILE-NEXT:          %[[COL:.*]] = arith.addi %[[TILE]], %[[POINT]] : index
// TILE:               memref.store %n, %out0[%[[ROW]], %[[COL]]] : memref<4x4xf32>

// LLVM-LABEL: llvm.func @flat(%x: !llvm.ptr, %out0: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) {
// LLVM-NEXT:    llvm.call @flat_kernel0(%x, %out0) : (!llvm.ptr, !llvm.ptr) -> ()
