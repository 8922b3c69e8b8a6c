// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// Binarizer is one all-parallel generic: 1 where x > threshold. An integer
// input compares with floor(threshold) (-1.5 -> -2), which is the same test.
func.func @binarizer(%x: tensor<3x4xf32>, %n: tensor<5xi32>) -> (tensor<3x4xf32>, tensor<5xi32>) {
  %b = graph.binarizer %x {threshold = 5.000000e-01 : f32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %bi = graph.binarizer %n {threshold = -1.500000e+00 : f32} : (tensor<5xi32>) -> tensor<5xi32>
  func.return %b, %bi : tensor<3x4xf32>, tensor<5xi32>
}

// CHECK-LABEL: func.func @binarizer
// CHECK:      %b = linalg.generic
// CHECK-SAME:   iterator_types = ["parallel", "parallel"]
// CHECK:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[T:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[GT:.*]] = arith.cmpf ogt, %{{.*}}, %[[T]] : f32
// CHECK-NEXT:   arith.select %[[GT]], %[[ONE]], %[[ZERO]] : f32
// CHECK:      %bi = linalg.generic
// CHECK:        %[[B:.*]] = arith.constant -2 : i32
// CHECK-NEXT:   arith.cmpi sgt, %{{.*}}, %[[B]] : i32

// ArrayFeatureExtractor gathers along the last axis by the flattened
// indices; a 1-D input is one row.
func.func @extractor(%v: tensor<6xf32>, %j: tensor<1x3xi64>) -> tensor<1x3xf32> {
  %row = graph.array_feature_extractor %v, %j : (tensor<6xf32>, tensor<1x3xi64>) -> tensor<1x3xf32>
  func.return %row : tensor<1x3xf32>
}

// CHECK-LABEL: func.func @extractor
// CHECK:      %[[ROWS:.*]] = tensor.reshape %v({{.*}}) : (tensor<6xf32>, tensor<2xi64>) -> tensor<1x6xf32>
// CHECK:      %[[FLAT:.*]] = tensor.reshape %j({{.*}}) : (tensor<1x3xi64>, tensor<1xi64>) -> tensor<3xi64>
// CHECK-NEXT: %row = ember_linalg.gather %[[ROWS]][%[[FLAT]]] {index_maps = [affine_map<(d0, d1) -> (d1)>], data_map = affine_map<(d0, d1)[s0] -> (d0, s0)>} : tensor<1x6xf32>, tensor<3xi64> -> tensor<1x3xf32>

// Momentum: one generic per result, R and T broadcast (rank-0 maps), the
// body in f64 and rounded once; beta applies once T > 0.
func.func @momentum(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %y, %vn = graph.momentum %r, %t, %x, %g, %v {alpha = 9.000000e-01 : f32, beta = 1.000000e-01 : f32, mode = "standard", norm_coefficient = 0.000000e+00 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y, %vn : tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @momentum
// CHECK:      %y = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%r, %t, %x, %g, %v : tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:        arith.sitofp %{{.*}} : i64 to f64
// CHECK:        %[[LATER:.*]] = arith.cmpf ogt
// CHECK-NEXT:   arith.select %[[LATER]]
// CHECK:        arith.truncf %{{.*}} : f64 to f32
// CHECK:      %vn = linalg.generic
// CHECK:        arith.truncf %{{.*}} : f64 to f32

// Adam: the bias correction r * sqrt(1 - beta^T) / (1 - alpha^T) once T > 0.
func.func @adam(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
  %y, %v, %h = graph.adam %r, %t, %x, %x, %x, %x : (tensor<f32>, tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>)
  func.return %y, %v, %h : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}

// CHECK-LABEL: func.func @adam
// CHECK:      %y = linalg.generic
// CHECK:        math.powf
// CHECK:        math.sqrt
// CHECK:        math.powf
// CHECK:        arith.select
// CHECK:        math.sqrt
// CHECK:        linalg.yield %{{.*}} : f64
// CHECK:      %v = linalg.generic
// CHECK:      %h = linalg.generic

// TreeEnsemble: one generic over [N, n_targets] reading X once per feature a
// split tests; each tree is selects of its leaves' weights and targets (a
// NEQ split is `une`; a split whose missing value tracks true also takes
// NaN), and a tree's weight counts where its leaf's target is the index.
func.func @tree(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %tree = graph.tree_ensemble %x {leaf_targetids = array<i64: 0, 1, 0>, leaf_weights = dense<[5.000000e-01, 2.000000e+00, -1.000000e+00]> : tensor<3xf32>, n_targets = 2 : i64, nodes_falseleafs = array<i64: 0, 1>, nodes_falsenodeids = array<i64: 1, 2>, nodes_featureids = array<i64: 1, 0>, nodes_missing_value_tracks_true = array<i64: 1, 0>, nodes_modes = dense<[0, 5]> : tensor<2xui8>, nodes_splits = dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf32>, nodes_trueleafs = array<i64: 1, 1>, nodes_truenodeids = array<i64: 0, 1>, tree_roots = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  func.return %tree : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @tree
// CHECK:      %tree = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<3x4xf32>, tensor<3x4xf32>)
// CHECK:        %[[TARGET:.*]] = arith.index_cast
// CHECK:        %[[NEQ:.*]] = arith.cmpf une
// CHECK:        arith.cmpf ole
// CHECK-NEXT:   arith.cmpf uno
// CHECK:        %[[LEAF:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i64
// CHECK:        %[[HIT:.*]] = arith.cmpi eq, %[[LEAF]], %[[TARGET]] : i64
// CHECK:        arith.select %[[HIT]]
