// RUN: ember-opt %s -p convert-tensor-to-loop,loop-generate --split-input-file | filecheck %s
// RUN: ember-opt %s -p convert-tensor-to-loop,loop-generate --split-input-file | filecheck %s --check-prefix=COPIES

// loop-generate obeys the `schedule` attribute a structured op carries from
// tensor-level IR through bufferization (#loop.schedule, docs/schedules.md);
// without one it uses the default, whose loop nests generate-from-tensors.mlir
// shows. Schedules that do not fit their op are in
// lowering/tensor-to-loop-schedule-errors.mlir and generate.mlir; schedules
// written on buffer-level ops in generate.mlir. A loop of a dim the schedule
// lists as parallel is an `scf.parallel` (printed in generic form), any
// other an `scf.for`; the bounds are `index` constants made once before the
// nest (%c0, %c8, ...: a repeated name gets a suffix).

// A 10x7 by 7x13 matmul (dims m, n, k) tiled 4 x 5 x 3 and reordered k, m, n:
// no tile divides its extent (10 = 2*4 + 2, 13 = 2*5 + 3, 7 = 2*3 + 1). The
// tile loops (k by 3, m by 4, n by 5, over the full tiles only) run outside
// the point loops; each remainder is peeled into a copy of the rest of the
// nest with its tile offset fixed (k at 6, m at 8, n at 10), so the body
// appears 2 x 2 x 2 = 8 times, each point loop with a constant trip count.
// A tiled dim's index is tile iv + point iv. k is the reduction: its loops
// stay sequential; m and n are listed as parallel.
func.func @matmul(%a: tensor<10x7xf32>, %b: tensor<7x13xf32>) -> tensor<10x13xf32> {
  %f_value = arith.constant 0.000000e+00 : f32
  %f_init = tensor.empty() : tensor<10x13xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<10x13xf32>) -> tensor<10x13xf32>
  %m = linalg.matmul {schedule = #loop.schedule<order = [2, 0, 1], tiles = [4, 5, 3], parallel = [0, 1]>} ins(%a, %b : tensor<10x7xf32>, tensor<7x13xf32>) outs(%f : tensor<10x13xf32>) -> tensor<10x13xf32>
  func.return %m : tensor<10x13xf32>
}

// The zero fill first (not a structured op: no schedule).
// CHECK-LABEL: func.func @matmul(%a: memref<10x7xf32>, %b: memref<7x13xf32>, %out0: memref<10x13xf32>) {
// CHECK:         memref.store
// CHECK-NEXT:    scf.reduce
// CHECK-NEXT:  }) : (index, index, index) -> ()
// CHECK-NEXT:  scf.reduce
// CHECK-NEXT:  }) : (index, index, index) -> ()

// The bounds, then full k tiles, full m tiles, full n tiles:
// CHECK:       scf.for %[[KT:.*]] = %c0{{(_[0-9]+)?}} to %c6{{(_[0-9]+)?}} step %c3{{(_[0-9]+)?}} {
// CHECK-NEXT:    "scf.parallel"(%c0{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[MT:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c10{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[NT:.*]]: index):
// CHECK-NEXT:        scf.for %[[KP:.*]] = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:          %[[K:.*]] = arith.addi %[[KT]], %[[KP]] : index
// CHECK-NEXT:          "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:          ^bb0(%[[MP:.*]]: index):
// CHECK-NEXT:            %[[M:.*]] = arith.addi %[[MT]], %[[MP]] : index
// CHECK-NEXT:            "scf.parallel"(%c0{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:            ^bb0(%[[NP:.*]]: index):
// CHECK-NEXT:              %[[N:.*]] = arith.addi %[[NT]], %[[NP]] : index
// CHECK-NEXT:              %[[A:.*]] = memref.load %a[%[[M]], %[[K]]] : memref<10x7xf32>
// CHECK-NEXT:              %[[B:.*]] = memref.load %b[%[[K]], %[[N]]] : memref<7x13xf32>
// CHECK-NEXT:              %[[C:.*]] = memref.load %out0[%[[M]], %[[N]]] : memref<10x13xf32>
// CHECK-NEXT:              %[[MUL:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:              %[[ADD:.*]] = arith.addf %[[MUL]], %[[C]] : f32
// CHECK-NEXT:              memref.store %[[ADD]], %out0[%[[M]], %[[N]]] : memref<10x13xf32>
// CHECK-NEXT:              scf.reduce
// CHECK-NEXT:            }) : (index, index, index) -> ()
// CHECK-NEXT:            scf.reduce
// CHECK-NEXT:          }) : (index, index, index) -> ()
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// ... the n remainder (3 columns from 10) of the full m and k tiles:
// CHECK-NEXT:      scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:        arith.addi %[[KT]]
// CHECK-NEXT:        "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0
// CHECK-NEXT:          arith.addi %[[MT]]
// CHECK-NEXT:          "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:          ^bb0(%[[NR:.*]]: index):
// CHECK-NEXT:            %[[TEN:.*]] = arith.constant 10 : index
// CHECK-NEXT:            arith.addi %[[TEN]], %[[NR]] : index
// CHECK:                 scf.reduce
// CHECK-NEXT:          }) : (index, index, index) -> ()
// CHECK-NEXT:          scf.reduce
// CHECK-NEXT:        }) : (index, index, index) -> ()
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// ... the m remainder (2 rows from 8), with full n tiles and the n remainder:
// CHECK-NEXT:    "scf.parallel"(%c0{{(_[0-9]+)?}}, %c10{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[NT2:.*]]: index):
// CHECK-NEXT:      scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:        arith.addi %[[KT]]
// CHECK-NEXT:        "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0(%[[MR:.*]]: index):
// CHECK-NEXT:          %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:          arith.addi %[[EIGHT]], %[[MR]] : index
// CHECK-NEXT:          "scf.parallel"(%c0{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:          ^bb0
// CHECK-NEXT:            arith.addi %[[NT2]]
// CHECK:                 scf.reduce
// CHECK-NEXT:          }) : (index, index, index) -> ()
// CHECK-NEXT:          scf.reduce
// CHECK-NEXT:        }) : (index, index, index) -> ()
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK:           "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK:             "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK:             }) : (index, index, index) -> ()
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// The k remainder (1 step from 6), after every full k tile, so each output
// element still sums k = 0, 1, ..., 6 in order; inside it the same four
// copies over m and n:
// CHECK-NEXT:  "scf.parallel"(%c0{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    "scf.parallel"(%c0{{(_[0-9]+)?}}, %c10{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      scf.for %[[KR:.*]] = %c0{{(_[0-9]+)?}} to %c1{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:        %[[SIX:.*]] = arith.constant 6 : index
// CHECK-NEXT:        arith.addi %[[SIX]], %[[KR]] : index
// CHECK:       "scf.parallel"(%c0{{(_[0-9]+)?}}, %c10{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c1{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK:       scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c1{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:    arith.constant 6 : index
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 8 : index
// CHECK-NEXT:      arith.addi
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        arith.constant 10 : index
// CHECK-NEXT:        arith.addi
// CHECK:             scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return

