// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s --check-prefix=TENSOR
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop,loop-generate,loop-fuse,loop-outline-kernels | filecheck %s --check-prefix=KERNEL

// A fused conv + bias + relu: the body is lowered in place and every op it
// became is tagged with the group's number; the loop nests of the group
// then merge and are outlined as one kernel.
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %y = graph.fused "conv" (%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%a: tensor<1x2x4x4xf32>):
    %w = graph.constant dense<5.000000e-01> : tensor<2x2x3x3xf32>
    %b = graph.constant dense<2.500000e-01> : tensor<2xf32>
    %c = graph.conv %a, %w, B %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
    %r = graph.relu %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    graph.yield %r : tensor<1x2x4x4xf32>
  }
  func.return %y : tensor<1x2x4x4xf32>
}
// TENSOR-LABEL: func.func @main
// TENSOR-NOT:     graph.fused
// TENSOR:         tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
// TENSOR:         } {ember.fusion_group = 0 : i64} : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
// TENSOR:         linalg.fill {ember.fusion_group = 0 : i64} ins(
// TENSOR:         linalg.conv_2d_nchw_fchw {ember.fusion_group = 0 : i64,
// TENSOR:         linalg.generic {{.*}} attrs = {{ *}}{ember.fusion_group = 0 : i64} {
// TENSOR:         %r = linalg.generic {{.*}} attrs = {{ *}}{ember.fusion_group = 0 : i64} {
// TENSOR:         } -> tensor<1x2x4x4xf32>
// TENSOR-NEXT:    func.return %r

// KERNEL-LABEL: func.func @main
// KERNEL:         func.call @main_kernel0
// KERNEL-NOT:     func.call
// KERNEL:         func.return
// KERNEL:       func.func private @main_kernel0
// KERNEL-NOT:     ember.fusion_group
// KERNEL:         arith.mulf
// KERNEL:         arith.maximumf
// KERNEL-NOT:     memref.alloc
// KERNEL:         func.return
