// RUN: ember-opt %s | ember-opt | filecheck %s

// The ops of ops_transformer.py: RMSNormalization, SwiGLU, RotaryEmbedding
// (3-D X with position_ids), TensorScatter (circular), CausalConvWithState
// (bias, past state, SiLU), LinearAttention (gated), and Attention in both
// layouts: 4-D with a boolean mask, causal and a KV cache (present_key grows
// by past_key's 2 rows), and 3-D grouped-query (4 query heads over 2) with softcap.

func.func @transformer(%x: tensor<2x4x8xf32>, %s: tensor<8xf32>, %q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x8xf32>, %m: tensor<4x6xi1>, %pk: tensor<2x3x2x8xf32>, %pv: tensor<2x3x2x8xf32>, %q3: tensor<2x4x32xf32>, %k3: tensor<2x6x16xf32>, %v3: tensor<2x6x16xf32>, %cos: tensor<16x4xf32>, %sin: tensor<16x4xf32>, %pos: tensor<2x4xi64>, %cache: tensor<2x3x16x8xf32>, %idx: tensor<2xi64>, %w: tensor<4x1x3xf32>, %cb: tensor<4xf32>, %ps: tensor<2x4x2xf32>, %g: tensor<2x4x2xf32>) -> tensor<2x4x8xf32> {
  %rms = graph.rms_normalization %x, %s {epsilon = 1.0e-06 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %sw = graph.swiglu %x, %x {alpha = 1.5 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %rot = graph.rotary_embedding %x, %cos, %sin, position_ids %pos {num_heads = 1 : i64} : (tensor<2x4x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %ts = graph.tensor_scatter %cache, %pk, write_indices %idx {mode = "circular"} : (tensor<2x3x16x8xf32>, tensor<2x3x2x8xf32>, tensor<2xi64>) -> tensor<2x3x16x8xf32>
  %y, %pk2, %pv2, %qk = graph.attention %q, %k, %v, attn_mask %m, past_key %pk, past_value %pv {is_causal = 1 : i64} : (tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, tensor<4x6xi1>, tensor<2x3x2x8xf32>, tensor<2x3x2x8xf32>) -> (tensor<2x3x4x8xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>, tensor<2x3x4x8xf32>)
  %y3, %k4, %v4, %qk3 = graph.attention %q3, %k3, %v3 {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, softcap = 2.0 : f32} : (tensor<2x4x32xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> (tensor<2x4x32xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x4x4x6xf32>)
  %cc, %state = graph.causal_conv_with_state %x, %w, bias %cb, past_state %ps {activation = "silu"} : (tensor<2x4x8xf32>, tensor<4x1x3xf32>, tensor<4xf32>, tensor<2x4x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x2xf32>)
  %la, %la_state = graph.linear_attention %x, %x, %x, decay %g {q_num_heads = 2 : i64, kv_num_heads = 2 : i64, update_rule = "gated"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
  func.return %rms : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @transformer
// CHECK-NEXT:    %rms = graph.rms_normalization %x, %s {epsilon = 1.000000e-06 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %sw = graph.swiglu %x, %x {alpha = 1.500000e+00 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %rot = graph.rotary_embedding %x, %cos, %sin, position_ids %pos {num_heads = 1 : i64} : (tensor<2x4x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %ts = graph.tensor_scatter %cache, %pk, write_indices %idx {mode = "circular"} : (tensor<2x3x16x8xf32>, tensor<2x3x2x8xf32>, tensor<2xi64>) -> tensor<2x3x16x8xf32>
// CHECK-NEXT:    %y, %pk2, %pv2, %qk = graph.attention %q, %k, %v, attn_mask %m, past_key %pk, past_value %pv {is_causal = 1 : i64} : (tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, tensor<4x6xi1>, tensor<2x3x2x8xf32>, tensor<2x3x2x8xf32>) -> (tensor<2x3x4x8xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>, tensor<2x3x4x8xf32>)
// CHECK-NEXT:    %y3, %k4, %v4, %qk3 = graph.attention %q3, %k3, %v3 {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, softcap = 2.000000e+00 : f32} : (tensor<2x4x32xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> (tensor<2x4x32xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x4x4x6xf32>)
// CHECK-NEXT:    %cc, %state = graph.causal_conv_with_state %x, %w, bias %cb, past_state %ps {activation = "silu"} : (tensor<2x4x8xf32>, tensor<4x1x3xf32>, tensor<4xf32>, tensor<2x4x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x2xf32>)
// CHECK-NEXT:    %la, %la_state = graph.linear_attention %x, %x, %x, decay %g {q_num_heads = 2 : i64, kv_num_heads = 2 : i64, update_rule = "gated"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
// CHECK-NEXT:    func.return %rms : tensor<2x4x8xf32>
