// RUN: ember-opt %s -p graph-fuse --print-debuginfo --split-input-file | filecheck %s
// RUN: ember-opt %s -p graph-simplify --print-debuginfo --split-input-file | filecheck %s --check-prefix=SIMPLIFY

// Source names (the model's nodes, as locations) survive the graph passes:
// a fusion group is named after all its members, in order, and each member
// keeps its own name inside it.
func.func @conv_epilogue(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<5.000000e-01> : tensor<2x2x3x3xf32>
  %b = graph.constant dense<2.500000e-01> : tensor<2xf32>
  %c = graph.conv %x, %w, B %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("conv1/7x7_s2")
  %r = graph.relu %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("conv1/relu_7x7")
  %s = graph.add %r, %x : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("res1")
  func.return %s : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @conv_epilogue
// CHECK:         %c = graph.conv {{.*}} loc("conv1/7x7_s2")
// CHECK-NEXT:    %r = graph.relu {{.*}} loc("conv1/relu_7x7")
// CHECK-NEXT:    %s_1 = graph.add {{.*}} loc("res1")
// CHECK:       } loc(fused["conv1/7x7_s2", "conv1/relu_7x7", "res1"])

// -----

// BatchNorm folded into the Conv before it: the Conv carries both names.
// CSE merging two equal ops: the op kept carries both names.
func.func @fold_and_merge(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = graph.constant dense<5.000000e-01> : tensor<2x2x1x1xf32>
  %scale = graph.constant dense<2.000000e+00> : tensor<2xf32>
  %bias = graph.constant dense<1.000000e+00> : tensor<2xf32>
  %mean = graph.constant dense<0.000000e+00> : tensor<2xf32>
  %var = graph.constant dense<1.000000e+00> : tensor<2xf32>
  %c = graph.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc("conv2")
  %n = graph.batch_normalization %c, %scale, %bias, %mean, %var : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("bn2")
  %r1 = graph.relu %n : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu_a")
  %r2 = graph.relu %n : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu_b")
  func.return %r1, %r2 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
// SIMPLIFY-LABEL: func.func @fold_and_merge
// SIMPLIFY:         graph.conv {{.*}} loc(fused["conv2", "bn2"])
// SIMPLIFY-NEXT:    graph.relu {{.*}} loc(fused["relu_a", "relu_b"])
