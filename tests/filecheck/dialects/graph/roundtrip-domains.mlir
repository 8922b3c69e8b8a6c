// RUN: ember-opt %s | ember-opt | filecheck %s

// The ops of ONNX's other domains: ai.onnx.ml (ops_ml.py) and
// ai.onnx.preview.training (ops_training.py). Their names carry no domain
// (`graph.binarizer`); their OpSpec records it.

func.func @ml(%x: tensor<3x4xf32>, %n: tensor<5xi32>, %v: tensor<6xf64>, %i: tensor<2xi64>, %j: tensor<1x3xi64>) -> (tensor<3x4xf32>, tensor<5xi32>, tensor<3x2xf32>, tensor<1x3xf64>, tensor<3x2xf32>) {
  %b = graph.binarizer %x {threshold = 5.000000e-01 : f32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %bi = graph.binarizer %n : (tensor<5xi32>) -> tensor<5xi32>
  %z = graph.array_feature_extractor %x, %i : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  %row = graph.array_feature_extractor %v, %j : (tensor<6xf64>, tensor<1x3xi64>) -> tensor<1x3xf64>
  %tree = graph.tree_ensemble %x {leaf_targetids = array<i64: 0, 1, 0>, leaf_weights = dense<[5.000000e-01, 2.000000e+00, -1.000000e+00]> : tensor<3xf32>, n_targets = 2 : i64, nodes_falseleafs = array<i64: 0, 1>, nodes_falsenodeids = array<i64: 1, 2>, nodes_featureids = array<i64: 1, 0>, nodes_missing_value_tracks_true = array<i64: 1, 0>, nodes_modes = dense<[0, 5]> : tensor<2xui8>, nodes_splits = dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf32>, nodes_trueleafs = array<i64: 1, 1>, nodes_truenodeids = array<i64: 0, 1>, tree_roots = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  func.return %b, %bi, %z, %row, %tree : tensor<3x4xf32>, tensor<5xi32>, tensor<3x2xf32>, tensor<1x3xf64>, tensor<3x2xf32>
}

// CHECK:      %b = graph.binarizer %x {threshold = 5.000000e-01 : f32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %bi = graph.binarizer %n : (tensor<5xi32>) -> tensor<5xi32>
// CHECK-NEXT: %z = graph.array_feature_extractor %x, %i : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x2xf32>
// CHECK-NEXT: %row = graph.array_feature_extractor %v, %j : (tensor<6xf64>, tensor<1x3xi64>) -> tensor<1x3xf64>
// CHECK-NEXT: %tree = graph.tree_ensemble %x {leaf_targetids = array<i64: 0, 1, 0>, leaf_weights = dense<[5.000000e-01, 2.000000e+00, -1.000000e+00]> : tensor<3xf32>, n_targets = 2 : i64, nodes_falseleafs = array<i64: 0, 1>, nodes_falsenodeids = array<i64: 1, 2>, nodes_featureids = array<i64: 1, 0>, nodes_missing_value_tracks_true = array<i64: 1, 0>, nodes_modes = dense<[0, 5]> : tensor<2xui8>, nodes_splits = dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf32>, nodes_trueleafs = array<i64: 1, 1>, nodes_truenodeids = array<i64: 0, 1>, tree_roots = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x2xf32>

func.func @training(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<3x2xf32>, %g1: tensor<2xf32>, %g2: tensor<3x2xf32>, %h1: tensor<2xf32>, %h2: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %x1n, %x2n, %h1n, %h2n = graph.adagrad %r, %t, %x1, %x2, %g1, %g2, %h1, %h2 {decay_factor = 1.000000e-01 : f32, epsilon = 1.000000e-05 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>)
  %ax, %av, %ah = graph.adam %r, %t, %x1, %g1, %h1, %h1 {alpha = 9.500000e-01 : f32, norm_coefficient_post = 1.000000e-03 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  %mx, %mv = graph.momentum %r, %t, %x1, %g1, %h1 {alpha = 9.500000e-01 : f32, beta = 1.000000e+00 : f32, mode = "nesterov", norm_coefficient = 0.000000e+00 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %x1n, %x2n, %h1n, %h2n, %ax, %av, %ah, %mx, %mv : tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// CHECK:      %x1n, %x2n, %h1n, %h2n = graph.adagrad %r, %t, %x1, %x2, %g1, %g2, %h1, %h2 {decay_factor = 1.000000e-01 : f32, epsilon = 1.000000e-05 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>)
// CHECK-NEXT: %ax, %av, %ah = graph.adam %r, %t, %x1, %g1, %h1, %h1 {alpha = 9.500000e-01 : f32, norm_coefficient_post = 1.000000e-03 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: %mx, %mv = graph.momentum %r, %t, %x1, %g1, %h1 {alpha = 9.500000e-01 : f32, beta = 1.000000e+00 : f32, mode = "nesterov", norm_coefficient = 0.000000e+00 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
