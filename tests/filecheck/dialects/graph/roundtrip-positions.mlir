// RUN: ember-opt %s | ember-opt | filecheck %s

// CumSum and CumProd (axis an operand; exclusive, reverse), TopK (two results),
// Hardmax and OneHot (depth an operand, values = [off, on]).

func.func @positions(%x: tensor<3x5xf32>, %i: tensor<2x3xi64>, %v: tensor<2xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x5xf32>, tensor<2x4x3xf32>) {
  %axis = graph.constant dense<1> : tensor<i32>
  %k = graph.constant dense<2> : tensor<1xi64>
  %depth = graph.constant dense<4> : tensor<i64>
  %sum = graph.cum_sum %x, %axis {exclusive = 1 : i64} : (tensor<3x5xf32>, tensor<i32>) -> tensor<3x5xf32>
  %prod = graph.cum_prod %x, %axis {reverse = 1 : i64} : (tensor<3x5xf32>, tensor<i32>) -> tensor<3x5xf32>
  %values, %indices = graph.top_k %x, %k {largest = 0 : i64} : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  %hard = graph.hardmax %x {axis = 0 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %hot = graph.one_hot %i, %depth, %v {axis = 1 : i64} : (tensor<2x3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<2x4x3xf32>
  func.return %sum, %prod, %values, %indices, %hard, %hot : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x5xf32>, tensor<2x4x3xf32>
}

// CHECK:      %axis = graph.constant dense<1> : tensor<i32>
// CHECK-NEXT: %k = graph.constant dense<2> : tensor<1xi64>
// CHECK-NEXT: %depth = graph.constant dense<4> : tensor<i64>
// CHECK-NEXT: %sum = graph.cum_sum %x, %axis {exclusive = 1 : i64} : (tensor<3x5xf32>, tensor<i32>) -> tensor<3x5xf32>
// CHECK-NEXT: %prod = graph.cum_prod %x, %axis {reverse = 1 : i64} : (tensor<3x5xf32>, tensor<i32>) -> tensor<3x5xf32>
// CHECK-NEXT: %values, %indices = graph.top_k %x, %k {largest = 0 : i64} : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK-NEXT: %hard = graph.hardmax %x {axis = 0 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %hot = graph.one_hot %i, %depth, %v {axis = 1 : i64} : (tensor<2x3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<2x4x3xf32>
