// RUN: ember-opt %s -p "graph-layout{layout=NHWC}" | filecheck %s --check-prefix=LAYOUT
// RUN: ember-opt %s -p "graph-layout{layout=NHWC},graph-fold-constants,convert-conv-to-winograd" | filecheck %s --check-prefix=WINO
// RUN: ember-opt %s -p "graph-layout{layout=NHWC},graph-fold-constants,convert-conv-to-winograd,convert-graph-to-tensor" | filecheck %s --check-prefix=TENSOR
// RUN: ember-opt %s -p "graph-layout{layout=NHWC},graph-fold-constants,convert-conv-to-winograd,convert-graph-to-tensor,convert-tensor-to-loop" | filecheck %s --check-prefix=BUF
// RUN: ember-opt %s -p "graph-layout{layout=NHWC},graph-fold-constants,convert-conv-to-winograd,convert-graph-to-tensor,convert-tensor-to-loop,tensor-default-schedule{cpu=haswell}" | filecheck %s --check-prefix=SCHED

// Convolutions on a batch N known only at run time: N stays the outermost
// dim in every layout, so -O2's NHWC layout and Winograd apply as they do
// to a static batch, and the micro-kernels run their rows along the image
// columns (static), never along N (a batch of one would run every block
// one row at a time).
func.func @conv(%x: tensor<?x16x16x16xf32, #graph.dims<N>>) -> tensor<?x16x16x16xf32, #graph.dims<N>> attributes {ember.packed_buffers, graph.symbols = {N = #graph.range<1, ?>}} {
  %w = graph.constant dense<0.125> : tensor<16x16x3x3xf32>
  %y = graph.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<?x16x16x16xf32, #graph.dims<N>>, tensor<16x16x3x3xf32>) -> tensor<?x16x16x16xf32, #graph.dims<N>>
  func.return %y : tensor<?x16x16x16xf32, #graph.dims<N>>
}

func.func @pointwise(%x: tensor<?x16x16x16xf32, #graph.dims<N>>) -> tensor<?x32x16x16xf32, #graph.dims<N>> attributes {ember.packed_buffers, graph.symbols = {N = #graph.range<1, ?>}} {
  %w = graph.constant dense<0.125> : tensor<32x16x1x1xf32>
  %y = graph.conv %x, %w : (tensor<?x16x16x16xf32, #graph.dims<N>>, tensor<32x16x1x1xf32>) -> tensor<?x32x16x16xf32, #graph.dims<N>>
  func.return %y : tensor<?x32x16x16xf32, #graph.dims<N>>
}

// LAYOUT-LABEL: func.func @conv
// LAYOUT:         graph.layout_transform %x {source = "NCHW", target = "NHWC"} : (tensor<?x16x16x16xf32, #graph.dims<N>>) -> tensor<?x16x16x16xf32, #graph.dims<N>>
// LAYOUT:         graph.conv_nhwc {{.*}} -> tensor<?x16x16x16xf32, #graph.dims<N>>

// The Winograd tiles of all N images are one run-time extent, 16 * N.
// WINO-LABEL:  func.func @conv
// WINO:          %N = tensor.dim {ember.symbol = "N"} %x
// WINO:          tensor.pad %x_nhwc low[0, 1, 1, 0] high[0, 1, 1, 0]
// WINO:          tensor.collapse_shape {{.*}} into tensor<36x?x16xf32, #graph.dims<16 * N>>
// WINO:          tensor.expand_shape {{.*}} output_shape [6, 6, %N, 4, 4, 16]
// WINO-NOT:      graph.conv_nhwc
// A 1x1 convolution stays direct.
// WINO-LABEL:  func.func @pointwise
// WINO:          graph.conv_nhwc

// convert-graph-to-tensor takes Winograd's read of N: N is read once.
// TENSOR-LABEL: func.func @conv
// TENSOR:         %N = tensor.dim {ember.symbol = "N"} %x
// TENSOR-NOT:     ember.symbol
// TENSOR-LABEL: func.func @pointwise

// The padded input is copied into a subview of run-time size N.
// BUF-LABEL:   func.func @conv
// BUF:           %[[PADDED:.*]] = memref.alloc(%N) : memref<?x18x18x16xf32>
// BUF:           memref.subview %[[PADDED]][0, 1, 1, 0] [%N, 16, 16, 16] [1, 1, 1, 1] : memref<?x18x18x16xf32> to memref<?x16x16x16xf32, strided<[5184, 288, 16, 1], offset: 304>>

// SCHED-LABEL: func.func @pointwise
// SCHED:         schedule = #loop.schedule<order = [0, 1, 2, 3, 4, 5, 6], tiles = [0, 0, 0, 0, 0, 0, 16], parallel = [0, 1, 2, 6], vector = 8, pack = [1], micro = [2, 6, 6, 16]>
