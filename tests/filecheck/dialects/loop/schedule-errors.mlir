// RUN: ember-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// RUN: not ember-opt %s 2>&1 | filecheck %s --check-prefix=FIRST

// Parse errors of #loop.schedule (its fields on their own; a schedule that
// does not fit the op it is on is reported by the passes that read it, see
// lowering/tensor-to-loop-schedule-errors.mlir). With --parsing-diagnostics each
// chunk's error is printed (location, source line, message); every case
// checks the line:column and the message. Without it, ember-opt stops at the
// first error with one `file:line:col: error: message` line (FIRST).

// The order must be a permutation of the dims: a dim twice.
func.func @f0() attributes {s = #loop.schedule<order = [0, 0, 1]>} {
  func.return
}

// FIRST: schedule-errors.mlir:[[# @LINE - 4]]:48: error: loop.schedule: order [0, 0, 1] is not a permutation of 0..2
// FIRST-NOT: error:
// CHECK:      schedule-errors.mlir:[[# @LINE - 6]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: order [0, 0, 1] is not a permutation of 0..2

// -----

// The order must be a permutation of the dims: no dim past the last.
func.func @f1() attributes {s = #loop.schedule<order = [0, 2]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: order [0, 2] is not a permutation of 0..1

// -----

// One tile size per dim.
func.func @f2() attributes {s = #loop.schedule<order = [0, 1], tiles = [4]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: tiles needs one size per dim (2), got 1

// -----

// A tile size is 0 (untiled) or positive.
func.func @f3() attributes {s = #loop.schedule<order = [0, 1], tiles = [4, -2]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: tile sizes must be 0 (untiled) or positive, got [4, -2]

// -----

// Parallel dims are dims of the order, each once.
func.func @f4() attributes {s = #loop.schedule<order = [0, 1], parallel = [1, 1]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: parallel [1, 1] must name distinct dims of 0..1

// -----

// A parallel dim past the last.
func.func @f5() attributes {s = #loop.schedule<order = [0, 1], parallel = [2]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: parallel [2] must name distinct dims of 0..1

// -----

// Unrolling emits the body at least once (and at most 64 times).
func.func @f6() attributes {s = #loop.schedule<order = [0], unroll = 0>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: unroll must be from 1 to 64, got 0

// -----

// The vector width is 0 (no hint) or a power of two up to 64.
func.func @f7() attributes {s = #loop.schedule<order = [0], vector = -8>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: vector must be 0 (no hint) or a power of two up to 64, got -8

// -----

// An operand packed twice (which operands an op has is checked against the op).
func.func @f8() attributes {s = #loop.schedule<order = [0, 1], pack = [1, 1]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: pack [1, 1] must name distinct operands (numbered from 0)

// -----

// The order is required (it also gives the number of dims).
func.func @f9() attributes {s = #loop.schedule<tiles = [1]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:48{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: 'order' is required

// -----

// A field given twice (the column points at the second).
func.func @f10() attributes {s = #loop.schedule<order = [0], order = [0]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:62{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: 'order' is given twice

// -----

// An unknown field (`tile` for `tiles`).
func.func @f11() attributes {s = #loop.schedule<order = [0], tile = [1]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:62{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}Expected one of 'micro', 'order', 'pack', 'parallel', 'tiles', 'unroll', 'vector' (a loop.schedule field)

// -----

// A boolean is no unroll factor.
func.func @f12() attributes {s = #loop.schedule<order = [0], unroll = true>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:71{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}Expected integer literal

// -----

// A micro-kernel needs a vector width, the width of its accumulators.
func.func @f_micro_vector() attributes {s = #loop.schedule<order = [0, 1], micro = [0, 1, 4, 16]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:60{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: micro needs a vector width (vector = W), the width of its accumulators

// -----

// NR must be a whole number of vectors.
func.func @f_micro_columns() attributes {s = #loop.schedule<order = [0, 1], vector = 8, micro = [0, 1, 4, 12]>} {
  func.return
}

// CHECK:      schedule-errors.mlir:[[# @LINE - 4]]:61{{$}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{.*}}
// CHECK-NEXT: {{ *}}loop.schedule: micro's MR must be positive and NR a multiple of vector (8), got 4 and 12
