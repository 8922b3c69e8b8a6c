// RUN: ember-opt %s | ember-opt | filecheck %s

// Every op of ops_loss.py: SoftmaxCrossEntropyLoss with and without its
// log_prob result, weights and ignore_index; NegativeLogLikelihoodLoss with
// each reduction (a scalar for "sum" and "mean", the targets' shape for "none").

func.func @losses(%scores: tensor<3x5x2xf32>, %labels: tensor<3x2xi64>, %w: tensor<5xf32>) -> (tensor<f32>, tensor<3x5x2xf32>, tensor<3x2xf32>, tensor<f32>) {
  %loss, %log_prob = graph.softmax_cross_entropy_loss %scores, %labels, weights %w {ignore_index = -1 : i64} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<f32>, tensor<3x5x2xf32>)
  %none = graph.negative_log_likelihood_loss %log_prob, %labels {reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %sum = graph.softmax_cross_entropy_loss %scores, %labels {reduction = "sum"} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<f32>
  func.return %loss, %log_prob, %none, %sum : tensor<f32>, tensor<3x5x2xf32>, tensor<3x2xf32>, tensor<f32>
}

// CHECK:      %loss, %log_prob = graph.softmax_cross_entropy_loss %scores, %labels, weights %w {ignore_index = -1 : i64} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<f32>, tensor<3x5x2xf32>)
// CHECK-NEXT: %none = graph.negative_log_likelihood_loss %log_prob, %labels {reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
// CHECK-NEXT: %sum = graph.softmax_cross_entropy_loss %scores, %labels {reduction = "sum"} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<f32>
