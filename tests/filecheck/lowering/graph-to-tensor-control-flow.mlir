// RUN: ember-opt %s --split-input-file --verify-diagnostics -p convert-graph-to-tensor | filecheck %s
// RUN: not ember-opt %s -p convert-graph-to-tensor 2>&1 | filecheck %s --check-prefix=FIRST

// Control flow that graph-unroll-control-flow leaves (a run-time condition
// or trip count, more iterations than it unrolls) is refused in one line
// naming the op, what keeps it, and its source node.
func.func @runtime_trip_count(%m: tensor<i64>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %f = graph.loop(%m, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    graph.yield %cc, %v : tensor<i1>, tensor<2xf32>
  } loc("decoder_loop")
  func.return %f : tensor<2xf32>
}

// CHECK:      convert-graph-to-tensor: graph.loop with a run-time trip count (node decoder_loop): the CPU pipeline does not run control flow yet
// FIRST:      error: convert-graph-to-tensor: graph.loop with a run-time trip count (node decoder_loop): the CPU pipeline does not run control flow yet

// -----

func.func @runtime_condition(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.if %c : (tensor<i1>) -> (tensor<2xf32>) {
    graph.yield %a : tensor<2xf32>
  } else {
    %n = graph.neg %a : (tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// CHECK-NEXT: {{//}} -----
// CHECK-NEXT: convert-graph-to-tensor: graph.if with a run-time condition: the CPU pipeline does not run control flow yet
