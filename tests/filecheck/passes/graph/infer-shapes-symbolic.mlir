// RUN: ember-opt %s -p graph-infer-shapes --split-input-file | filecheck %s
// RUN: ember-opt %s --split-input-file | filecheck %s --check-prefix=ROUNDTRIP

// Symbolic dims (`#graph.dims`) flow through shape rules as expressions: a
// strided convolution divides, a MatMul keeps the batch and sequence.
func.func @conv(%x: tensor<?x3x?x?xf32, #graph.dims<N, H, W>>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> attributes {graph.symbols = {H = #graph.range<1, ?>, N = #graph.range<1, 64>, W = #graph.range<1, ?>}} {
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf32, #graph.dims<N, H, W>>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %p = graph.max_pool %y {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  func.return %p : tensor<?x8x?x?xf32>
}

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    -> tensor<?x8x?x?xf32, #graph.dims<N, (H + 3) floordiv 4 - 1, (W + 3) floordiv 4 - 1>>
// The pooling window must fit: (H + 1) floordiv 2 >= 3, so H >= 5 (W too).
// CHECK-SAME:    attributes {graph.symbols = {H = #graph.range<5, ?>, N = #graph.range<1, 64>, W = #graph.range<5, ?>}}
// CHECK:         %y = graph.conv {{.*}} -> tensor<?x8x?x?xf32, #graph.dims<N, (H + 1) floordiv 2, (W + 1) floordiv 2>>
// CHECK-NEXT:    %p = graph.max_pool {{.*}} -> tensor<?x8x?x?xf32, #graph.dims<N, (H + 3) floordiv 4 - 1, (W + 3) floordiv 4 - 1>>

// The parser reads expressions in any order and spacing and prints them in
// one canonical form; ? is an unknown dim.
// ROUNDTRIP-LABEL: func.func @conv
// ROUNDTRIP:       tensor<?x3x?x?xf32, #graph.dims<N, H, W>>

// -----

// The exporters' shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape) is followed on symbols: the heads split keeps N and S.
func.func @heads(%x: tensor<?x?x64xf32, #graph.dims<N, S>>) -> tensor<?x?x?x?xf32> {
  %s = graph.shape %x : (tensor<?x?x64xf32, #graph.dims<N, S>>) -> tensor<3xi64>
  %i0 = graph.constant dense<0> : tensor<1xi64>
  %i1 = graph.constant dense<1> : tensor<1xi64>
  %n = graph.gather %s, %i0 : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %l = graph.gather %s, %i1 : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %h = graph.constant dense<[4, -1]> : tensor<2xi64>
  %shape = graph.concat %n, %l, %h {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  %r = graph.reshape %x, %shape : (tensor<?x?x64xf32, #graph.dims<N, S>>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %t = graph.transpose %r {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  func.return %t : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @heads
// CHECK:         %r = graph.reshape {{.*}} -> tensor<?x?x4x16xf32, #graph.dims<N, S>>
// CHECK-NEXT:    %t = graph.transpose {{.*}} -> tensor<?x4x?x16xf32, #graph.dims<N, S>>

// -----

// Flatten multiplies, Concat adds along its axis, Slice to the end keeps the
// symbol (the end is clamped to S, which is below 2^62 whatever S is).
func.func @arithmetic(%x: tensor<?x?x8xf32, #graph.dims<N, S>>, %y: tensor<?x3x8xf32, #graph.dims<N>>) -> (tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %f = graph.flatten %x {axis = 2 : i64} : (tensor<?x?x8xf32, #graph.dims<N, S>>) -> tensor<?x?xf32>
  %c = graph.concat %x, %y {axis = 1 : i64} : (tensor<?x?x8xf32, #graph.dims<N, S>>, tensor<?x3x8xf32, #graph.dims<N>>) -> tensor<?x?x?xf32>
  %start = graph.constant dense<1> : tensor<1xi64>
  %end = graph.constant dense<9223372036854775807> : tensor<1xi64>
  %axes = graph.constant dense<1> : tensor<1xi64>
  %s = graph.slice %x, %start, %end, axes %axes : (tensor<?x?x8xf32, #graph.dims<N, S>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?xf32>
  func.return %f, %c, %s : tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @arithmetic
// CHECK:         %f = graph.flatten {{.*}} -> tensor<?x8xf32, #graph.dims<N * S>>
// CHECK-NEXT:    %c = graph.concat {{.*}} -> tensor<?x?x8xf32, #graph.dims<N, S + 3>>
// CHECK:         %s = graph.slice {{.*}} -> tensor<?x?x8xf32, #graph.dims<N, S - 1>>

// -----

// Range(0, S, 1), the position ids of a sequence, has S elements.
func.func @positions(%x: tensor<?x?xi64, #graph.dims<N, S>>) -> tensor<?xi64> {
  %shape = graph.shape %x {start = 1 : i64, end = 2 : i64} : (tensor<?x?xi64, #graph.dims<N, S>>) -> tensor<1xi64>
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %axes = graph.constant dense<0> : tensor<1xi64>
  %s = graph.squeeze %shape, axes %axes : (tensor<1xi64>, tensor<1xi64>) -> tensor<i64>
  %p = graph.range %zero, %s, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %p : tensor<?xi64>
}

// CHECK-LABEL: func.func @positions
// CHECK:         %p = graph.range {{.*}} -> tensor<?xi64, #graph.dims<S>>
