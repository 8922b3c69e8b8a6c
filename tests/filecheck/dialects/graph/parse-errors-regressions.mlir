// RUN: ember-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// A misspelled attribute is an error, not a silently ignored attribute.
func.func @typo(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = graph.conv %x, %w {stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
// CHECK: :[[# @LINE - 3]]:{{[0-9]+}}
// CHECK: graph.conv has no attribute 'stride'

// -----

// A trailing comma needs an operand after it.
func.func @trailing_comma(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.relu %x, : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: :[[# @LINE - 3]]:{{[0-9]+}}
// CHECK: operand expected

// -----

// An unknown optional-operand keyword is reported at the keyword.
func.func @keyword(%x: tensor<2xf32>, %m: tensor<f32>) -> tensor<2xf32> {
  %y = graph.clip %x, lower %m : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: :[[# @LINE - 3]]:23
// CHECK: 'lower' is not an optional operand of graph.clip
