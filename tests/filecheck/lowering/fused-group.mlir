// RUN: ember-opt %s -p convert-graph-to-tensor --split-input-file | filecheck %s --check-prefix=TENSOR
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop,loop-generate --split-input-file | filecheck %s --check-prefix=LOOP
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop,loop-generate,loop-fuse,loop-outline-kernels --split-input-file | filecheck %s --check-prefix=KERNEL

// A fused conv + bias + relu: the lowered body becomes the region of one
// loop.kernel with the group's kind, using %x from around it; the weights
// move out in front of it. Bufferized, the kernel holds the group's loop
// nests and its scratch buffers and writes its result straight into the
// output argument; its nests then merge and it is outlined as one kernel.
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
// TENSOR:         %w = graph.constant
// TENSOR-NEXT:    %b = graph.constant
// TENSOR-NEXT:    %y = loop.kernel "conv" -> (tensor<1x2x4x4xf32>) {
// TENSOR-NEXT:      tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
// TENSOR:           linalg.fill ins(
// TENSOR:           linalg.conv_2d_nchw_fchw
// TENSOR:           %c = linalg.generic
// TENSOR:           %r = linalg.generic
// TENSOR:           } -> tensor<1x2x4x4xf32>
// TENSOR-NEXT:      loop.yield %r : tensor<1x2x4x4xf32>
// TENSOR-NEXT:    }
// TENSOR-NEXT:    func.return %y

// LOOP-LABEL: func.func @main(%x: memref<1x2x4x4xf32>, %out0: memref<1x2x4x4xf32>) {
// LOOP-NEXT:    %w = loop.weight
// LOOP-NEXT:    %b = loop.weight
// LOOP-NEXT:    loop.kernel "conv" {
// LOOP-NEXT:      memref.alloc() : memref<1x2x6x6xf32>
// LOOP:           %c = memref.alloc() : memref<1x2x4x4xf32>
// LOOP:           memref.store %{{.*}}, %out0[
// LOOP:         {{^    }$}}
// LOOP-NEXT:    func.return

// KERNEL-LABEL: func.func @main
// KERNEL:         func.call @main_kernel0
// KERNEL-NOT:     func.call
// KERNEL:         func.return
// KERNEL:       func.func private @main_kernel0
// KERNEL:         arith.mulf
// KERNEL:         arith.maximumf
// KERNEL-NOT:     memref.alloc
// KERNEL:         func.return

// -----

// A group whose result is not returned but read after it: the result's
// buffer (an alloc, and here a view of it, as the group ends in a reshape)
// moves out in front of the kernel, which writes it; the consumer after the
// kernel reads it.
func.func @result_read_after(%x: tensor<2x2xf32>) -> tensor<1x4xf32> {
  %y = graph.fused "elementwise" (%x) : (tensor<2x2xf32>) -> tensor<1x4xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    %r = graph.relu %a : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %s = graph.flatten %r {axis = 0 : i64} : (tensor<2x2xf32>) -> tensor<1x4xf32>
    graph.yield %s : tensor<1x4xf32>
  }
  %z = graph.neg %y : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %z : tensor<1x4xf32>
}
// LOOP-LABEL: func.func @result_read_after(%x: memref<2x2xf32>, %out0: memref<1x4xf32>) {
// LOOP-NEXT:    %[[R:.*]] = memref.alloc() : memref<2x2xf32>
// LOOP-NEXT:    %[[S:.*]] = memref.reinterpret_cast %[[R]] to offset: [0], sizes: [1, 4], strides: [4, 1]
// LOOP-NEXT:    loop.kernel "elementwise" {
// LOOP-NOT:       memref.alloc
// LOOP:           memref.store %{{.*}}, %[[R]][
// LOOP:         {{^    }$}}
// LOOP-NEXT:    %{{.*}} = arith.constant 0 : index
// LOOP:           memref.load %[[S]][
// LOOP:         func.return
