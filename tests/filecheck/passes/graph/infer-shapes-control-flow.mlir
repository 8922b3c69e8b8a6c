// RUN: ember-opt %s --split-input-file -p graph-infer-shapes | filecheck %s

// graph-infer-shapes infers the regions, then the results. A carried value
// that grows each iteration gets an unknown dim: the body's argument is
// widened until the types settle.
func.func @growing(%m: tensor<i64>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %f = graph.loop(%m, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2xf32>):
    %n = graph.concat %v, %v {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    graph.yield %cc, %n : tensor<i1>, tensor<4xf32>
  }
  func.return %f : tensor<2xf32>
}

// CHECK-LABEL: func.func @growing(%m: tensor<i64>, %a: tensor<2xf32>) -> tensor<?xf32>
// CHECK:         %f = graph.loop(%m, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2xf32>) -> tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<?xf32>):
// CHECK-NEXT:      %n = graph.concat %v, %v {axis = 0 : i64} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>

// -----

// A constant trip count gives the scan output's length; the If's result
// has the dims its branches share.
func.func @lengths(%c: tensor<i1>, %a: tensor<2x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x?xf32>) {
  %m = graph.constant dense<5> : tensor<i64>
  %f, %vs = graph.loop(%m, %a) {loop_segments = array<i64: 1, 0, 1>} : (tensor<i64>, tensor<2x3xf32>) -> (tensor<?x?xf32>, tensor<?x2x3xf32>) {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<?x?xf32>):
    graph.yield %cc, %v, %a : tensor<i1>, tensor<?x?xf32>, tensor<2x3xf32>
  }
  %r = graph.if %c : (tensor<i1>) -> (tensor<?x?xf32>) {
    graph.yield %a : tensor<2x3xf32>
  } else {
    %t = graph.transpose %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
    graph.yield %t : tensor<3x2xf32>
  }
  func.return %vs, %r : tensor<?x2x3xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @lengths
// CHECK-SAME:    -> (tensor<5x2x3xf32>, tensor<?x?xf32>)
// CHECK:         graph.loop(%m, %a) {{.*}} -> (tensor<2x3xf32>, tensor<5x2x3xf32>)
// CHECK-NEXT:    ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %v: tensor<2x3xf32>):
