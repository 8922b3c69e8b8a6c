// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// CumSum: one generic with an extra reduction loop (d2) over the positions
// along the axis; exclusive counts the positions strictly before its own.
func.func @cum_sum(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %axis = graph.constant dense<1> : tensor<i32>
  %sum = graph.cum_sum %x, %axis {exclusive = 1 : i64} : (tensor<3x5xf32>, tensor<i32>) -> tensor<3x5xf32>
  func.return %sum : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @cum_sum
// CHECK:      %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:        %[[K:.*]] = arith.index_cast
// CHECK:        %[[I:.*]] = arith.index_cast
// CHECK-NEXT:   %[[COUNTED:.*]] = arith.cmpi slt, %[[K]], %[[I]] : i64
// CHECK:        arith.select %[[COUNTED]]
// CHECK-NEXT:   arith.addf

// TopK: the ranks along the axis (larger first, ties by index), then one
// reduction generic picking the element of each rank below K and its index.
func.func @top_k(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %k = graph.constant dense<2> : tensor<1xi64>
  %values, %indices = graph.top_k %x, %k : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %values, %indices : tensor<3x2xf32>, tensor<3x2xi64>
}

// CHECK-LABEL: func.func @top_k
// CHECK:      %[[RANKS:.*]] = linalg.generic {{.*}} ins(%x, %x : tensor<3x5xf32>, tensor<3x5xf32>) outs(%{{.*}} : tensor<3x5xi64>)
// CHECK:        arith.cmpf oeq
// CHECK:        arith.cmpf ogt
// CHECK:        arith.extui
// CHECK:      %values, %indices = linalg.generic {{.*}} ins(%x, %[[RANKS]] : tensor<3x5xf32>, tensor<3x5xi64>) outs(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xi64>)

// OneHot: one parallel generic; off and on are read from values[0] and values[1].
func.func @one_hot(%i: tensor<2x3xi64>, %v: tensor<2xf32>) -> tensor<2x4x3xf32> {
  %depth = graph.constant dense<4> : tensor<i64>
  %hot = graph.one_hot %i, %depth, %v {axis = 1 : i64} : (tensor<2x3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<2x4x3xf32>
  func.return %hot : tensor<2x4x3xf32>
}

// CHECK-LABEL: func.func @one_hot
// CHECK:      %hot = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (0)>, affine_map<(d0, d1, d2) -> (1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%i, %v, %v : tensor<2x3xi64>, tensor<2xf32>, tensor<2xf32>)
// CHECK:        arith.constant 4 : i64
// CHECK:        linalg.index 1

// ReverseSequence: a generic computes the time step each (time, batch)
// position reads, then one gather along the time axis.
func.func @reverse_sequence(%s: tensor<4x3x2xf32>, %lens: tensor<3xi64>) -> tensor<4x3x2xf32> {
  %rev = graph.reverse_sequence %s, %lens : (tensor<4x3x2xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
  func.return %rev : tensor<4x3x2xf32>
}

// CHECK-LABEL: func.func @reverse_sequence
// CHECK:      %[[STEPS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%lens : tensor<3xi64>)
// CHECK:      %rev = ember_linalg.gather %s[%[[STEPS]]] {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>], data_map = affine_map<(d0, d1, d2)[s0] -> (s0, d1, d2)>} : tensor<4x3x2xf32>, tensor<4x3xi64> -> tensor<4x3x2xf32>

// EyeLike: one parallel generic without inputs, 1 where column - row == k.
func.func @eye_like(%m: tensor<4x5xi32>) -> tensor<4x5xf64> {
  %eye = graph.eye_like %m {dtype = f64, k = 1 : i64} : (tensor<4x5xi32>) -> tensor<4x5xf64>
  func.return %eye : tensor<4x5xf64>
}

// CHECK-LABEL: func.func @eye_like
// CHECK:      %eye = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x5xf64>)
// CHECK:        arith.subi
// CHECK:        arith.constant 1 : i64
// CHECK-NEXT:   arith.cmpi eq
