// RUN: ember-opt %s -p cse,dce --split-input-file | filecheck %s

// graph ops are Pure, so xDSL's cse merges repeated computations and dce
// drops unused ones.
func.func @merge_and_drop(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %unused = graph.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = graph.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @merge_and_drop
// CHECK-NEXT:    %a = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %c = graph.add %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %c : tensor<2x3xf32>

// -----

// Ops that differ in an attribute or an operand are not merged.
func.func @keep_different(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = graph.leaky_relu %x {alpha = 1.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = graph.leaky_relu %x {alpha = 2.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = graph.leaky_relu %a {alpha = 1.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @keep_different
// CHECK-NEXT:    %a = graph.leaky_relu %x {alpha = 1.000000e-01 : f32}
// CHECK-NEXT:    %b = graph.leaky_relu %x {alpha = 2.000000e-01 : f32}
// CHECK-NEXT:    %c = graph.leaky_relu %a {alpha = 1.000000e-01 : f32}

// -----

// Identical constants are one constant after cse.
func.func @constants(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c1 = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c2 = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a = graph.add %x, %c1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = graph.mul %a, %c2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %b : tensor<3xf32>
}

// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %c1 = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %a = graph.add %x, %c1
// CHECK-NEXT:    %b = graph.mul %a, %c1

// -----

// A graph.fused whose result is unused goes too: its body is pure.
func.func @unused_group(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.fused "elementwise" (%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %r = graph.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    graph.yield %r : tensor<2x3xf32>
  }
  func.return %x : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @unused_group
// CHECK-NEXT:    func.return %x
