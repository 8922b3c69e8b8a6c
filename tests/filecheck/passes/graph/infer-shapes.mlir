// RUN: ember-opt %s -p graph-infer-shapes --split-input-file | filecheck %s

// A changed input type flows through to every result and the signature.
func.func @batch(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<?x16x30x30xf32> {
  %y = graph.conv %x, %w : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x30x30xf32>
  %r = graph.relu %y : (tensor<?x16x30x30xf32>) -> tensor<?x16x30x30xf32>
  func.return %r : tensor<?x16x30x30xf32>
}

// CHECK-LABEL: func.func @batch
// CHECK-SAME:    -> tensor<8x16x30x30xf32>
// CHECK:         %y = graph.conv %x, %w : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf32>
// CHECK-NEXT:    %r = graph.relu %y : (tensor<8x16x30x30xf32>) -> tensor<8x16x30x30xf32>

// -----

// Shape arithmetic on constants is evaluated, so Reshape gets a static type.
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = graph.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = graph.constant dense<0> : tensor<i64>
  %n = graph.gather %s, %i : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = graph.constant dense<0> : tensor<1xi64>
  %n1 = graph.unsqueeze %n, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m = graph.constant dense<-1> : tensor<1xi64>
  %shape = graph.concat %n1, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @shape_chain
// CHECK-SAME:    -> tensor<2x12xf32>
// CHECK:         graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>

// -----

// An unknown dim stays unknown: the rule never guesses.
func.func @dynamic(%x: tensor<?x4xf32>, %y: tensor<1x4xf32>) -> tensor<?x4xf32> {
  %z = graph.add %x, %y : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @dynamic
// CHECK:         graph.add %x, %y : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
