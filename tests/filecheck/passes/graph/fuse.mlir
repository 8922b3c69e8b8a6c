// RUN: ember-opt %s -p graph-fuse --split-input-file | filecheck %s

// A conv with its bias, activation and residual Add: one group. The weights
// are cloned into the body; the residual input comes in as an operand.
func.func @conv_epilogue(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<5.000000e-01> : tensor<2x2x3x3xf32>
  %b = graph.constant dense<2.500000e-01> : tensor<2xf32>
  %c = graph.conv %x, %w, B %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %r, %x : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %s : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @conv_epilogue
// CHECK-NEXT:    %s = graph.fused "conv" (%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<1x2x4x4xf32>):
// CHECK-NEXT:      %w = graph.constant
// CHECK-NEXT:      %b = graph.constant
// CHECK-NEXT:      %c = graph.conv %x_1, %w, B %b
// CHECK-NEXT:      %r = graph.relu %c
// CHECK-NEXT:      %s_1 = graph.add %r, %x_1
// CHECK-NEXT:      graph.yield %s_1 : tensor<1x2x4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s

// -----

// Gemm + Relu + Softmax is one matmul group (a reduction may join); an
// elementwise chain feeding a reduction is one reduction group.
func.func @chains(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>) {
  %g = graph.gemm %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %g : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = graph.softmax %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = graph.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = graph.neg %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %axes = graph.constant dense<1> : tensor<1xi64>
  %m = graph.reduce_sum_square %n, axes %axes : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  func.return %s, %m : tensor<2x4xf32>, tensor<2x1xf32>
}
// CHECK-LABEL: func.func @chains
// CHECK-NEXT:    %s = graph.fused "matmul" (%x, %w)
// CHECK:           %g = graph.gemm
// CHECK-NEXT:      %r = graph.relu %g
// CHECK-NEXT:      %s_1 = graph.softmax %r
// CHECK-NEXT:      graph.yield %s_1
// CHECK:         %m = graph.fused "reduction" (%x)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %axes = graph.constant
// CHECK-NEXT:      %e = graph.exp
// CHECK-NEXT:      %n = graph.neg %e
// CHECK-NEXT:      %m_1 = graph.reduce_sum_square %n, axes %axes
// CHECK-NEXT:      graph.yield %m_1

// -----

// Diamonds fuse: a decomposed Softmax (x feeds ReduceMax and Sub; exp feeds
// ReduceSum and Div) is one group, anchored at its first reduction.
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %axes = graph.constant dense<1> : tensor<1xi64>
  %max = graph.reduce_max %x, axes %axes : (tensor<2x5xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %d = graph.sub %x, %max : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  %e = graph.exp %d : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %sum = graph.reduce_sum %e, axes %axes : (tensor<2x5xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %y = graph.div %e, %sum : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    %y = graph.fused "reduction" (%x)
// CHECK-NEXT:    ^bb0(%x_1: tensor<2x5xf32>):
// CHECK-NEXT:      %axes = graph.constant
// CHECK-NEXT:      %max = graph.reduce_max %x_1, axes %axes
// CHECK-NEXT:      %d = graph.sub %x_1, %max
// CHECK-NEXT:      %e = graph.exp %d
// CHECK-NEXT:      %sum = graph.reduce_sum %e, axes %axes
// CHECK-NEXT:      %y_1 = graph.div %e, %sum
// CHECK-NEXT:      graph.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y

// -----

// Must not fire across a value used outside: the conv result is also
// returned, so the Relu stays out; in the chain abs -> neg -> exp, neg's
// result is returned too, so the group keeps only the closed prefix abs ->
// neg. A second contraction never joins; a lone elementwise op forms no group.
func.func @keep(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %a: tensor<2x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %c = graph.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %b = graph.abs %a : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %n = graph.neg %b : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %e = graph.exp %n : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = graph.matmul %e, %e : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %c, %r, %n, %e, %m : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
// CHECK-LABEL: func.func @keep
// CHECK-NEXT:    %c = graph.fused "conv" (%x, %w)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %c_1 = graph.conv
// CHECK-NEXT:      graph.yield %c_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = graph.relu %c
// CHECK-NEXT:    %n = graph.fused "elementwise" (%a)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %b = graph.abs
// CHECK-NEXT:      %n_1 = graph.neg %b
// CHECK-NEXT:      graph.yield %n_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %e = graph.exp %n
// CHECK-NEXT:    %m = graph.fused "matmul" (%e)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %m_1 = graph.matmul
// CHECK-NEXT:      graph.yield %m_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
