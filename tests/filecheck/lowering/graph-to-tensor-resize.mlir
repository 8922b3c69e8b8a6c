// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop,loop-generate | filecheck %s --check-prefix=LOOPS

// Nearest: one gather per resized axis by a constant index vector; the
// axes whose scale is 1 are left alone.
func.func @nearest(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %s = graph.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %y = graph.resize %x, scales %s {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x3x2x2xf32>, tensor<4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}

// CHECK-LABEL: func.func @nearest
// CHECK-NEXT:    %0 = graph.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
// CHECK-NEXT:    %1 = ember_linalg.gather %x[%0] {index_maps = [affine_map<(d0, d1, d2, d3) -> (d2)>], data_map = affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, s0, d3)>} : tensor<1x3x2x2xf32>, tensor<4xi64> -> tensor<1x3x4x2xf32>
// CHECK-NEXT:    %2 = graph.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
// CHECK-NEXT:    %y = ember_linalg.gather %1[%2] {index_maps = [affine_map<(d0, d1, d2, d3) -> (d3)>], data_map = affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, d2, s0)>} : tensor<1x3x4x2xf32>, tensor<4xi64> -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    func.return %y

// Linear along one axis (`axes`) of a tensor with a symbolic batch: a
// gather by the [out, taps] index table, then a reduction over the taps
// weighted by the [out, taps] table.
func.func @linear(%x: tensor<?x3x4xf32, #graph.dims<N>>) -> tensor<?x3x2xf32, #graph.dims<N>> attributes {graph.symbols = {N = #graph.range<1, 8>}} {
  %s = graph.constant dense<[2]> : tensor<1xi64>
  %y = graph.resize %x, sizes %s {axes = array<i64: 2>, mode = "linear"} : (tensor<?x3x4xf32, #graph.dims<N>>, tensor<1xi64>) -> tensor<?x3x2xf32, #graph.dims<N>>
  func.return %y : tensor<?x3x2xf32, #graph.dims<N>>
}

// CHECK-LABEL: func.func @linear
// CHECK:         %[[IDX:.*]] = graph.constant dense<{{\[}}[0, 1], [2, 3]]> : tensor<2x2xi64>
// CHECK-NEXT:    %[[TAKEN:.*]] = ember_linalg.gather %x[%[[IDX]]] {index_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>], data_map = affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, s0)>} : tensor<?x3x4xf32, #graph.dims<N>>, tensor<2x2xi64> -> tensor<?x3x2x2xf32, #graph.dims<N>>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<5.000000e-01> : tensor<2x2xf32>
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[TAKEN]], %[[W]] : {{.*}}) outs(
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf

// Crop and resize: positions outside the input take the extrapolation
// value, by a select on a constant mask after each axis.
func.func @crop(%x: tensor<4x4xf32>) -> tensor<3x3xf32> {
  %r = graph.constant dense<[0.4, 0.6, 1.2, 1.7]> : tensor<4xf32>
  %s = graph.constant dense<[3, 3]> : tensor<2xi64>
  %y = graph.resize %x, roi %r, sizes %s {coordinate_transformation_mode = "tf_crop_and_resize", mode = "linear", extrapolation_value = 10.0 : f32} : (tensor<4x4xf32>, tensor<4xf32>, tensor<2xi64>) -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @crop
// CHECK:         graph.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK:           %{{.*}} = arith.constant 1.000000e+01 : f32
// CHECK-NEXT:      arith.select
// CHECK:         graph.constant dense<[false, true, true]> : tensor<3xi1>

// LOOPS-LABEL: func.func @nearest
// LOOPS-NOT:     graph.resize
// LOOPS-LABEL: func.func @linear
// LOOPS:         scf.for
// LOOPS-NOT:     graph.resize
