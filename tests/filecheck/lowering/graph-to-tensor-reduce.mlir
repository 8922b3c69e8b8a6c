// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s


// ReduceMax lowers to tensor.reduce from a -inf fill; ReduceSumSquare (each
// element contributes its square) stays a reduction generic.
func.func @from_graph(%x: tensor<2x3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %axes = graph.constant dense<1> : tensor<1xi64>
  %m = graph.reduce_max %x, axes %axes {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  %s = graph.reduce_sum_square %x, axes %axes {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  func.return %m, %s : tensor<2x4xf32>, tensor<2x4xf32>
}
// CHECK-LABEL: func.func @from_graph
// ReduceMax starts from NaN, which its NaN-skipping max drops (docs/semantics.md).
// CHECK:         %[[NAN:.*]] = tensor.fill 0x7fc00000 : f32 : tensor<2x4xf32>
// CHECK-NEXT:    %m = tensor.reduce {dimensions = array<i64: 1>, kind = "max"} ins(%x : tensor<2x3x4xf32>) outs(%[[NAN]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         %s = tensor.generic
