// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s


// ReduceMax lowers to a reduction generic from a NaN fill whose body is one
// NaN-skipping max; ReduceSumSquare's body squares each element first.
func.func @from_graph(%x: tensor<2x3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %axes = graph.constant dense<1> : tensor<1xi64>
  %m = graph.reduce_max %x, axes %axes {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  %s = graph.reduce_sum_square %x, axes %axes {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  func.return %m, %s : tensor<2x4xf32>, tensor<2x4xf32>
}
// CHECK-LABEL: func.func @from_graph
// ReduceMax starts from NaN, which its NaN-skipping max drops (docs/semantics.md).
// CHECK:         %[[NANV:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:    %[[NANE:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:    %[[NAN:.*]] = linalg.fill ins(%[[NANV]] : f32) outs(%[[NANE]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%[[NAN]] : tensor<2x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxnumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
// CHECK-NEXT:    } -> tensor<2x4xf32>
// CHECK:         %s = linalg.generic
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
