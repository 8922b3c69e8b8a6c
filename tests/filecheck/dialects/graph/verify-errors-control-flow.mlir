// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The region ops' verifiers name the broken rule.

// A condition holds one i1.
func.func @if_condition(%c: tensor<2xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.if %c : (tensor<2xi1>) -> (tensor<2xf32>) {
    graph.yield %a : tensor<2xf32>
  } else {
    graph.yield %a : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// CHECK: Operation does not verify: graph.if: the condition must hold one element

// -----

// The result has the branches' type (a dim on which they differ is `?`).
func.func @if_result(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  %r = graph.if %c : (tensor<i1>) -> (tensor<3xf32>) {
    graph.yield %a : tensor<2xf32>
  } else {
    graph.yield %b : tensor<2xf32>
  }
  func.return %r : tensor<3xf32>
}

// CHECK: Operation does not verify: graph.if: result #0 has type tensor<3xf32>, but the body gives tensor<2xf32>

// -----

// The branches must agree in element type.
func.func @if_element_types(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xi64>) -> tensor<2xf32> {
  %r = graph.if %c : (tensor<i1>) -> (tensor<2xf32>) {
    graph.yield %a : tensor<2xf32>
  } else {
    graph.yield %b : tensor<2xi64>
  }
  func.return %r : tensor<2xf32>
}

// CHECK: Operation does not verify: graph.if: the branches' values #0 disagree in element type (f32 and i64)

// -----

// A Loop body takes the iteration number, the condition and the carried values.
func.func @loop_arguments(%m: tensor<i64>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %f = graph.loop(%m, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%v: tensor<2xf32>):
    %t = graph.constant dense<true> : tensor<i1>
    graph.yield %t, %v : tensor<i1>, tensor<2xf32>
  }
  func.return %f : tensor<2xf32>
}

// CHECK: Operation does not verify: graph.loop: the body takes the iteration number, the condition and 1 carried values, it has 1 arguments

// -----

// loop_segments must describe the operands.
func.func @loop_segments(%m: tensor<i64>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %f = graph.loop(%m, %a) {loop_segments = array<i64: 1, 1, 1>} : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    graph.yield %cc, %v : tensor<i1>, tensor<2xf32>
  }
  func.return %f : tensor<2xf32>
}

// CHECK: Operation does not verify: graph.loop: loop_segments do not match the operands

// -----

// A Scan's inputs have one length.
func.func @scan_lengths(%s: tensor<2xf32>, %x: tensor<3x2xf32>, %y: tensor<4x2xf32>) -> tensor<2xf32> {
  %r = graph.scan(%s, %x, %y) {num_scan_inputs = 2 : i64} : (tensor<2xf32>, tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<2xf32> {
  ^bb0(%st: tensor<2xf32>, %a: tensor<2xf32>, %b: tensor<2xf32>):
    graph.yield %st : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// CHECK: Operation does not verify: graph.scan: the scan inputs have different lengths [3, 4]

// -----

// A Scan body takes the states, then one slice of each scan input.
func.func @scan_arguments(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> tensor<2xf32> {
  %r = graph.scan(%s, %x) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<2xf32> {
  ^bb0(%st: tensor<2xf32>):
    graph.yield %st : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// CHECK: Operation does not verify: graph.scan: the body takes 2 arguments (states, then scan slices), it has 1

// -----

// A direction is 0 (forward) or 1 (reverse).
func.func @scan_direction(%s: tensor<2xf32>, %x: tensor<3x2xf32>) -> tensor<2xf32> {
  %r = graph.scan(%s, %x) {num_scan_inputs = 1 : i64, scan_input_directions = array<i64: 2>} : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<2xf32> {
  ^bb0(%st: tensor<2xf32>, %a: tensor<2xf32>):
    graph.yield %st : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// CHECK: Operation does not verify: graph.scan: scan_input_directions must be 0 (forward) or 1 (reverse)
