// RUN: ember-opt %s | ember-opt | filecheck %s

// graph.if, graph.loop and graph.scan print and parse back: one block per
// region, ending in graph.yield; a body uses values from above (%a, %w)
// directly, as ONNX subgraphs read outer-scope names.

func.func @control_flow(%c: tensor<i1>, %a: tensor<2xf32>, %xs: tensor<3x2xf32>, %m: tensor<i64>) -> (tensor<?xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<?x2xf32>) {
  %w = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = graph.if %c : (tensor<i1>) -> (tensor<?xf32>) {
    %t = graph.add %a, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %t : tensor<2xf32>
  } else {
    %b = graph.concat %a, %a {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    graph.yield %b : tensor<4xf32>
  }
  %s, %ys = graph.scan(%a, %xs) {num_scan_inputs = 1 : i64, scan_input_directions = array<i64: 1>, scan_output_axes = array<i64: 1>} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  ^bb0(%st: tensor<2xf32>, %x: tensor<2xf32>):
    %n = graph.add %st, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n, %n : tensor<2xf32>, tensor<2xf32>
  }
  %f, %acc = graph.loop(%m, %c, %a) {loop_segments = array<i64: 1, 1, 1>} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    %n2 = graph.add %v, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %cc, %n2, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  func.return %r, %s, %ys, %f, %acc : tensor<?xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<?x2xf32>
}

// CHECK-LABEL: func.func @control_flow
// CHECK:         %r = graph.if %c : (tensor<i1>) -> (tensor<?xf32>) {
// CHECK-NEXT:      %t = graph.add %a, %w
// CHECK-NEXT:      graph.yield %t : tensor<2xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %b = graph.concat %a, %a
// CHECK-NEXT:      graph.yield %b : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s, %ys = graph.scan(%a, %xs) {num_scan_inputs = 1 : i64, scan_input_directions = array<i64: 1>, scan_output_axes = array<i64: 1>} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:    ^bb0(%st: tensor<2xf32>, %x: tensor<2xf32>):
// CHECK-NEXT:      %n = graph.add %st, %x
// CHECK-NEXT:      graph.yield %n, %n : tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %f, %acc = graph.loop(%m, %c, %a) {loop_segments = array<i64: 1, 1, 1>} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
// CHECK-NEXT:    ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
// CHECK-NEXT:      %n2 = graph.add %v, %w
// CHECK-NEXT:      graph.yield %cc, %n2, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:    }

// A Loop with neither trip count nor condition operand: only carried values.
func.func @loop_carried_only(%a: tensor<2xf32>) -> tensor<2xf32> {
  %f = graph.loop(%a) {loop_segments = array<i64: 0, 0, 1>} : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    %f0 = graph.constant dense<false> : tensor<i1>
    graph.yield %f0, %v : tensor<i1>, tensor<2xf32>
  }
  func.return %f : tensor<2xf32>
}

// CHECK-LABEL: func.func @loop_carried_only
// CHECK:         %f = graph.loop(%a) {loop_segments = array<i64: 0, 0, 1>} : (tensor<2xf32>) -> tensor<2xf32> {
