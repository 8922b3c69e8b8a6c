// RUN: ember-opt %s -p graph-fuse | filecheck %s

// Attention anchors a group of its own kind, as a contraction does (its
// lowering is several loop nests that the group makes one kernel), with
// the elementwise ops after it; not when a result other than Y is used
// (a group yields one value).
func.func @attention(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x2x3x8xf32> {
  %y, %pk, %pv, %qk = graph.attention %q, %k, %v {is_causal = 1 : i64} : (tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x3x5xf32>)
  %r = graph.relu %y : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  func.return %r : tensor<1x2x3x8xf32>
}
func.func @cache_used(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>) {
  %y, %pk, %pv, %qk = graph.attention %q, %k, %v : (tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x3x5xf32>)
  func.return %y, %pk : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>
}

// CHECK-LABEL: func.func @attention
// CHECK-NEXT:    %r = graph.fused "attention" (%q, %k, %v)
// CHECK:           %y, %pk, %pv, %qk = graph.attention %q_1, %k_1, %v_1 {is_causal = 1 : i64}
// CHECK-NEXT:      %r_1 = graph.relu %y
// CHECK-NEXT:      graph.yield %r_1

// CHECK-LABEL: func.func @cache_used
// CHECK-NOT:     graph.fused
// CHECK:         graph.attention %q, %k, %v
