// RUN: ember-opt %s | ember-opt | filecheck %s

// The ops of ops_nn.py: Conv (bias present/absent, groups, dilations, auto_pad,
// 1-D), pooling (ceil_mode, VALID, dilations), global pooling, normalisation,
// Gemm (C present/absent, transA/transB), MatMul (batched, 1-D operands),
// Softmax/LogSoftmax and Flatten.
// Not covered: graph.instance_normalization, whose shape rule reads an operand
// 'X' that the op does not have (its first operand is 'input'), so no
// instance_normalization op verifies.

func.func @nn(%img: tensor<1x3x224x224xf32>, %w1: tensor<64x3x7x7xf32>, %b1: tensor<64xf32>, %dw: tensor<64x1x3x3xf32>, %feat: tensor<?x64x56x56xf32>, %gw: tensor<128x32x3x3xf32>, %scale: tensor<64xf32>, %mean: tensor<64xf32>, %var: tensor<64xf32>, %seq: tensor<2x?x768xf32>, %gamma: tensor<768xf32>, %beta: tensor<768xf32>, %vec: tensor<1x2048xf32>, %fc: tensor<1000x2048xf32>, %fcb: tensor<1000xf32>, %q: tensor<8x?x64xf32>, %k: tensor<8x64x?xf32>, %v1: tensor<64xf32>, %sig: tensor<1x4x100xf32>, %kw: tensor<8x4x5xf32>, %proj: tensor<768x3072xf32>) -> tensor<1x1000xf32> {
  // Conv: a 7x7 stride-2 stem with bias; a depthwise conv (group = channels) without bias,
  // SAME_UPPER padding; a grouped dilated conv on a dynamic batch; a 1-D conv.
  %stem = graph.conv %img, %w1, B %b1 {kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %pool = graph.max_pool %stem {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %depthwise = graph.conv %pool, %dw {auto_pad = "SAME_UPPER", group = 64 : i64} : (tensor<1x64x56x56xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x56x56xf32>
  %grouped = graph.conv %feat, %gw {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 2, 2, 2, 2>} : (tensor<?x64x56x56xf32>, tensor<128x32x3x3xf32>) -> tensor<?x128x56x56xf32>
  %conv1d = graph.conv %sig, %kw {strides = array<i64: 2>} : (tensor<1x4x100xf32>, tensor<8x4x5xf32>) -> tensor<1x8x48xf32>
  // Pooling: ceil_mode, VALID, dilations, count_include_pad, storage_order, Indices.
  %pool_ceil = graph.max_pool %feat {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>) -> tensor<?x64x28x28xf32>
  %pool_dilated = graph.max_pool %pool {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, storage_order = 0 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x64x54x54xf32>
  %pool_values, %pool_indices = graph.max_pool %feat {kernel_shape = array<i64: 2, 2>, storage_order = 1 : i64, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>) -> (tensor<?x64x28x28xf32>, tensor<?x64x28x28xi64>)
  %avg = graph.average_pool %pool {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %avg_valid = graph.average_pool %feat {auto_pad = "VALID", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>) -> tensor<?x64x28x28xf32>
  %avg_ceil = graph.average_pool %sig {ceil_mode = 1 : i64, kernel_shape = array<i64: 3>, strides = array<i64: 3>} : (tensor<1x4x100xf32>) -> tensor<1x4x34xf32>
  %gap = graph.global_average_pool %feat : (tensor<?x64x56x56xf32>) -> tensor<?x64x1x1xf32>
  %gmp = graph.global_max_pool %sig : (tensor<1x4x100xf32>) -> tensor<1x4x1xf32>
  // Normalisation.
  %bn = graph.batch_normalization %feat, %scale, %b1, %mean, %var {epsilon = 1.0e-03 : f32, momentum = 0.99 : f32} : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x56x56xf32>
  %bn_default = graph.batch_normalization %pool, %scale, %b1, %mean, %var : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %bn_train, %running_mean, %running_var = graph.batch_normalization %pool, %scale, %b1, %mean, %var {training_mode = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
  %ln, %ln_mean, %ln_inv = graph.layer_normalization %seq, %gamma, B %beta {epsilon = 1.0e-12 : f32} : (tensor<2x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<2x?x768xf32>, tensor<2x?x1xf32>, tensor<2x?x1xf32>)
  %ln_nobias, %ln_mean2, %ln_inv2 = graph.layer_normalization %seq, %gamma {axis = 1 : i64} : (tensor<2x?x768xf32>, tensor<768xf32>) -> (tensor<2x?x768xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %lrn = graph.lrn %pool {alpha = 9.99999974e-05 : f32, beta = 7.500000e-01 : f32, bias = 2.000000e+00 : f32, size = 5 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  // Linear algebra: Gemm with transB and bias, without bias, with transA;
  // MatMul batched with dynamic dims, matrix-vector and vector-vector.
  %logits = graph.gemm %vec, %fc, C %fcb {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transB = 1 : i64} : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  %gemm_nobias = graph.gemm %vec, %fc {transB = 1 : i64} : (tensor<1x2048xf32>, tensor<1000x2048xf32>) -> tensor<1x1000xf32>
  %gemm_ta = graph.gemm %fc, %fc {transA = 1 : i64, alpha = 5.000000e-01 : f32} : (tensor<1000x2048xf32>, tensor<1000x2048xf32>) -> tensor<2048x2048xf32>
  %scores = graph.matmul %q, %k : (tensor<8x?x64xf32>, tensor<8x64x?xf32>) -> tensor<8x?x?xf32>
  %mv = graph.matmul %q, %v1 : (tensor<8x?x64xf32>, tensor<64xf32>) -> tensor<8x?xf32>
  %dot = graph.matmul %v1, %v1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<f32>
  %bcast = graph.matmul %seq, %proj : (tensor<2x?x768xf32>, tensor<768x3072xf32>) -> tensor<2x?x3072xf32>
  // Softmax over the last axis (default) and over an explicit negative axis.
  %probs = graph.softmax %logits : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %attn = graph.softmax %scores {axis = -1 : i64} : (tensor<8x?x?xf32>) -> tensor<8x?x?xf32>
  %logp = graph.log_softmax %logits {axis = 1 : i64} : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
  // Flatten: the default axis 1, axis 0 and a dynamic batch.
  %flat = graph.flatten %gap : (tensor<?x64x1x1xf32>) -> tensor<?x64xf32>
  %flat0 = graph.flatten %pool {axis = 0 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x200704xf32>
  %flat3 = graph.flatten %pool {axis = -1 : i64} : (tensor<1x64x56x56xf32>) -> tensor<3584x56xf32>
  func.return %probs : tensor<1x1000xf32>
}

// The printed form: defaults are omitted, floats are printed in full, and
// printing the parsed output again gives the same text (the RUN line
// prints, parses and prints again).
// CHECK-LABEL: func.func @nn(%img: tensor<1x3x224x224xf32>, %w1: tensor<64x3x7x7xf32>, %b1: tensor<64xf32>, %dw: tensor<64x1x3x3xf32>, %feat: tensor<?x64x56x56xf32>, %gw: tensor<128x32x3x3xf32>, %scale: tensor<64xf32>, %mean: tensor<64xf32>, %var: tensor<64xf32>, %seq: tensor<2x?x768xf32>, %gamma: tensor<768xf32>, %beta: tensor<768xf32>, %vec: tensor<1x2048xf32>, %fc: tensor<1000x2048xf32>, %fcb: tensor<1000xf32>, %q: tensor<8x?x64xf32>, %k: tensor<8x64x?xf32>, %v1: tensor<64xf32>, %sig: tensor<1x4x100xf32>, %kw: tensor<8x4x5xf32>, %proj: tensor<768x3072xf32>) -> tensor<1x1000xf32> {
// CHECK-NEXT:    %stem = graph.conv %img, %w1, B %b1 {kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
// CHECK-NEXT:    %pool = graph.max_pool %stem {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %depthwise = graph.conv %pool, %dw {auto_pad = "SAME_UPPER", group = 64 : i64} : (tensor<1x64x56x56xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %grouped = graph.conv %feat, %gw {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 2, 2, 2, 2>} : (tensor<?x64x56x56xf32>, tensor<128x32x3x3xf32>) -> tensor<?x128x56x56xf32>
// CHECK-NEXT:    %conv1d = graph.conv %sig, %kw {strides = array<i64: 2>} : (tensor<1x4x100xf32>, tensor<8x4x5xf32>) -> tensor<1x8x48xf32>
// CHECK-NEXT:    %pool_ceil = graph.max_pool %feat {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>) -> tensor<?x64x28x28xf32>
// CHECK-NEXT:    %pool_dilated = graph.max_pool %pool {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, storage_order = 0 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x64x54x54xf32>
// CHECK-NEXT:    %pool_values, %pool_indices = graph.max_pool %feat {kernel_shape = array<i64: 2, 2>, storage_order = 1 : i64, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>) -> (tensor<?x64x28x28xf32>, tensor<?x64x28x28xi64>)
// CHECK-NEXT:    %avg = graph.average_pool %pool {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %avg_valid = graph.average_pool %feat {auto_pad = "VALID", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>) -> tensor<?x64x28x28xf32>
// CHECK-NEXT:    %avg_ceil = graph.average_pool %sig {ceil_mode = 1 : i64, kernel_shape = array<i64: 3>, strides = array<i64: 3>} : (tensor<1x4x100xf32>) -> tensor<1x4x34xf32>
// CHECK-NEXT:    %gap = graph.global_average_pool %feat : (tensor<?x64x56x56xf32>) -> tensor<?x64x1x1xf32>
// CHECK-NEXT:    %gmp = graph.global_max_pool %sig : (tensor<1x4x100xf32>) -> tensor<1x4x1xf32>
// CHECK-NEXT:    %bn = graph.batch_normalization %feat, %scale, %b1, %mean, %var {epsilon = 1.000000e-03 : f32, momentum = 9.900000e-01 : f32} : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x56x56xf32>
// CHECK-NEXT:    %bn_default = graph.batch_normalization %pool, %scale, %b1, %mean, %var : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %bn_train, %running_mean, %running_var = graph.batch_normalization %pool, %scale, %b1, %mean, %var {training_mode = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK-NEXT:    %ln, %ln_mean, %ln_inv = graph.layer_normalization %seq, %gamma, B %beta {epsilon = 1.000000e-12 : f32} : (tensor<2x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<2x?x768xf32>, tensor<2x?x1xf32>, tensor<2x?x1xf32>)
// CHECK-NEXT:    %ln_nobias, %ln_mean2, %ln_inv2 = graph.layer_normalization %seq, %gamma {axis = 1 : i64} : (tensor<2x?x768xf32>, tensor<768xf32>) -> (tensor<2x?x768xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
// CHECK-NEXT:    %lrn = graph.lrn %pool {alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 2.000000e+00 : f32, size = 5 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %logits = graph.gemm %vec, %fc, C %fcb {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transB = 1 : i64} : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:    %gemm_nobias = graph.gemm %vec, %fc {transB = 1 : i64} : (tensor<1x2048xf32>, tensor<1000x2048xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:    %gemm_ta = graph.gemm %fc, %fc {transA = 1 : i64, alpha = 5.000000e-01 : f32} : (tensor<1000x2048xf32>, tensor<1000x2048xf32>) -> tensor<2048x2048xf32>
// CHECK-NEXT:    %scores = graph.matmul %q, %k : (tensor<8x?x64xf32>, tensor<8x64x?xf32>) -> tensor<8x?x?xf32>
// CHECK-NEXT:    %mv = graph.matmul %q, %v1 : (tensor<8x?x64xf32>, tensor<64xf32>) -> tensor<8x?xf32>
// CHECK-NEXT:    %dot = graph.matmul %v1, %v1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<f32>
// CHECK-NEXT:    %bcast = graph.matmul %seq, %proj : (tensor<2x?x768xf32>, tensor<768x3072xf32>) -> tensor<2x?x3072xf32>
// CHECK-NEXT:    %probs = graph.softmax %logits : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:    %attn = graph.softmax %scores {axis = -1 : i64} : (tensor<8x?x?xf32>) -> tensor<8x?x?xf32>
// CHECK-NEXT:    %logp = graph.log_softmax %logits {axis = 1 : i64} : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:    %flat = graph.flatten %gap : (tensor<?x64x1x1xf32>) -> tensor<?x64xf32>
// CHECK-NEXT:    %flat0 = graph.flatten %pool {axis = 0 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x200704xf32>
// CHECK-NEXT:    %flat3 = graph.flatten %pool {axis = -1 : i64} : (tensor<1x64x56x56xf32>) -> tensor<3584x56xf32>
// CHECK-NEXT:    func.return %probs : tensor<1x1000xf32>
// CHECK-NEXT:  }
