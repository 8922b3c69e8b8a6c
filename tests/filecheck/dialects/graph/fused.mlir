// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// graph.fused round-trips: operands, block arguments, body and yield.
func.func @roundtrip(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %z = graph.fused "elementwise" (%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
    %s = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %r = graph.relu %s : (tensor<2x3xf32>) -> tensor<2x3xf32>
    graph.yield %r : tensor<2x3xf32>
  }
  func.return %z : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @roundtrip
// CHECK-NEXT:    %z = graph.fused "elementwise" (%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
// CHECK-NEXT:      %s = graph.add %a, %b
// CHECK-NEXT:      %r = graph.relu %s
// CHECK-NEXT:      graph.yield %r : tensor<2x3xf32>
// CHECK-NEXT:    }

// -----

// The yield must match the results.
func.func @yield_type(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %z = graph.fused "elementwise" (%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
    %n = graph.neg %b : (tensor<3xf32>) -> tensor<3xf32>
    graph.yield %n : tensor<3xf32>
  }
  func.return %z : tensor<2x3xf32>
}
// CHECK: graph.fused: graph.yield must yield the results' types

// -----

// The block arguments must match the operands.
func.func @arguments(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = graph.fused "elementwise" (%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<3x2xf32>):
    %n = graph.transpose %a : (tensor<3x2xf32>) -> tensor<2x3xf32>
    graph.yield %n : tensor<2x3xf32>
  }
  func.return %z : tensor<2x3xf32>
}
// CHECK: graph.fused: the block arguments must have the operands' types, in order

// -----

// The body is isolated from above: outside values come in as operands.
func.func @isolated(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = graph.fused "elementwise" () : () -> tensor<2x3xf32> {
    %n = graph.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    graph.yield %n : tensor<2x3xf32>
  }
  func.return %z : tensor<2x3xf32>
}
// CHECK: Operation using value defined out of its IsolatedFromAbove parent
