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

// Gemm + Relu is a matmul group; Softmax alone is a reduction group (its
// lowering is several nests); an elementwise chain feeding a reduction is one
// group, ending at the reduction.
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
// CHECK-NEXT:    %r = graph.fused "matmul" (%x, %w)
// CHECK:           %g = graph.gemm
// CHECK-NEXT:      %r_1 = graph.relu %g
// CHECK-NEXT:      graph.yield %r_1
// CHECK:         %s = graph.fused "reduction" (%r)
// CHECK:           graph.softmax
// CHECK-NEXT:      graph.yield
// CHECK:         %m = graph.fused "reduction" (%x)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %axes = graph.constant
// CHECK-NEXT:      %e = graph.exp
// CHECK-NEXT:      %n = graph.neg %e
// CHECK-NEXT:      %m_1 = graph.reduce_sum_square %n, axes %axes
// CHECK-NEXT:      graph.yield %m_1

// -----

// Must not fire: an intermediate value with a second user stops the chain
// (the conv result is needed outside); a consumer that broadcasts to a bigger
// shape stops it; a lone elementwise op forms no group.
func.func @keep(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %y: tensor<3x1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<3x1x2x4x4xf32>) {
  %c = graph.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.abs %x : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %b = graph.add %a, %y : (tensor<1x2x4x4xf32>, tensor<3x1x2x4x4xf32>) -> tensor<3x1x2x4x4xf32>
  func.return %c, %r, %b : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<3x1x2x4x4xf32>
}
// CHECK-LABEL: func.func @keep
// CHECK-NEXT:    %c = graph.fused "conv" (%x, %w)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %c_1 = graph.conv
// CHECK-NEXT:      graph.yield %c_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = graph.relu %c
// CHECK-NEXT:    %a = graph.abs %x
// CHECK-NEXT:    %b = graph.add %a, %y
// CHECK-NEXT:    func.return
