// RUN: ember-opt %s -p graph-canonicalize,dce --split-input-file | filecheck %s

// Identity, Dropout, a one-operand Sum, x + 0, x * 1 and x / 1 all vanish.
func.func @forwarding(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant dense<0.000000e+00> : tensor<3xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %a = graph.identity %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = graph.dropout %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = graph.sum %b : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = graph.add %zero, %c : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = graph.mul %d, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %f = graph.div %e, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %g = graph.relu %f : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @forwarding
// CHECK-NEXT:    %g = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %g

// -----

// Must not fire: x + 0 that broadcasts x to a bigger shape, and x * 2.
func.func @keep(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %zero = graph.constant dense<0.000000e+00> : tensor<2x3xf32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %a = graph.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = graph.mul %x, %two : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %a, %b : tensor<2x3xf32>, tensor<3xf32>
}
// CHECK-LABEL: func.func @keep
// CHECK:         %a = graph.add %x, %zero
// CHECK-NEXT:    %b = graph.mul %x, %two

// -----

// Sub by a constant is Add of its negation; Div by a power of two is Mul by
// its (exact) reciprocal; Div by 3 stays (1/3 is not exact).
func.func @sub_div(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c = graph.constant dense<1.500000e+00> : tensor<f32>
  %four = graph.constant dense<4.000000e+00> : tensor<f32>
  %three = graph.constant dense<3.000000e+00> : tensor<f32>
  %s = graph.sub %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %d = graph.div %x, %four : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t = graph.div %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %s, %d, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @sub_div
// CHECK:         %[[NEG:.*]] = graph.constant dense<-1.500000e+00> : tensor<f32>
// CHECK-NEXT:    %s = graph.add %x, %[[NEG]]
// CHECK-NEXT:    %[[QUARTER:.*]] = graph.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %d = graph.mul %x, %[[QUARTER]]
// CHECK-NEXT:    %t = graph.div %x, %three

// -----

// Transpose pairs compose (to nothing when they cancel); reshape chains
// collapse; squeeze undoes unsqueeze.
func.func @structure(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3x4xf32>) {
  %t1 = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %t2 = graph.transpose %t1 {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  %t3 = graph.transpose %t1 {perm = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  %s1 = graph.constant dense<[6, 4]> : tensor<2xi64>
  %s2 = graph.constant dense<24> : tensor<1xi64>
  %r1 = graph.reshape %x, %s1 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %r2 = graph.reshape %r1, %s2 : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  %axes = graph.constant dense<0> : tensor<1xi64>
  %u = graph.unsqueeze %x, %axes : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<1x2x3x4xf32>
  %q = graph.squeeze %u, axes %axes : (tensor<1x2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>
  func.return %t2, %t3, %r2, %q : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3x4xf32>
}
// CHECK-LABEL: func.func @structure
// CHECK:         %t3 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK:         %r2 = graph.reshape %x, %{{.*}} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<24xf32>
// CHECK-NEXT:    func.return %x, %t3, %r2, %x

// -----

// Gemm with transB and a constant B: B is transposed now.
func.func @gemm(%a: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %y = graph.gemm %a, %w {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @gemm
// CHECK-NEXT:    %[[WT:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 5.000000e+00, 9.000000e+00], [2.000000e+00, 6.000000e+00, 1.000000e+01], [3.000000e+00, 7.000000e+00, 1.100000e+01], [4.000000e+00, 8.000000e+00, 1.200000e+01]]> : tensor<4x3xf32>
// CHECK-NEXT:    %y = graph.gemm %a, %[[WT]] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>

// -----

// A Reshape to the shape of a tensor (as SqueezeNet ends) whose result type
// has one symbolic dim: a Reshape to a constant shape, the symbol as -1, and
// the Shape op dies. With two symbolic dims the computed shape stays.
func.func @computed_shape(%x: tensor<?x1000xf32, #graph.dims<N>>, %like: tensor<?x1000x1x1xf32, #graph.dims<N>>) -> tensor<?x1000x1x1xf32, #graph.dims<N>> {
  %shape = graph.shape %like : (tensor<?x1000x1x1xf32, #graph.dims<N>>) -> tensor<4xi64>
  %y = graph.reshape %x, %shape : (tensor<?x1000xf32, #graph.dims<N>>, tensor<4xi64>) -> tensor<?x1000x1x1xf32, #graph.dims<N>>
  func.return %y : tensor<?x1000x1x1xf32, #graph.dims<N>>
}
// CHECK-LABEL: func.func @computed_shape
// CHECK-NOT:     graph.shape
// CHECK:         %[[SHAPE:.*]] = graph.constant dense<[-1, 1000, 1, 1]> : tensor<4xi64>
// CHECK:         %y = graph.reshape %x, %[[SHAPE]]

func.func @two_symbols(%x: tensor<?x?xf32, #graph.dims<N, S>>, %like: tensor<?x?x1xf32, #graph.dims<N, S>>) -> tensor<?x?x1xf32, #graph.dims<N, S>> {
  %shape = graph.shape %like : (tensor<?x?x1xf32, #graph.dims<N, S>>) -> tensor<3xi64>
  %y = graph.reshape %x, %shape : (tensor<?x?xf32, #graph.dims<N, S>>, tensor<3xi64>) -> tensor<?x?x1xf32, #graph.dims<N, S>>
  func.return %y : tensor<?x?x1xf32, #graph.dims<N, S>>
}
// CHECK-LABEL: func.func @two_symbols
// CHECK:         %shape = graph.shape %like
// CHECK:         graph.reshape %x, %shape
