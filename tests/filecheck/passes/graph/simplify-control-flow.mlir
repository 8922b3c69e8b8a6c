// RUN: ember-opt %s -p graph-simplify | filecheck %s

// graph-simplify runs graph-unroll-control-flow after constant folding: the
// condition Size(x) > 4 folds to a constant (x's shape is static), and the
// If becomes its then branch.
func.func @if_on_folded_condition(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %size = graph.size %x : (tensor<2x3xf32>) -> tensor<i64>
  %four = graph.constant dense<4> : tensor<i64>
  %c = graph.greater %size, %four : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %r = graph.if %c : (tensor<i1>) -> (tensor<?x3xf32>) {
    %n = graph.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    graph.yield %n : tensor<2x3xf32>
  } else {
    %b = graph.concat %x, %x {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    graph.yield %b : tensor<4x3xf32>
  }
  func.return %r : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @if_on_folded_condition(%x: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %n = graph.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %n : tensor<2x3xf32>
