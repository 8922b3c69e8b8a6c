// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The shape rules of the ai.onnx.ml and ai.onnx.preview.training ops name
// the broken rule.

// Adagrad takes X, G and H for each tensor: a count that is no multiple of 3.
func.func @adagrad_count(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.adagrad %r, %t, %x, %g : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      sym_name = "adagrad_count"
// CHECK:      Operation does not verify: graph.adagrad: Adagrad takes X, G, H for each tensor it updates: the number of inputs after R and T must be a positive multiple of 3, got 2

// -----

// A gradient has its tensor's type.
func.func @adam_gradient(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %y, %v, %h = graph.adam %r, %t, %x, %g, %x, %x : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %y, %v, %h : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// CHECK:      sym_name = "adam_gradient"
// CHECK:      Operation does not verify: graph.adam: G1 must have the type of X1 (tensor<2xf32>), got tensor<3xf32>

// -----

// T is the int64 update count.
func.func @momentum_count_type(%r: tensor<f32>, %t: tensor<i32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %y, %v = graph.momentum %r, %t, %x, %x, %x {alpha = 9.000000e-01 : f32, beta = 1.000000e+00 : f32, mode = "standard", norm_coefficient = 0.000000e+00 : f32} : (tensor<f32>, tensor<i32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y, %v : tensor<2xf32>, tensor<2xf32>
}

// CHECK:      sym_name = "momentum_count_type"
// CHECK:      Operation does not verify: graph.momentum: T must be an int64 scalar, got tensor<i32>

// -----

// Momentum's mode is standard or nesterov.
func.func @momentum_mode(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %y, %v = graph.momentum %r, %t, %x, %x, %x {alpha = 9.000000e-01 : f32, beta = 1.000000e+00 : f32, mode = "heavy", norm_coefficient = 0.000000e+00 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y, %v : tensor<2xf32>, tensor<2xf32>
}

// CHECK:      sym_name = "momentum_mode"
// CHECK:      Operation does not verify: graph.momentum: mode must be one of standard, nesterov, got 'heavy'

// -----

// Momentum's attributes have no defaults.
func.func @momentum_alpha(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %y, %v = graph.momentum %r, %t, %x, %x, %x {beta = 1.000000e+00 : f32, mode = "standard", norm_coefficient = 0.000000e+00 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y, %v : tensor<2xf32>, tensor<2xf32>
}

// CHECK:      sym_name = "momentum_alpha"
// CHECK:      Operation does not verify: property 'alpha' expected in operation 'graph.momentum'

// -----

// Each result has the type of its tensor (or state).
func.func @adagrad_results(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.adagrad %r, %t, %x, %x, %x : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      sym_name = "adagrad_results"
// CHECK:      Operation does not verify: graph.adagrad: Adagrad of 1 tensor(s) gives 2 outputs, 1 are asked for

// -----

// Binarizer takes f32, f64, i64 or i32.
func.func @binarizer_type(%x: tensor<3xi8>) -> tensor<3xi8> {
  %y = graph.binarizer %x : (tensor<3xi8>) -> tensor<3xi8>
  func.return %y : tensor<3xi8>
}

// CHECK:      sym_name = "binarizer_type"
// CHECK:      Operation does not verify: graph.binarizer: X must be f32, f64, i64 or i32, got tensor<3xi8>

// -----

// ArrayFeatureExtractor replaces X's last axis with the number of indices.
func.func @extractor_shape(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>) -> tensor<3x2xf32> {
  %y = graph.array_feature_extractor %x, %i : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// CHECK:      sym_name = "extractor_shape"
// CHECK:      Operation does not verify: graph.array_feature_extractor: result #0 has type tensor<3x2xf32>, but the operands imply tensor<3x4xf32>

// -----

// Ember models TreeEnsemble without a post-transform.
func.func @tree_post_transform(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
  %y = graph.tree_ensemble %x {leaf_targetids = array<i64: 0, 0>, leaf_weights = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, nodes_falseleafs = array<i64: 1>, nodes_falsenodeids = array<i64: 1>, nodes_featureids = array<i64: 0>, nodes_modes = dense<0> : tensor<1xui8>, nodes_splits = dense<5.000000e-01> : tensor<1xf32>, nodes_trueleafs = array<i64: 1>, nodes_truenodeids = array<i64: 0>, post_transform = 2 : i64, tree_roots = array<i64: 0>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}

// CHECK:      sym_name = "tree_post_transform"
// CHECK:      Operation does not verify: graph.tree_ensemble: post_transform LOGISTIC is not supported (Ember models NONE only)

// -----

// A split reads a feature of X.
func.func @tree_feature(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
  %y = graph.tree_ensemble %x {leaf_targetids = array<i64: 0, 0>, leaf_weights = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, nodes_falseleafs = array<i64: 1>, nodes_falsenodeids = array<i64: 1>, nodes_featureids = array<i64: 2>, nodes_modes = dense<0> : tensor<1xui8>, nodes_splits = dense<5.000000e-01> : tensor<1xf32>, nodes_trueleafs = array<i64: 1>, nodes_truenodeids = array<i64: 0>, tree_roots = array<i64: 0>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}

// CHECK:      sym_name = "tree_feature"
// CHECK:      Operation does not verify: graph.tree_ensemble: nodes_featureids[0] (2) is not a feature of X

// -----

// A node that leads back to itself is no tree.
func.func @tree_cycle(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
  %y = graph.tree_ensemble %x {leaf_targetids = array<i64: 0>, leaf_weights = dense<1.000000e+00> : tensor<1xf32>, nodes_falseleafs = array<i64: 1>, nodes_falsenodeids = array<i64: 0>, nodes_featureids = array<i64: 0>, nodes_modes = dense<0> : tensor<1xui8>, nodes_splits = dense<5.000000e-01> : tensor<1xf32>, nodes_trueleafs = array<i64: 0>, nodes_truenodeids = array<i64: 0>, tree_roots = array<i64: 0>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}

// CHECK:      sym_name = "tree_cycle"
// CHECK:      Operation does not verify: graph.tree_ensemble: node 0 lies on a cycle

// -----

// The split values have X's type.
func.func @tree_split_type(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
  %y = graph.tree_ensemble %x {leaf_targetids = array<i64: 0, 0>, leaf_weights = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, nodes_falseleafs = array<i64: 1>, nodes_falsenodeids = array<i64: 1>, nodes_featureids = array<i64: 0>, nodes_modes = dense<0> : tensor<1xui8>, nodes_splits = dense<5.000000e-01> : tensor<1xf64>, nodes_trueleafs = array<i64: 1>, nodes_truenodeids = array<i64: 0>, tree_roots = array<i64: 0>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}

// CHECK:      sym_name = "tree_split_type"
// CHECK:      Operation does not verify: graph.tree_ensemble: nodes_splits must be a tensor of float32, got float64
