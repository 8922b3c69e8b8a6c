// RUN: ember-opt %s --split-input-file -p graph-partition-npu | filecheck %s

// graph-partition-npu: runs of MatMul/Gemm (with a bias Add and a Relu
// after them) become npu.segment regions, their weights cloned in; every
// other op stays on the host, and a host op ends a run. The later chunks
// are ops the NPU must not take.

func.func @mlp(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w0 = graph.constant dense<1.0> : tensor<3x4xf32>
  %b0 = graph.constant dense<0.5> : tensor<4xf32>
  %w1 = graph.constant dense<2.0> : tensor<4x2xf32>
  %h = graph.gemm %x, %w0, C %b0 : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %h : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = graph.gemm %r, %w1 : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  %s = graph.softmax %y {axis = -1 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %s : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @mlp(
// CHECK-NEXT:    %y = npu.segment "npu0" (%x) : (tensor<2x3xf32>) -> tensor<2x2xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<2x3xf32>):
// CHECK-NEXT:      %[[W0:.*]] = graph.constant dense<1.000000e+00> : tensor<3x4xf32>
// CHECK-NEXT:      %[[B0:.*]] = graph.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK-NEXT:      %[[W1:.*]] = graph.constant dense<2.000000e+00> : tensor<4x2xf32>
// CHECK-NEXT:      %[[H:.*]] = graph.gemm %[[X]], %[[W0]], C %[[B0]]
// CHECK-NEXT:      %[[R:.*]] = graph.relu %[[H]]
// CHECK-NEXT:      %[[Y:.*]] = graph.gemm %[[R]], %[[W1]]
// CHECK-NEXT:      npu.yield %[[Y]] : tensor<2x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = graph.softmax %y
// CHECK-NEXT:    func.return %s

// -----

func.func @split(%x: tensor<1x2x3xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %w = graph.constant dense<1.0> : tensor<3x4xf32>
  %b = graph.constant dense<0.25> : tensor<1x4xf32>
  %w2 = graph.constant dense<1.0> : tensor<4x4xf32>
  %m = graph.matmul %x, %w : (tensor<1x2x3xf32>, tensor<3x4xf32>) -> tensor<1x2x4xf32>
  %a = graph.add %m, %b : (tensor<1x2x4xf32>, tensor<1x4xf32>) -> tensor<1x2x4xf32>
  %t = graph.tanh %a : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %m2 = graph.matmul %t, %w2 : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32>
  func.return %m2, %a : tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// A MatMul's bias Add joins it; Tanh ends the run; the Add's result leaves
// the first segment for Tanh and for the return.
// CHECK-LABEL: func.func @split(
// CHECK-NEXT:    %a = npu.segment "npu0" (%x) : (tensor<1x2x3xf32>) -> tensor<1x2x4xf32> {
// CHECK:           graph.matmul
// CHECK-NEXT:      %[[A:.*]] = graph.add
// CHECK-NEXT:      npu.yield %[[A]]
// CHECK:         %t = graph.tanh %a
// CHECK-NEXT:    %m2 = npu.segment "npu1" (%t)
// CHECK:         func.return %m2, %a

// -----

func.func @not_taken(%x: tensor<2x3xf32>, %v: tensor<4x3xf32>, %c: tensor<4xf32>, %d: tensor<?x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = graph.constant dense<1.0> : tensor<3x4xf32>
  %t = graph.gemm %x, %v {transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %s = graph.gemm %x, %w {alpha = 5.000000e-01 : f32} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %e = graph.gemm %x, %w, C %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %q = graph.matmul %d, %w : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %u = graph.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = graph.matmul %u, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %p : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %o = graph.add %p, %r : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %t, %s, %e, %q, %o, %r : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// Not taken: B transposed and not a constant, alpha != 1, a bias that is
// not a constant, a symbolic dim; a Relu of a product used twice stays on
// the host (the product itself is a segment), as does an Add of two
// products.
// CHECK-LABEL: func.func @not_taken(
// CHECK-NEXT:    %w = graph.constant
// CHECK-NEXT:    %t = graph.gemm %x, %v {transB = 1 : i64}
// CHECK-NEXT:    %s = graph.gemm %x, %w {alpha = 5.000000e-01 : f32}
// CHECK-NEXT:    %e = graph.gemm %x, %w, C %c
// CHECK-NEXT:    %q = graph.matmul %d, %w
// CHECK-NEXT:    %u = graph.exp %x
// CHECK-NEXT:    %p = npu.segment "npu0" (%u)
// CHECK:         graph.matmul
// CHECK:         %r = graph.relu %p
// CHECK-NEXT:    %o = graph.add %p, %r
// CHECK-NOT:     npu.segment

// -----

// Quantised products (graph-fuse-qdq's) join runs when they are int8 with
// per-tensor constant scales and weights whose zero point is 0.
func.func @quantised(%x: tensor<1x3x8x8xi8>) -> tensor<1x4x8x8xi8> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %zx = graph.constant dense<-3> : tensor<i8>
  %w = graph.constant dense<1> : tensor<4x3x3x3xi8>
  %sw = graph.constant dense<0.25> : tensor<f32>
  %zw = graph.constant dense<0> : tensor<i8>
  %b = graph.constant dense<7> : tensor<4xi32>
  %sy = graph.constant dense<2.0> : tensor<f32>
  %zy = graph.constant dense<-128> : tensor<i8>
  %w2 = graph.constant dense<1> : tensor<4x4x1x1xi8>
  %y = graph.qlinear_conv %x, %sx, %zx, %w, %sw, %zw, %sy, %zy, B %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<4xi32>) -> tensor<1x4x8x8xi8>
  %y2 = graph.qlinear_conv %y, %sy, %zy, %w2, %sw, %zw, %sy, %zy : (tensor<1x4x8x8xi8>, tensor<f32>, tensor<i8>, tensor<4x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x8x8xi8>
  func.return %y2 : tensor<1x4x8x8xi8>
}

// CHECK-LABEL: func.func @quantised(
// CHECK-NEXT:    %y2 = npu.segment "npu0" (%x) : (tensor<1x3x8x8xi8>) -> tensor<1x4x8x8xi8> {
// CHECK:           graph.qlinear_conv
// CHECK-NEXT:      %[[Y2:.*]] = graph.qlinear_conv
// CHECK-NEXT:      npu.yield %[[Y2]] : tensor<1x4x8x8xi8>

// -----

// Not taken: a product's weight scale per output channel (its channels are
// columns; a store writes whole accumulator rows), weights with a zero
// point, uint8 activations.
func.func @quantised_on_the_host(%x: tensor<2x6xi8>, %u: tensor<2x6xui8>) -> (tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xi8>) {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %zu = graph.constant dense<128> : tensor<ui8>
  %z1 = graph.constant dense<1> : tensor<i8>
  %s3 = graph.constant dense<[0.5, 0.25, 0.125]> : tensor<3xf32>
  %z3 = graph.constant dense<0> : tensor<3xi8>
  %w = graph.constant dense<1> : tensor<6x3xi8>
  %y1 = graph.qlinear_matmul %x, %s, %z, %w, %s3, %z3, %s, %z : (tensor<2x6xi8>, tensor<f32>, tensor<i8>, tensor<6x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %y2 = graph.qlinear_matmul %x, %s, %z, %w, %s, %z1, %s, %z : (tensor<2x6xi8>, tensor<f32>, tensor<i8>, tensor<6x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %y3 = graph.qlinear_matmul %u, %s, %zu, %w, %s, %z, %s, %z : (tensor<2x6xui8>, tensor<f32>, tensor<ui8>, tensor<6x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y1, %y2, %y3 : tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xi8>
}

// CHECK-LABEL: func.func @quantised_on_the_host(
// CHECK-NOT:     npu.segment
// CHECK:         func.return

// -----

// The vector unit's ops: a residual Sum of two computed images and its Relu,
// a padded max pool (its input's only reader), a channel Concat of
// convolutions computed for it alone.
func.func @vector(%x: tensor<1x4x6x6xf32>) -> tensor<1x8x3x3xf32> {
  %w = graph.constant dense<1.0> : tensor<4x4x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s = graph.sum %c, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r = graph.relu %s : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = graph.max_pool %r {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %a = graph.conv %p, %w : (tensor<1x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %b = graph.conv %p, %w : (tensor<1x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  func.return %y : tensor<1x8x3x3xf32>
}

// CHECK-LABEL: func.func @vector(
// CHECK-NEXT:    %y = npu.segment "npu0" (%x) : (tensor<1x4x6x6xf32>) -> tensor<1x8x3x3xf32> {
// CHECK:           graph.sum
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.max_pool
// CHECK-NEXT:      graph.conv
// CHECK-NEXT:      graph.conv
// CHECK-NEXT:      %[[Y:.*]] = graph.concat
// CHECK-NEXT:      npu.yield %[[Y]] : tensor<1x8x3x3xf32>

// -----

// Not taken: an Add that broadcasts, a Sum of three, a dilated max pool, a
// padded max pool whose input an average pool pads with zeros too (a halo
// holds one value), an average counting its padding in ceil mode, a Concat
// of one image twice.
func.func @vector_on_the_host(%x: tensor<1x4x6x6xf32>, %row: tensor<1x4x1x1xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x4x4xf32>, tensor<1x8x6x6xf32>) {
  %a = graph.add %x, %row : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s = graph.sum %x, %x, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %d = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x4x4xf32>
  %m = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %v = graph.average_pool %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = 1 : i64, ceil_mode = 1 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x4x4xf32>
  %c = graph.concat %x, %x {axis = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32>
  func.return %a, %s, %d, %m, %v, %c : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x4x4xf32>, tensor<1x8x6x6xf32>
}

// CHECK-LABEL: func.func @vector_on_the_host(
// CHECK-NOT:     npu.segment
// CHECK:         func.return

// -----

// An unfolded BatchNormalization (a per-channel Mul, then Add) and its Relu
// after a convolution join the run; so does a lone per-channel Add. A
// per-channel operand computed at run time does not.
func.func @channel_affine(%x: tensor<1x2x3x3xf32>, %s: tensor<2x1x1xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %k = graph.constant dense<2.0> : tensor<2x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %m = graph.mul %c, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %a = graph.add %m, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r = graph.relu %a : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %b = graph.add %r, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %h = graph.mul %b, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %b, %h : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @channel_affine(
// CHECK-NEXT:    %b = npu.segment "npu0" (%x) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
// CHECK:           graph.conv
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      %[[B:.*]] = graph.add
// CHECK-NEXT:      npu.yield %[[B]]
// CHECK:         %h = graph.mul %b, %s
