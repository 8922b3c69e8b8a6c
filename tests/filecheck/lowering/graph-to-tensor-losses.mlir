// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// NegativeLogLikelihoodLoss: the target's score and weight are gathered (the
// class index read at run time), one generic weighs and negates them (an
// ignored target weighs 0), and a mean is the sum of the losses over the sum
// of the weights.
func.func @nll_mean(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  %loss = graph.negative_log_likelihood_loss %x, %t, weight %w {ignore_index = 2 : i64} : (tensor<3x5xf32>, tensor<3xi64>, tensor<5xf32>) -> tensor<f32>
  func.return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @nll_mean
// CHECK:      %[[SCORE:.*]] = ember_linalg.gather %x[%t] {index_maps = [affine_map<(d0) -> (d0)>], data_map = affine_map<(d0)[s0] -> (d0, s0)>} : tensor<3x5xf32>, tensor<3xi64> -> tensor<3xf32>
// CHECK-NEXT: %[[WEIGHT:.*]] = ember_linalg.gather %w[%t] {index_maps = [affine_map<(d0) -> (d0)>], data_map = affine_map<(d0)[s0] -> (s0)>} : tensor<5xf32>, tensor<3xi64> -> tensor<3xf32>
// CHECK:      ins(%[[SCORE]], %t, %[[WEIGHT]] : tensor<3xf32>, tensor<3xi64>, tensor<3xf32>)
// CHECK:        arith.constant 2 : i64
// CHECK-NEXT:   %[[COUNTED:.*]] = arith.cmpi ne
// CHECK:        arith.select %[[COUNTED]]
// CHECK:        arith.mulf
// CHECK-NEXT:   arith.negf
// CHECK:      iterator_types = ["reduction"]
// CHECK:      iterator_types = ["reduction"]
// CHECK:      %loss = linalg.generic
// CHECK:        arith.divf

// SoftmaxCrossEntropyLoss: LogSoftmax over the class axis (a max, a sum of
// exps, then x - max - log(sum)), which is also log_prob, then the same loss;
// "none" keeps the per-element losses.
func.func @sce_none(%s: tensor<2x4x3xf32>, %l: tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x4x3xf32>) {
  %loss, %log_prob = graph.softmax_cross_entropy_loss %s, %l {reduction = "none"} : (tensor<2x4x3xf32>, tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x4x3xf32>)
  func.return %loss, %log_prob : tensor<2x3xf32>, tensor<2x4x3xf32>
}

// CHECK-LABEL: func.func @sce_none
// CHECK:      arith.maximumf
// CHECK:      math.exp
// CHECK:      %[[LOGP:.*]] = linalg.generic
// CHECK:        math.log
// CHECK:      ember_linalg.gather %[[LOGP]][%l] {index_maps = [affine_map<(d0, d1) -> (d0, d1)>], data_map = affine_map<(d0, d1)[s0] -> (d0, s0, d1)>} : tensor<2x4x3xf32>, tensor<2x3xi32> -> tensor<2x3xf32>
// CHECK:      %[[LOSS:.*]] = linalg.generic
// CHECK:        arith.negf
// CHECK-NOT:  iterator_types = ["reduction"
// CHECK:      func.return %[[LOSS]], %[[LOGP]] : tensor<2x3xf32>, tensor<2x4x3xf32>
