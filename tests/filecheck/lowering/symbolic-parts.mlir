// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop --split-input-file | filecheck %s --check-prefix=BUF
// RUN: ember-opt %s -p 'convert-graph-to-tensor,convert-tensor-to-loop,tensor-default-schedule{cpu=haswell},loop-generate,loop-pack-weights,loop-plan-memory,loop-outline-kernels,convert-loop-to-llvm' --split-input-file | filecheck %s --check-prefix=LLVM

// A part of a buffer whose inner dims are symbolic (a Slice along the last
// axis of N x S x 48) is a memref.subview whose layout has a run-time stride
// (`?`, S * 48) where a symbolic dim enters it; the LLVM lowering computes
// it from the buffer's sizes.
func.func @part(%x: tensor<?x?x48xf32, #graph.dims<N, S>>) -> tensor<?x?x16xf32, #graph.dims<N, S>> attributes {graph.symbols = {N = #graph.range<1, ?>, S = #graph.range<1, ?>}} {
  %s = graph.constant dense<8> : tensor<1xi64>
  %e = graph.constant dense<24> : tensor<1xi64>
  %a = graph.constant dense<2> : tensor<1xi64>
  %y = graph.slice %x, %s, %e, axes %a : (tensor<?x?x48xf32, #graph.dims<N, S>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32, #graph.dims<N, S>>
  func.return %y : tensor<?x?x16xf32, #graph.dims<N, S>>
}

// BUF-LABEL: func.func @part
// BUF:         %N = memref.dim %x, %{{.*}} {ember.symbol = "N"}
// BUF:         %S = memref.dim %x, %{{.*}} {ember.symbol = "S"}
// BUF:         %[[PART:.*]] = memref.subview %x[0, 0, 8] [%N, %S, 16] [1, 1, 1] : memref<?x?x48xf32> to memref<?x?x16xf32, strided<[?, 48, 1], offset: 8>>
// BUF-NEXT:    linalg.copy ins(%[[PART]] : memref<?x?x16xf32, strided<[?, 48, 1], offset: 8>>) outs(%out0 : memref<?x?x16xf32>)

// LLVM:        llvm.func @part
// LLVM-NOT:    memref.

// -----

// A Concat along a symbolic axis copies each input to a run-time offset.
func.func @grow(%x: tensor<1x?x8xf32, #graph.dims<S>>, %past: tensor<1x4x8xf32>) -> tensor<1x?x8xf32, #graph.dims<S + 4>> attributes {graph.symbols = {S = #graph.range<1, ?>}} {
  %y = graph.concat %x, %past {axis = 1 : i64} : (tensor<1x?x8xf32, #graph.dims<S>>, tensor<1x4x8xf32>) -> tensor<1x?x8xf32, #graph.dims<S + 4>>
  func.return %y : tensor<1x?x8xf32, #graph.dims<S + 4>>
}

// BUF-LABEL: func.func @grow
// BUF:         %S = memref.dim %x, %{{.*}} {ember.symbol = "S"}
// BUF:         memref.subview %out0[0, 0, 0] [1, %S, 8] [1, 1, 1] : memref<1x?x8xf32> to memref<1x?x8xf32, strided<[?, 8, 1]>>
// BUF:         memref.subview %out0[0, %S, 0] [1, 4, 8] [1, 1, 1] : memref<1x?x8xf32> to memref<1x4x8xf32, strided<[?, 8, 1], offset: ?>>

// LLVM:        llvm.func @grow
// LLVM-NOT:    memref.

// -----

// Split along a symbolic axis: the second part starts at a run-time offset.
func.func @halves(%x: tensor<2x?xf32, #graph.dims<S>>) -> (tensor<2x?xf32, #graph.dims<S>>, tensor<2x?xf32, #graph.dims<S>>) attributes {graph.symbols = {S = #graph.range<1, ?>}} {
  %xx = graph.concat %x, %x {axis = 1 : i64} : (tensor<2x?xf32, #graph.dims<S>>, tensor<2x?xf32, #graph.dims<S>>) -> tensor<2x?xf32, #graph.dims<2 * S>>
  %a, %b = graph.split %xx {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<2x?xf32, #graph.dims<2 * S>>) -> (tensor<2x?xf32, #graph.dims<S>>, tensor<2x?xf32, #graph.dims<S>>)
  func.return %a, %b : tensor<2x?xf32, #graph.dims<S>>, tensor<2x?xf32, #graph.dims<S>>
}

// BUF-LABEL: func.func @halves
// BUF:         %S = memref.dim %x, %{{.*}} {ember.symbol = "S"}
// BUF:         memref.subview %[[XX:.*]][0, 0] [2, %S] [1, 1] : memref<2x?xf32> to memref<2x?xf32, strided<[?, 1]>>
// BUF:         memref.subview %[[XX]][0, %S] [2, %S] [1, 1] : memref<2x?xf32> to memref<2x?xf32, strided<[?, 1], offset: ?>>
// BUF:         %[[B:.*]] = memref.subview %[[XX]][0, %S] [2, %S] [1, 1] : memref<2x?xf32> to memref<2x?xf32, strided<[?, 1], offset: ?>>
// BUF-NEXT:    linalg.copy ins(%[[B]] : memref<2x?xf32, strided<[?, 1], offset: ?>>) outs(%out1 : memref<2x?xf32>)

// LLVM:        llvm.func @halves
// LLVM-NOT:    memref.