// The body, one multiply-add, is emitted once per copy: 8 times.
// COPIES-COUNT-8: arith.mulf
// COPIES-NOT:     arith.mulf

// -----

// Unrolling by 4 over 10 elements: the loop steps by 4 to 8 and emits the body
// four times (at i, i + 1, i + 2, i + 3); the last two elements run in a
// remainder loop. Both innermost loops carry the vector width hint.
func.func @unrolled(%x: tensor<10xf32>) -> tensor<10xf32> {
  %e = tensor.empty() : tensor<10xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<10xf32>) outs(%e : tensor<10xf32>) attrs = {schedule = #loop.schedule<order = [0], parallel = [0], unroll = 4, vector = 8>} {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<10xf32>
  func.return %y : tensor<10xf32>
}

// CHECK-LABEL: func.func @unrolled(%x: memref<10xf32>, %out0: memref<10xf32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[X0:.*]] = memref.load %x[%[[I]]] : memref<10xf32>
// CHECK-NEXT:      %[[N0:.*]] = arith.negf %[[X0]] : f32
// CHECK-NEXT:      memref.store %[[N0]], %out0[%[[I]]] : memref<10xf32>
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[I1:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CHECK-NEXT:      %[[X1:.*]] = memref.load %x[%[[I1]]] : memref<10xf32>
// CHECK-NEXT:      %[[N1:.*]] = arith.negf %[[X1]] : f32
// CHECK-NEXT:      memref.store %[[N1]], %out0[%[[I1]]] : memref<10xf32>
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[I2:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:      memref.load %x[%[[I2]]]
// CHECK-NEXT:      arith.negf
// CHECK-NEXT:      memref.store %{{.*}}, %out0[%[[I2]]]
// CHECK-NEXT:      arith.constant 3 : index
// CHECK-NEXT:      %[[I3:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:      memref.load %x[%[[I3]]]
// CHECK-NEXT:      arith.negf
// CHECK-NEXT:      memref.store %{{.*}}, %out0[%[[I3]]]
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) {loop.vector_width = 8 : i64} : (index, index, index) -> ()
// CHECK-NEXT:    "scf.parallel"(%c8{{(_[0-9]+)?}}, %c10{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[R:.*]]: index):
// CHECK-NEXT:      %[[XR:.*]] = memref.load %x[%[[R]]] : memref<10xf32>
// CHECK-NEXT:      %[[NR:.*]] = arith.negf %[[XR]] : f32
// CHECK-NEXT:      memref.store %[[NR]], %out0[%[[R]]] : memref<10xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) {loop.vector_width = 8 : i64} : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A tile as large as the extent or larger leaves the dim untiled; a dim left
// out of `parallel` runs sequentially (an scf.for), though it could run in
// parallel; a tile of 1 makes a point loop of one iteration.
func.func @degenerate(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) attrs = {schedule = #loop.schedule<order = [1, 0], tiles = [1, 4]>} {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @degenerate(%x: memref<3x4xf32>, %out0: memref<3x4xf32>) {
// CHECK:         scf.for %[[T:.*]] = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0{{(_[0-9]+)?}} to %c4{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:        scf.for %[[P:.*]] = %c0{{(_[0-9]+)?}} to %c1{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:          %[[I:.*]] = arith.addi %[[T]], %[[P]] : index
// CHECK-NEXT:          %[[V:.*]] = memref.load %x[%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:          memref.store %[[V]], %out0[%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
