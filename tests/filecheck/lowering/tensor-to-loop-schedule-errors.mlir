// RUN: ember-opt %s -p convert-tensor-to-loop --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s -p convert-tensor-to-loop --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST

// Schedules that do not fit their op: convert-tensor-to-loop names the op
// (its name, its result and its function) and the rule, never a traceback.
// (A schedule wrong on its own, e.g. an order that is no permutation, does
// not even parse: dialects/loop/schedule-errors.mlir.)
//
// - prefix CHECK, with --verify-diagnostics every chunk reports its message;
// - prefix FIRST, without it the first error stops ember-opt with a one-line
//   `file: error: message` on stderr and exit status 1.

// A matmul iterates over three dims (m, n, k); the schedule orders two.
func.func @too_few_dims(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %m = linalg.matmul {schedule = #loop.schedule<order = [1, 0]>} ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %m : tensor<4x5xf32>
}

// CHECK:      {{^}}linalg.matmul %m in @too_few_dims: schedule order [1, 0] has 2 dims, the op iterates over 3{{$}}
// FIRST:      {{^}}{{.*}}tensor-to-loop-schedule-errors.mlir: error: linalg.matmul %m in @too_few_dims: schedule order [1, 0] has 2 dims, the op iterates over 3{{$}}
// FIRST-NOT:  {{.}}

// -----

// The reduced dim of a reduction (the generic convert-graph-to-tensor makes of
// a ReduceSum) cannot run as a parallel loop.
func.func @parallel_reduction(%x: tensor<2x3xf32>, %f: tensor<2xf32>) -> tensor<2xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x3xf32>) outs(%f : tensor<2xf32>) attrs = {schedule = #loop.schedule<order = [0, 1], parallel = [0, 1]>} {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// CHECK:      {{^}}linalg.generic %r in @parallel_reduction: schedule runs d1 in parallel, but d1 is a reduction dim{{$}}

// -----

// The `schedule` attribute must be a #loop.schedule.
func.func @not_a_schedule(%x: tensor<4xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {schedule = [0]} {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:      {{^}}linalg.generic %y in @not_a_schedule: 'schedule' must be a #loop.schedule, got [0 : i64]{{$}}
