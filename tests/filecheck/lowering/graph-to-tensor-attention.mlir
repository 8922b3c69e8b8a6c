// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// Attention (grouped-query: 4 query heads over 2 key heads, causal): Q is
// viewed as [batch, kv heads, group, sequence, size], one contraction gives
// the scores without copying the keys per group (the keys transposed first,
// so that the key index is innermost in both), one generic scales and
// masks them (the causal limit from the row and column indices), the
// softmax is a max, an exp-sum and a guarded division, and a second
// contraction reads V.
func.func @attention(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32> {
  %y, %pk, %pv, %qk = graph.attention %q, %k, %v {is_causal = 1 : i64} : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x4x3x5xf32>)
  func.return %y : tensor<1x4x3x8xf32>
}

// CHECK-LABEL: func.func @attention
// CHECK:         %[[Q5:.*]] = tensor.reshape %q(%{{.*}}) : (tensor<1x4x3x8xf32>, tensor<5xi64>) -> tensor<1x2x2x3x8xf32>
// CHECK:         %[[KT:.*]] = linalg.generic {{.*}} ins(%k : tensor<1x2x5x8xf32>) outs(%{{.*}} : tensor<1x2x8x5xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q5]], %[[KT]] : tensor<1x2x2x3x8xf32>, tensor<1x2x8x5xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x3x5xf32>)
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x3x5xf32>)
// CHECK:           linalg.index 2
// CHECK:           linalg.index 3
// CHECK:           arith.cmpi sle
// CHECK:           arith.select
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:         math.exp
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:         arith.divf
// CHECK:         %[[P5:.*]] = tensor.reshape %{{.*}} -> tensor<1x2x2x3x5xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[P5]], %v : tensor<1x2x2x3x5xf32>, tensor<1x2x5x8xf32>)
// CHECK:         tensor.reshape %[[Y]](%{{.*}}) : (tensor<1x2x2x3x8xf32>, tensor<4xi64>) -> tensor<1x4x3x8xf32>
