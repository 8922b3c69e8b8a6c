// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The shape rules of ops_transformer.py: each case breaks one.

// Attention: Q's heads must be a multiple of K's (grouped-query attention).
func.func @attention_groups(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x3x4x8xf32> {
  %y, %pk, %pv, %qk = graph.attention %q, %k, %v : (tensor<1x3x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> (tensor<1x3x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x3x4x6xf32>)
  func.return %y : tensor<1x3x4x8xf32>
}

// CHECK: graph.attention: Q's heads (3) must be a multiple of K's (2)

// -----

// Attention: 3-D operands need the head counts.
func.func @attention_heads(%q: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %y, %pk, %pv, %qk = graph.attention %q, %q, %q : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>)
  func.return %y : tensor<1x4x8xf32>
}

// CHECK: graph.attention: 3-D Q, K and V need q_num_heads and kv_num_heads

// -----

// RotaryEmbedding: the caches hold rotary_embedding_dim / 2 angles.
func.func @rotary_cache(%x: tensor<1x2x4x8xf32>, %c: tensor<1x4x3xf32>) -> tensor<1x2x4x8xf32> {
  %y = graph.rotary_embedding %x, %c, %c : (tensor<1x2x4x8xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}

// CHECK: graph.rotary_embedding: cos_cache's last dim must be rotary_embedding_dim / 2: 3 vs 4

// -----

// TensorScatter: the update cannot be longer than the cache.
func.func @scatter_long(%c: tensor<2x4x8xf32>, %u: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %y = graph.tensor_scatter %c, %u : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// CHECK: graph.tensor_scatter: update's sequence (6) is longer than the cache's (4)
