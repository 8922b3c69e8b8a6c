// RUN: ember-opt %s | ember-opt | filecheck %s

// ReduceLogSum, SpaceToDepth (mode), LpNormalization, EyeLike (dtype, k),
// ReverseSequence (time axis 0, batch axis 1 by default), LpPool,
// CenterCropPad (shape a constant operand, axes), GroupNormalization,
// MeanVarianceNormalization, Det and MaxUnpool.

func.func @more(%x: tensor<2x3x4x6xf32>, %m: tensor<4x5xi32>, %s: tensor<4x3x2xf32>, %lens: tensor<3xi64>, %gs: tensor<3xf32>, %mats: tensor<2x3x3xf32>, %pooled: tensor<1x2x2x2xf32>, %where: tensor<1x2x2x2xi64>) -> (tensor<2x3x1x1xf32>, tensor<2x12x2x3xf32>, tensor<2x3x4x6xf32>, tensor<4x5xf64>, tensor<4x3x2xf32>, tensor<2x3x2x3xf32>, tensor<4x3x4x9xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2xf32>, tensor<1x2x4x4xf32>) {
  %axes = graph.constant dense<[2, 3]> : tensor<2xi64>
  %log_sum = graph.reduce_log_sum %x, axes %axes : (tensor<2x3x4x6xf32>, tensor<2xi64>) -> tensor<2x3x1x1xf32>
  %blocks = graph.space_to_depth %x {blocksize = 2 : i64, mode = "CRD"} : (tensor<2x3x4x6xf32>) -> tensor<2x12x2x3xf32>
  %l1 = graph.lp_normalization %x {axis = 1 : i64, p = 1 : i64} : (tensor<2x3x4x6xf32>) -> tensor<2x3x4x6xf32>
  %eye = graph.eye_like %m {dtype = f64, k = 1 : i64} : (tensor<4x5xi32>) -> tensor<4x5xf64>
  %rev = graph.reverse_sequence %s, %lens : (tensor<4x3x2xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
  %lp = graph.lp_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, p = 3 : i64} : (tensor<2x3x4x6xf32>) -> tensor<2x3x2x3xf32>
  %sizes = graph.constant dense<[4, 9]> : tensor<2xi64>
  %crop = graph.center_crop_pad %x, %sizes {axes = array<i64: 0, -1>} : (tensor<2x3x4x6xf32>, tensor<2xi64>) -> tensor<4x3x4x9xf32>
  %gn = graph.group_normalization %x, %gs, %gs {num_groups = 3 : i64} : (tensor<2x3x4x6xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x6xf32>
  %mvn = graph.mean_variance_normalization %x {axes = array<i64: 0, 1>} : (tensor<2x3x4x6xf32>) -> tensor<2x3x4x6xf32>
  %det = graph.det %mats : (tensor<2x3x3xf32>) -> tensor<2xf32>
  %unpooled = graph.max_unpool %pooled, %where {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
  func.return %log_sum, %blocks, %l1, %eye, %rev, %lp, %crop, %gn, %mvn, %det, %unpooled : tensor<2x3x1x1xf32>, tensor<2x12x2x3xf32>, tensor<2x3x4x6xf32>, tensor<4x5xf64>, tensor<4x3x2xf32>, tensor<2x3x2x3xf32>, tensor<4x3x4x9xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2xf32>, tensor<1x2x4x4xf32>
}

// CHECK:      %axes = graph.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT: %log_sum = graph.reduce_log_sum %x, axes %axes : (tensor<2x3x4x6xf32>, tensor<2xi64>) -> tensor<2x3x1x1xf32>
// CHECK-NEXT: %blocks = graph.space_to_depth %x {blocksize = 2 : i64, mode = "CRD"} : (tensor<2x3x4x6xf32>) -> tensor<2x12x2x3xf32>
// CHECK-NEXT: %l1 = graph.lp_normalization %x {axis = 1 : i64, p = 1 : i64} : (tensor<2x3x4x6xf32>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT: %eye = graph.eye_like %m {dtype = f64, k = 1 : i64} : (tensor<4x5xi32>) -> tensor<4x5xf64>
// CHECK-NEXT: %rev = graph.reverse_sequence %s, %lens : (tensor<4x3x2xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
// CHECK-NEXT: %lp = graph.lp_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, p = 3 : i64} : (tensor<2x3x4x6xf32>) -> tensor<2x3x2x3xf32>
// CHECK-NEXT: %sizes = graph.constant dense<[4, 9]> : tensor<2xi64>
// CHECK-NEXT: %crop = graph.center_crop_pad %x, %sizes {axes = array<i64: 0, -1>} : (tensor<2x3x4x6xf32>, tensor<2xi64>) -> tensor<4x3x4x9xf32>
// CHECK-NEXT: %gn = graph.group_normalization %x, %gs, %gs {num_groups = 3 : i64} : (tensor<2x3x4x6xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT: %mvn = graph.mean_variance_normalization %x {axes = array<i64: 0, 1>} : (tensor<2x3x4x6xf32>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT: %det = graph.det %mats : (tensor<2x3x3xf32>) -> tensor<2xf32>
// CHECK-NEXT: %unpooled = graph.max_unpool %pooled, %where {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
