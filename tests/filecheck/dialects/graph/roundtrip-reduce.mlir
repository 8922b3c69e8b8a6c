// RUN: ember-opt %s | ember-opt | filecheck %s

// Every op of ops_reduce.py: the ReduceX family with axes present/absent,
// keepdims 0/1, noop_with_empty_axes, run-time axes; ArgMax/ArgMin.

func.func @reduce(%x: tensor<1x64x56x56xf32>, %seq: tensor<?x128x768xf32>, %i: tensor<4x10xi64>, %axes_rt: tensor<2xi64>) -> tensor<1x64x1x1xf32> {
  %hw = graph.constant dense<[2, 3]> : tensor<2xi64>
  %last = graph.constant dense<-1> : tensor<1xi64>
  %none = graph.constant dense<> : tensor<0xi64>
  // ReduceMean over H and W, keeping dims (the global-pool pattern) and not.
  %gap = graph.reduce_mean %x, axes %hw : (tensor<1x64x56x56xf32>, tensor<2xi64>) -> tensor<1x64x1x1xf32>
  %gap2d = graph.reduce_mean %x, axes %hw {keepdims = 0 : i64} : (tensor<1x64x56x56xf32>, tensor<2xi64>) -> tensor<1x64xf32>
  // Without axes every dim is reduced.
  %total = graph.reduce_sum %seq : (tensor<?x128x768xf32>) -> tensor<1x1x1xf32>
  %total_scalar = graph.reduce_sum %i {keepdims = 0 : i64} : (tensor<4x10xi64>) -> tensor<i64>
  // Empty axes with noop_with_empty_axes=1 is the identity.
  %noop = graph.reduce_sum %seq, axes %none {noop_with_empty_axes = 1 : i64} : (tensor<?x128x768xf32>, tensor<0xi64>) -> tensor<?x128x768xf32>
  // Axes only known at run time: keepdims=1 keeps the rank.
  %rt = graph.reduce_max %seq, axes %axes_rt : (tensor<?x128x768xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
  %max = graph.reduce_max %seq, axes %last : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128x1xf32>
  %min = graph.reduce_min %i, axes %last {keepdims = 0 : i64} : (tensor<4x10xi64>, tensor<1xi64>) -> tensor<4xi64>
  %prod = graph.reduce_prod %i, axes %last : (tensor<4x10xi64>, tensor<1xi64>) -> tensor<4x1xi64>
  %l1 = graph.reduce_l1 %seq, axes %last {keepdims = 0 : i64} : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128xf32>
  %l2 = graph.reduce_l2 %x, axes %hw : (tensor<1x64x56x56xf32>, tensor<2xi64>) -> tensor<1x64x1x1xf32>
  %sum_square = graph.reduce_sum_square %seq, axes %last : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128x1xf32>
  %lse = graph.reduce_log_sum_exp %seq, axes %last {keepdims = 0 : i64} : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128xf32>
  // ArgMax/ArgMin give i64 indices; axis defaults to 0, keepdims to 1.
  %argmax = graph.arg_max %seq {axis = -1 : i64, keepdims = 0 : i64} : (tensor<?x128x768xf32>) -> tensor<?x128xi64>
  %argmax_default = graph.arg_max %i : (tensor<4x10xi64>) -> tensor<1x10xi64>
  %argmin = graph.arg_min %x {axis = 1 : i64, select_last_index = 1 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x1x56x56xi64>
  func.return %gap : tensor<1x64x1x1xf32>
}

// The printed form: defaults are omitted, floats are printed in full, and
// printing the parsed output again gives the same text (the RUN line
// prints, parses and prints again).
// CHECK-LABEL: func.func @reduce(%x: tensor<1x64x56x56xf32>, %seq: tensor<?x128x768xf32>, %i: tensor<4x10xi64>, %axes_rt: tensor<2xi64>) -> tensor<1x64x1x1xf32> {
// CHECK-NEXT:    %hw = graph.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT:    %last = graph.constant dense<-1> : tensor<1xi64>
// CHECK-NEXT:    %none = graph.constant dense<> : tensor<0xi64>
// CHECK-NEXT:    %gap = graph.reduce_mean %x, axes %hw : (tensor<1x64x56x56xf32>, tensor<2xi64>) -> tensor<1x64x1x1xf32>
// CHECK-NEXT:    %gap2d = graph.reduce_mean %x, axes %hw {keepdims = 0 : i64} : (tensor<1x64x56x56xf32>, tensor<2xi64>) -> tensor<1x64xf32>
// CHECK-NEXT:    %total = graph.reduce_sum %seq : (tensor<?x128x768xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT:    %total_scalar = graph.reduce_sum %i {keepdims = 0 : i64} : (tensor<4x10xi64>) -> tensor<i64>
// CHECK-NEXT:    %noop = graph.reduce_sum %seq, axes %none {noop_with_empty_axes = 1 : i64} : (tensor<?x128x768xf32>, tensor<0xi64>) -> tensor<?x128x768xf32>
// CHECK-NEXT:    %rt = graph.reduce_max %seq, axes %axes_rt : (tensor<?x128x768xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT:    %max = graph.reduce_max %seq, axes %last : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128x1xf32>
// CHECK-NEXT:    %min = graph.reduce_min %i, axes %last {keepdims = 0 : i64} : (tensor<4x10xi64>, tensor<1xi64>) -> tensor<4xi64>
// CHECK-NEXT:    %prod = graph.reduce_prod %i, axes %last : (tensor<4x10xi64>, tensor<1xi64>) -> tensor<4x1xi64>
// CHECK-NEXT:    %l1 = graph.reduce_l1 %seq, axes %last {keepdims = 0 : i64} : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128xf32>
// CHECK-NEXT:    %l2 = graph.reduce_l2 %x, axes %hw : (tensor<1x64x56x56xf32>, tensor<2xi64>) -> tensor<1x64x1x1xf32>
// CHECK-NEXT:    %sum_square = graph.reduce_sum_square %seq, axes %last : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128x1xf32>
// CHECK-NEXT:    %lse = graph.reduce_log_sum_exp %seq, axes %last {keepdims = 0 : i64} : (tensor<?x128x768xf32>, tensor<1xi64>) -> tensor<?x128xf32>
// CHECK-NEXT:    %argmax = graph.arg_max %seq {axis = -1 : i64, keepdims = 0 : i64} : (tensor<?x128x768xf32>) -> tensor<?x128xi64>
// CHECK-NEXT:    %argmax_default = graph.arg_max %i : (tensor<4x10xi64>) -> tensor<1x10xi64>
// CHECK-NEXT:    %argmin = graph.arg_min %x {axis = 1 : i64, select_last_index = 1 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x1x56x56xi64>
// CHECK-NEXT:    func.return %gap : tensor<1x64x1x1xf32>
// CHECK-NEXT:  }
