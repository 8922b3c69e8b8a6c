// RUN: ember-opt %s --split-input-file --disable-verify --verify-diagnostics -p graph-infer-shapes | filecheck %s
// RUN: not ember-opt %s --split-input-file --disable-verify -p graph-infer-shapes 2>&1 | filecheck %s --check-prefix=FIRST
// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=VERIFY

// Errors that graph-infer-shapes reports: a shape rule that breaks once the
// pass knows more than the verifier did (static dims flowing through ? types,
// shape tensors computed at compile time).
//
// - prefix CHECK, every case's error comes from the pass (the verifier is
//   disabled): one message line per chunk, with no IR after it;
// - prefix FIRST, without --verify-diagnostics the first error stops ember-opt
//   with a one-line `file: error: message` on stderr and exit status 1;
// - prefix VERIFY, the verifier accepts every input but the last (whose input
//   type was changed by hand), so the other errors are only found by the pass:
//   a verified chunk prints back in the custom form, a rejected one does not.

// The Shape of %x is [2, 4], known at compile time: 9 elements cannot become 8.
func.func @reshape_from_shape(%x: tensor<2x4xf32>, %z: tensor<3x3xf32>) -> tensor<?x?xf32> {
  %s = graph.shape %x : (tensor<2x4xf32>) -> tensor<2xi64>
  %r = graph.reshape %z, %s : (tensor<3x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK:      {{^}}graph.reshape: cannot reshape 3x3 (9 elements) into 2x4 (8 elements){{$}}
// CHECK-NEXT: {{^// -{5}$}}
// VERIFY:     func.func @reshape_from_shape(
// FIRST:      {{^}}{{.*}}infer-shapes-errors.mlir: error: graph.reshape: cannot reshape 3x3 (9 elements) into 2x4 (8 elements){{$}}
// FIRST-NOT:  error
// FIRST-NOT:  Traceback

// -----

// A batch of 5 reaches an add through a ? dim; it does not broadcast with 3.
func.func @add_batch(%x: tensor<5x4xf32>, %y: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %a = graph.relu %x : (tensor<5x4xf32>) -> tensor<?x4xf32>
  %r = graph.add %a, %y : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// CHECK:      {{^}}graph.add: operands are not broadcast-compatible: 5x4, 3x4{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// VERIFY:     func.func @add_batch(

// -----

// The input now has 4 channels; the weight expects 3.
func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x6x6xf32> {
  %a = graph.relu %x : (tensor<1x4x8x8xf32>) -> tensor<?x?x8x8xf32>
  %y = graph.conv %a, %w : (tensor<?x?x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x6x6xf32>
  func.return %y : tensor<?x8x6x6xf32>
}

// CHECK:      {{^}}graph.conv: input channels (4) must equal weight channels (3) x group (1){{$}}
// CHECK-NEXT: {{^// -{5}$}}
// VERIFY:     func.func @conv_channels(

// -----

// Split sizes taken from a Shape, [3, 4], do not add up to 10.
func.func @split_from_shape(%x: tensor<10x2xf32>, %y: tensor<3x4xf32>) -> tensor<?x2xf32> {
  %s = graph.shape %y : (tensor<3x4xf32>) -> tensor<2xi64>
  %a, %b = graph.split %x, split %s : (tensor<10x2xf32>, tensor<2xi64>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
  func.return %a : tensor<?x2xf32>
}

// CHECK:      {{^}}graph.split: split sizes [3, 4] do not add up to 10{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// VERIFY:     func.func @split_from_shape(

// -----

// Shape arithmetic (4 - 4) gives a zero step.
func.func @slice_zero_step(%x: tensor<4x4xf32>) -> tensor<?x?xf32> {
  %s = graph.shape %x {start = 1 : i64} : (tensor<4x4xf32>) -> tensor<1xi64>
  %zero = graph.sub %s, %s : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %y = graph.slice %x, %zero, %s, axes %zero, steps %zero : (tensor<4x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK:      {{^}}graph.slice: slice steps must be non-zero{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// VERIFY:     func.func @slice_zero_step(

// -----

// The inner dims of a MatMul meet only after the pass: 5 vs 4.
func.func @matmul_inner(%a: tensor<2x5xf32>, %b: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %t = graph.identity %a : (tensor<2x5xf32>) -> tensor<?x?xf32>
  %y = graph.matmul %t, %b : (tensor<?x?xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// CHECK:      {{^}}graph.matmul: inner dimensions differ: 2x5 @ 4x3{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// VERIFY:     func.func @matmul_inner(

// -----

// The input type was changed by hand (from 2x4 to 6x4) without updating the
// add: the verifier rejects it, and with --disable-verify the pass reports it.
func.func @input_changed(%x: tensor<6x4xf32>, %y: tensor<2x4xf32>) -> tensor<?x4xf32> {
  %r = graph.add %x, %y : (tensor<6x4xf32>, tensor<2x4xf32>) -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// CHECK:      {{^}}graph.add: operands are not broadcast-compatible: 6x4, 2x4{{$}}
// CHECK-NOT:  {{.}}
// VERIFY:     Operation does not verify: graph.add: operands are not broadcast-compatible: 6x4, 2x4
