// RUN: ember-opt %s -p graph-fold-constants --split-input-file | filecheck %s
// RUN: ember-opt %s -p "graph-fold-constants{max-elements=4}" --split-input-file | filecheck %s --check-prefix=LIMIT

// ConstantOfShape weights become splats, however large.
func.func @weights(%x: tensor<1x512xf32>) -> tensor<1x4096xf32> {
  %shape = graph.constant dense<[4096, 512]> : tensor<2xi64>
  %w = graph.constant_of_shape %shape {value = dense<2.000000e-02> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<4096x512xf32>
  %y = graph.gemm %x, %w {transB = 1 : i64} : (tensor<1x512xf32>, tensor<4096x512xf32>) -> tensor<1x4096xf32>
  func.return %y : tensor<1x4096xf32>
}

// CHECK-LABEL: func.func @weights
// CHECK-NEXT:    %w = graph.constant dense<2.000000e-02> : tensor<4096x512xf32>
// CHECK-NEXT:    %y = graph.gemm %x, %w {transB = 1 : i64}
// LIMIT-LABEL: func.func @weights
// LIMIT-NEXT:    %w = graph.constant dense<2.000000e-02> : tensor<4096x512xf32>

// -----

// The shape chain an exporter writes for `reshape(x, [batch, -1])` folds away.
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %dims = graph.constant dense<[2, 3, 4]> : tensor<3xi64>
  %i = graph.constant dense<0> : tensor<i64>
  %n = graph.gather %dims, %i : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = graph.constant dense<0> : tensor<1xi64>
  %n1 = graph.unsqueeze %n, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m = graph.constant dense<-1> : tensor<1xi64>
  %shape = graph.concat %n1, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  func.return %r : tensor<2x12xf32>
}

// CHECK-LABEL: func.func @shape_chain
// CHECK-NEXT:    %shape = graph.constant dense<[2, -1]> : tensor<2xi64>
// CHECK-NEXT:    %r = graph.reshape %x, %shape
// CHECK-NEXT:    func.return %r

// -----

// Must not fold: an operand that is not a constant.
func.func @not_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = graph.add %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK-LABEL: func.func @not_constant
// CHECK-NEXT:    %c = graph.constant
// CHECK-NEXT:    %y = graph.add %x, %c

// -----

// Folds element-wise math on constants; with max-elements=4 a 6-element
// result is left alone.
func.func @limit() -> tensor<2x3xf32> {
  %a = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = graph.constant dense<1.0> : tensor<2x3xf32>
  %s = graph.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @limit
// CHECK-NEXT:    %s = graph.constant dense<[[2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    func.return %s
// LIMIT-LABEL: func.func @limit
// LIMIT:         %s = graph.add %a, %b

// -----

// A layout transform of a constant (graph-layout's weights) folds whatever
// its size, also with max-elements=4: it only moves elements. A splat stays
// a splat.
func.func @layout() -> (tensor<2x2x1x1x2x2xf32>, tensor<64x64x3x3x8x8xf32>) {
  %w = graph.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]]], [[[4.0]], [[5.0]], [[6.0]], [[7.0]]], [[[8.0]], [[9.0]], [[10.0]], [[11.0]]], [[[12.0]], [[13.0]], [[14.0]], [[15.0]]]]> : tensor<4x4x1x1xf32>
  %blocked = graph.layout_transform %w {source = "OIHW", target = "OIHW2i2o"} : (tensor<4x4x1x1xf32>) -> tensor<2x2x1x1x2x2xf32>
  %s = graph.constant dense<2.0> : tensor<512x512x3x3xf32>
  %splat = graph.layout_transform %s {source = "OIHW", target = "OIHW8i8o"} : (tensor<512x512x3x3xf32>) -> tensor<64x64x3x3x8x8xf32>
  func.return %blocked, %splat : tensor<2x2x1x1x2x2xf32>, tensor<64x64x3x3x8x8xf32>
}

// CHECK-LABEL: func.func @layout
// CHECK-NEXT:    %blocked = graph.constant dense<{{\[\[\[\[\[\[}}0.000000e+00, 4.000000e+00], [1.000000e+00, 5.000000e+00]]]], {{.*}} : tensor<2x2x1x1x2x2xf32>
// CHECK-NEXT:    %splat = graph.constant dense<2.000000e+00> : tensor<64x64x3x3x8x8xf32>
// CHECK-NEXT:    func.return %blocked, %splat
// LIMIT-LABEL: func.func @layout
// LIMIT-NEXT:    %blocked = graph.constant dense<{{\[\[\[\[\[\[}}0.000000e+00, 4.000000e+00], [1.000000e+00, 5.000000e+00]]]], {{.*}} : tensor<2x2x1x1x2x2xf32>
// LIMIT-NEXT:    %splat = graph.constant dense<2.000000e+00> : tensor<64x64x3x3x8x8xf32>

// -----

// A splat (what ConstantOfShape folds into) stores one element, but
// evaluating expands it: a reduction of a splat larger than max-elements is
// not folded, however small its result.
func.func @splat_operand() -> tensor<1x1xf32> {
  %shape = graph.constant dense<[2, 3]> : tensor<2xi64>
  %s = graph.constant_of_shape %shape {value = dense<2.000000e+00> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<2x3xf32>
  %r = graph.reduce_sum %s : (tensor<2x3xf32>) -> tensor<1x1xf32>
  func.return %r : tensor<1x1xf32>
}

// CHECK-LABEL: func.func @splat_operand
// CHECK-NEXT:    %r = graph.constant dense<1.200000e+01> : tensor<1x1xf32>
// CHECK-NEXT:    func.return %r
// LIMIT-LABEL: func.func @splat_operand
// LIMIT-NEXT:    %s = graph.constant dense<2.000000e+00> : tensor<2x3xf32>
// LIMIT-NEXT:    %r = graph.reduce_sum %s

// -----

// Shape and Size of a value whose shape is static fold whatever the value,
// and the arithmetic on them with it (sizes pinned: the position ids Range(0, S)
// an exporter computes become a constant).
func.func @static_shape(%x: tensor<2x7xi64>) -> (tensor<7xi64>, tensor<i64>) {
  %shape = graph.shape %x : (tensor<2x7xi64>) -> tensor<2xi64>
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %s = graph.gather %shape, %one {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %positions = graph.range %zero, %s, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<7xi64>
  %size = graph.size %x : (tensor<2x7xi64>) -> tensor<i64>
  func.return %positions, %size : tensor<7xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @static_shape
// CHECK-NEXT:    %positions = graph.constant dense<[0, 1, 2, 3, 4, 5, 6]> : tensor<7xi64>
// CHECK-NEXT:    %size = graph.constant dense<14> : tensor<i64>
// CHECK-NEXT:    func.return %positions, %size

// -----

// Must not fire: a Shape of symbolic dims is not a constant.
func.func @symbolic_shape(%x: tensor<?x17xi64, #graph.dims<N>>) -> tensor<2xi64> attributes {graph.symbols = {N = #graph.range<1, ?>}} {
  %shape = graph.shape %x : (tensor<?x17xi64, #graph.dims<N>>) -> tensor<2xi64>
  func.return %shape : tensor<2xi64>
}

// CHECK-LABEL: func.func @symbolic_shape
// CHECK-NEXT:    %shape = graph.shape %x
