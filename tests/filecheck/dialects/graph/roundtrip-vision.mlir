// RUN: ember-opt %s | ember-opt | filecheck %s

// The ops of ops_vision.py: GridSample (2-D cubic with border padding, 3-D
// nearest with reflection and align_corners), AffineGrid, Col2Im with
// strides, pads and dilations, RoiAlign and DeformConv (bias, mask, groups).

func.func @vision(%x: tensor<1x3x4x5xf32>, %grid: tensor<1x6x7x2xf32>, %v: tensor<1x3x2x4x5xf32>, %vgrid: tensor<1x2x3x4x3xf32>, %theta: tensor<2x2x3xf32>, %cols: tensor<2x12x12xf32>) -> (tensor<1x3x6x7xf32>, tensor<1x3x2x3x4xf32>, tensor<2x5x6x2xf32>, tensor<2x3x7x8xf32>) {
  %y = graph.grid_sample %x, %grid {mode = "cubic", padding_mode = "border"} : (tensor<1x3x4x5xf32>, tensor<1x6x7x2xf32>) -> tensor<1x3x6x7xf32>
  %vy = graph.grid_sample %v, %vgrid {align_corners = 1 : i64, mode = "nearest", padding_mode = "reflection"} : (tensor<1x3x2x4x5xf32>, tensor<1x2x3x4x3xf32>) -> tensor<1x3x2x3x4xf32>
  %size = graph.constant dense<[2, 3, 5, 6]> : tensor<4xi64>
  %g = graph.affine_grid %theta, %size {align_corners = 1 : i64} : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x5x6x2xf32>
  %image = graph.constant dense<[7, 8]> : tensor<2xi64>
  %block = graph.constant dense<[2, 2]> : tensor<2xi64>
  %im = graph.col2im %cols, %image, %block {dilations = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 3>} : (tensor<2x12x12xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3x7x8xf32>
  func.return %y, %vy, %g, %im : tensor<1x3x6x7xf32>, tensor<1x3x2x3x4xf32>, tensor<2x5x6x2xf32>, tensor<2x3x7x8xf32>
}

func.func @roi_align(%x: tensor<2x3x8x8xf32>, %rois: tensor<5x4xf32>, %batch: tensor<5xi64>) -> tensor<5x3x4x3xf32> {
  %y = graph.roi_align %x, %rois, %batch {coordinate_transformation_mode = "output_half_pixel", mode = "max", output_height = 4 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, spatial_scale = 5.000000e-01 : f32} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x4x3xf32>
  func.return %y : tensor<5x3x4x3xf32>
}

func.func @deform_conv(%x: tensor<1x2x5x5xf32>, %w: tensor<4x1x2x2xf32>, %offset: tensor<1x8x4x4xf32>, %b: tensor<4xf32>, %mask: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = graph.deform_conv %x, %w, %offset, B %b, mask %mask {group = 2 : i64} : (tensor<1x2x5x5xf32>, tensor<4x1x2x2xf32>, tensor<1x8x4x4xf32>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @vision
// CHECK-NEXT:    %y = graph.grid_sample %x, %grid {mode = "cubic", padding_mode = "border"} : (tensor<1x3x4x5xf32>, tensor<1x6x7x2xf32>) -> tensor<1x3x6x7xf32>
// CHECK-NEXT:    %vy = graph.grid_sample %v, %vgrid {align_corners = 1 : i64, mode = "nearest", padding_mode = "reflection"} : (tensor<1x3x2x4x5xf32>, tensor<1x2x3x4x3xf32>) -> tensor<1x3x2x3x4xf32>
// CHECK:         %g = graph.affine_grid %theta, %size {align_corners = 1 : i64} : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x5x6x2xf32>
// CHECK:         %im = graph.col2im %cols, %image, %block {dilations = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 3>} : (tensor<2x12x12xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3x7x8xf32>

// CHECK-LABEL: func.func @roi_align
// CHECK-NEXT:    %y = graph.roi_align %x, %rois, %batch {coordinate_transformation_mode = "output_half_pixel", mode = "max", output_height = 4 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, spatial_scale = 5.000000e-01 : f32} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x4x3xf32>

// CHECK-LABEL: func.func @deform_conv
// CHECK-NEXT:    %y = graph.deform_conv %x, %w, %offset, B %b, mask %mask {group = 2 : i64} : (tensor<1x2x5x5xf32>, tensor<4x1x2x2xf32>, tensor<1x8x4x4xf32>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
