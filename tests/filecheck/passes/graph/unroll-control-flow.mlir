// RUN: ember-opt %s --split-input-file -p graph-unroll-control-flow | filecheck %s

// An If on a constant condition becomes the branch it takes; the result type
// follows the branch (tensor<?xf32> becomes tensor<4xf32>).
func.func @constant_if(%a: tensor<2xf32>) -> tensor<?xf32> {
  %c = graph.constant dense<false> : tensor<i1>
  %r = graph.if %c : (tensor<i1>) -> (tensor<?xf32>) {
    graph.yield %a : tensor<2xf32>
  } else {
    %b = graph.concat %a, %a {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    graph.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @constant_if(%a: tensor<2xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %b = graph.concat %a, %a {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %b : tensor<4xf32>

// -----

// A run-time condition stays.
func.func @runtime_if(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.if %c : (tensor<i1>) -> (tensor<2xf32>) {
    graph.yield %a : tensor<2xf32>
  } else {
    %n = graph.neg %a : (tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// CHECK-LABEL: func.func @runtime_if
// CHECK:         graph.if %c

// -----

// A Scan of 3 steps: the scan input read from the end (direction 1), one
// slice per step (Gather), the state carried, and the scan output stacked
// along axis 1 (Unsqueeze + Concat).
func.func @scan(%s0: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  %s, %ys = graph.scan(%s0, %xs) {num_scan_inputs = 1 : i64, scan_input_directions = array<i64: 1>, scan_output_axes = array<i64: 1>} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  ^bb0(%st: tensor<2xf32>, %x: tensor<2xf32>):
    %n = graph.add %st, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n, %n : tensor<2xf32>, tensor<2xf32>
  }
  func.return %s, %ys : tensor<2xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @scan
// CHECK-NEXT:    %[[I2:.*]] = graph.constant dense<2> : tensor<i64>
// CHECK-NEXT:    %[[X2:.*]] = graph.gather %xs, %[[I2]] {axis = 0 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32>
// CHECK-NEXT:    %[[N0:.*]] = graph.add %s0, %[[X2]]
// CHECK-NEXT:    %[[I1:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-NEXT:    %[[X1:.*]] = graph.gather %xs, %[[I1]]
// CHECK-NEXT:    %[[N1:.*]] = graph.add %[[N0]], %[[X1]]
// CHECK-NEXT:    %[[I0:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK-NEXT:    %[[X0:.*]] = graph.gather %xs, %[[I0]]
// CHECK-NEXT:    %[[N2:.*]] = graph.add %[[N1]], %[[X0]]
// CHECK-NEXT:    %[[AXIS:.*]] = graph.constant dense<1> : tensor<1xi64>
// CHECK-NEXT:    %[[U0:.*]] = graph.unsqueeze %[[N0]], %[[AXIS]] : (tensor<2xf32>, tensor<1xi64>) -> tensor<2x1xf32>
// CHECK-NEXT:    %[[U1:.*]] = graph.unsqueeze %[[N1]], %[[AXIS]]
// CHECK-NEXT:    %[[U2:.*]] = graph.unsqueeze %[[N2]], %[[AXIS]]
// CHECK-NEXT:    %ys = graph.concat %[[U0]], %[[U1]], %[[U2]] {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[N2]], %ys

// -----

// A Loop with a constant trip count and no condition operand, whose body
// passes the condition on: one copy of the body per iteration, reading its
// iteration number as a constant; a body value from above (%w) is used as is.
func.func @loop(%a: tensor<2xf32>, %w: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %m = graph.constant dense<2> : tensor<i64>
  %f, %vs = graph.loop(%m, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    %i_f = graph.cast %i {to = f32} : (tensor<i64>) -> tensor<f32>
    %s = graph.mul %w, %i_f : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    %n = graph.add %v, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %c2 = graph.identity %cc : (tensor<i1>) -> tensor<i1>
    graph.yield %c2, %n, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  func.return %f, %vs : tensor<2xf32>, tensor<?x2xf32>
}

// CHECK-LABEL: func.func @loop(%a: tensor<2xf32>, %w: tensor<2xf32>) -> (tensor<2xf32>, tensor<2x2xf32>)
// CHECK:         %[[ZERO:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK-NEXT:    %[[F0:.*]] = graph.cast %[[ZERO]] {to = f32}
// CHECK-NEXT:    %[[S0:.*]] = graph.mul %w, %[[F0]]
// CHECK-NEXT:    %[[N0:.*]] = graph.add %a, %[[S0]]
// CHECK:         %[[ONE:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-NEXT:    %[[F1:.*]] = graph.cast %[[ONE]] {to = f32}
// CHECK-NEXT:    %[[S1:.*]] = graph.mul %w, %[[F1]]
// CHECK-NEXT:    %[[N1:.*]] = graph.add %[[N0]], %[[S1]]
// CHECK:         %vs = graph.concat {{.*}} {axis = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[N1]], %vs : tensor<2xf32>, tensor<2x2xf32>

// -----

// Left alone: a run-time trip count; a body that computes its condition; a
// Scan over more steps than MAX_UNROLL_ITERATIONS (256).
func.func @not_static(%m: tensor<i64>, %a: tensor<2xf32>, %long: tensor<300x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %f = graph.loop(%m, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    graph.yield %cc, %v : tensor<i1>, tensor<2xf32>
  }
  %three = graph.constant dense<3> : tensor<i64>
  %g = graph.loop(%three, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    %lim = graph.constant dense<1> : tensor<i64>
    %more = graph.less %i, %lim : (tensor<i64>, tensor<i64>) -> tensor<i1>
    graph.yield %more, %v : tensor<i1>, tensor<2xf32>
  }
  %s = graph.scan(%a, %long) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<300x2xf32>) -> tensor<2xf32> {
  ^bb0(%st: tensor<2xf32>, %x: tensor<2xf32>):
    %n = graph.add %st, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n : tensor<2xf32>
  }
  func.return %f, %g, %s : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @not_static
// CHECK:         %f = graph.loop(%m, %a)
// CHECK:         %g = graph.loop(%three, %a)
// CHECK:         %s = graph.scan(%a, %long)
