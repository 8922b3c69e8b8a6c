// RUN: ember-opt %s --split-input-file | filecheck %s
// RUN: ember-opt %s --split-input-file | ember-opt --split-input-file | filecheck %s

// InstanceNormalization names its data operand `input`.
func.func @instance_norm(%x: tensor<1x4x5x5xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x5x5xf32> {
  %y = graph.instance_normalization %x, %s, %b : (tensor<1x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  func.return %y : tensor<1x4x5x5xf32>
}
// CHECK-LABEL: func.func @instance_norm
// CHECK-NEXT:    %y = graph.instance_normalization %x, %s, %b : (tensor<1x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>

// -----

// -0.0 is not +0.0: no splat.
func.func @signed_zero() -> tensor<2xf32> {
  %c = graph.constant dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
// CHECK-LABEL: func.func @signed_zero
// CHECK-NEXT:    %c = graph.constant dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf32>

// -----

// bf16 constants print through xDSL's own printer.
func.func @bf16() -> tensor<2xbf16> {
  %c = graph.constant dense<[1.500000e+00, 2.500000e+00]> : tensor<2xbf16>
  func.return %c : tensor<2xbf16>
}
// CHECK-LABEL: func.func @bf16
// CHECK-NEXT:    %c = graph.constant dense<[1.500000e+00, 2.500000e+00]> : tensor<2xbf16>

// -----

// Split with num_outputs may leave an empty last chunk, as ONNX says.
func.func @split_empty_tail(%x: tensor<4xf32>) -> tensor<0xf32> {
  %a, %b, %c = graph.split %x {num_outputs = 3 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<0xf32>)
  func.return %c : tensor<0xf32>
}
// CHECK-LABEL: func.func @split_empty_tail
// CHECK-NEXT:    %a, %b, %c = graph.split %x {num_outputs = 3 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<0xf32>)
