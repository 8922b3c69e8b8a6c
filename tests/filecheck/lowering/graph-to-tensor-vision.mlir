// RUN: ember-opt %s --split-input-file --verify-diagnostics -p convert-graph-to-tensor | filecheck %s
// RUN: ember-opt %s --split-input-file --verify-diagnostics -p convert-graph-to-tensor,convert-tensor-to-loop,loop-generate | filecheck %s --check-prefix=LOOPS

// GridSample (2-D, linear, zeros padding): one generic computes every tap's
// index and weight per grid component ([2, N, H', W', taps] each; component
// 0 addresses the last axis, so the constant sizes are [W, H]); a gather
// reads X at each pair of taps, the index of axis a from component 1 - a;
// a reduction over the two tap dims weights them by the product of the
// taps' weights. Zeros padding zeroes a tap's weight (the select) and
// clamps its index.
func.func @grid_sample(%x: tensor<1x2x4x5xf32>, %grid: tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32> {
  %y = graph.grid_sample %x, %grid : (tensor<1x2x4x5xf32>, tensor<1x3x6x2xf32>) -> tensor<1x2x3x6xf32>
  func.return %y : tensor<1x2x3x6xf32>
}

// CHECK-LABEL: func.func @grid_sample
// CHECK-NEXT:    %[[SIZES:.*]] = graph.constant dense<[5.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK:         %[[IDX:.*]], %[[W:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3, d4) -> (d0)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%grid, %[[SIZES]] : tensor<1x3x6x2xf32>, tensor<2xf32>) outs(%{{.*}}, %{{.*}} : tensor<2x1x3x6x2xi64>, tensor<2x1x3x6x2xf32>)
// CHECK:           linalg.index 4
// CHECK:           math.floor
// CHECK:           arith.select
// CHECK:           arith.fptosi
// CHECK:         %[[PICKED:.*]] = ember_linalg.gather %x[%[[IDX]]] {index_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (1, d0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (0, d0, d2, d3, d5)>], data_map = affine_map<(d0, d1, d2, d3, d4, d5)[s0, s1] -> (d0, d1, s0, s1)>} : tensor<1x2x4x5xf32>, tensor<2x1x3x6x2xi64> -> tensor<1x2x3x6x2x2xf32>
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (1, d0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (0, d0, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[PICKED]], %[[W]], %[[W]] : {{.*}})

// The gather reads X at the computed indices, clamped to each axis.
// LOOPS-LABEL: func.func @grid_sample
// LOOPS:         memref.load %grid
// LOOPS:         math.floor
// LOOPS:         memref.load %x

// -----

// Col2Im: the input as [N, C, block, L], gathered by the constant table of the
// block covering each image position at each block offset, summed over the
// offsets weighted by whether one covers it, reshaped to the image.
func.func @col2im(%x: tensor<1x4x9xf32>) -> tensor<1x1x4x4xf32> {
  %image = graph.constant dense<[4, 4]> : tensor<2xi64>
  %block = graph.constant dense<[2, 2]> : tensor<2xi64>
  %y = graph.col2im %x, %image, %block : (tensor<1x4x9xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x4x4xf32>
  func.return %y : tensor<1x1x4x4xf32>
}

// CHECK-LABEL: func.func @col2im
// CHECK:         %[[COLS:.*]] = tensor.reshape %x({{.*}}) : (tensor<1x4x9xf32>, tensor<4xi64>) -> tensor<1x1x4x9xf32>
// CHECK-NEXT:    %[[TABLE:.*]] = graph.constant {{.*}} : tensor<16x4xi64>
// CHECK-NEXT:    %[[PICKED:.*]] = ember_linalg.gather %[[COLS]][%[[TABLE]]] {index_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>], data_map = affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, d3, s0)>} : tensor<1x1x4x9xf32>, tensor<16x4xi64> -> tensor<1x1x16x4xf32>
// CHECK-NEXT:    %[[COVERED:.*]] = graph.constant {{.*}} : tensor<16x4xf32>
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PICKED]], %[[COVERED]] : tensor<1x1x16x4xf32>, tensor<16x4xf32>)
// CHECK:         %y = tensor.reshape %[[SUM]]({{.*}}) : (tensor<1x1x16xf32>, tensor<4xi64>) -> tensor<1x1x4x4xf32>

// -----

// AffineGrid: the constant [H, W, 3] base grid (x, y, 1) contracted with theta.
func.func @affine_grid(%theta: tensor<2x2x3xf32>) -> tensor<2x3x4x2xf32> {
  %size = graph.constant dense<[2, 1, 3, 4]> : tensor<4xi64>
  %g = graph.affine_grid %theta, %size : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x3x4x2xf32>
  func.return %g : tensor<2x3x4x2xf32>
}

// CHECK-LABEL: func.func @affine_grid
// CHECK-NEXT:    %[[BASE:.*]] = graph.constant {{.*}} : tensor<3x4x3xf32>
// CHECK:         %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[BASE]], %theta : tensor<3x4x3xf32>, tensor<2x2x3xf32>)

// -----

// Col2Im's shapes must be constants.
func.func @runtime_image(%x: tensor<1x4x9xf32>, %image: tensor<2xi64>) -> tensor<1x1x4x4xf32> {
  %block = graph.constant dense<[2, 2]> : tensor<2xi64>
  %y = graph.col2im %x, %image, %block : (tensor<1x4x9xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x4x4xf32>
  func.return %y : tensor<1x1x4x4xf32>
}

// CHECK: {{^}}convert-graph-to-tensor: cannot lower 1 op: graph.col2im (image_shape and block_shape must be constants){{$}}

// -----

// RoiAlign: the taps of every sample along y and x (rois columns 1 and 3, 0
// and 2, read through `1 - d0` and `3 - d0`), joined by the batch indices into
// one [3, R, bins, samples, 2] index tensor; a gather, and an average over the
// samples and taps.
func.func @roi_align(%x: tensor<1x2x6x6xf32>, %rois: tensor<3x4xf32>, %batch: tensor<3xi64>) -> tensor<3x2x2x2xf32> {
  %y = graph.roi_align %x, %rois, %batch {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64} : (tensor<1x2x6x6xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x2x2xf32>
  func.return %y : tensor<3x2x2x2xf32>
}

// CHECK-LABEL: func.func @roi_align
// CHECK:         %[[IDX:.*]], %[[W:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, ((d0 * -1) + 1))>, affine_map<(d0, d1, d2, d3, d4) -> (d1, ((d0 * -1) + 3))>, {{.*}}ins(%rois, %rois, {{.*}}) outs({{.*}} : tensor<2x3x2x2x2xi64>, tensor<2x3x2x2x2xf32>)
// CHECK:         %[[JOINED:.*]] = tensor.concat dim(0) %{{.*}}, %[[IDX]] : (tensor<1x3x2x2x2xi64>, tensor<2x3x2x2x2xi64>) -> tensor<3x3x2x2x2xi64>
// CHECK-NEXT:    %[[PICKED:.*]] = ember_linalg.gather %x[%[[JOINED]]] {index_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d0, 0, 0, 0)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (1, d0, d2, d4, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (2, d0, d3, d5, d7)>], data_map = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7)[s0, s1, s2] -> (s0, d1, s1, s2)>} : tensor<1x2x6x6xf32>, tensor<3x3x2x2x2xi64> -> tensor<3x2x2x2x2x2x2x2xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[PICKED]]
// CHECK:         arith.divf

// -----

// Samples per bin that depend on the rois' values.
func.func @adaptive(%x: tensor<1x2x6x6xf32>, %rois: tensor<3x4xf32>, %batch: tensor<3xi64>) -> tensor<3x2x1x1xf32> {
  %y = graph.roi_align %x, %rois, %batch : (tensor<1x2x6x6xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x1x1xf32>
  func.return %y : tensor<3x2x1x1xf32>
}

// CHECK: {{^}}convert-graph-to-tensor: cannot lower 1 op: graph.roi_align (sampling_ratio 0 (samples per bin that depend on the rois' values)){{$}}

// -----

// DeformConv: the taps of every kernel tap's moved position along y and x
// (the offset of group g, tap (i, j) and component c at channel
// g * kh * kw * 2 + i * kw * 2 + j * 2 + c); a gather samples X seen as
// [N, offset groups, channels, H, W]; a reduction interpolates times the
// mask; a grouped contraction with W; the bias.
func.func @deform_conv(%x: tensor<1x2x5x5xf32>, %w: tensor<4x1x2x2xf32>, %offset: tensor<1x8x4x4xf32>, %b: tensor<4xf32>, %mask: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = graph.deform_conv %x, %w, %offset, B %b, mask %mask {group = 2 : i64} : (tensor<1x2x5x5xf32>, tensor<4x1x2x2xf32>, tensor<1x8x4x4xf32>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @deform_conv
// CHECK:         %[[IDX:.*]], %[[W:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, ((((d2 * 8) + (d3 * 4)) + (d4 * 2)) + d0), d5, d6)>
// CHECK:         %[[IMAGES:.*]] = tensor.reshape %x({{.*}}) : (tensor<1x2x5x5xf32>, tensor<5xi64>) -> tensor<1x1x2x5x5xf32>
// CHECK-NEXT:    %[[PICKED:.*]] = ember_linalg.gather %[[IMAGES]][%[[IDX]]] {index_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (0, d0, d1, d3, d4, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (1, d0, d1, d3, d4, d5, d6, d8)>], data_map = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8)[s0, s1] -> (d0, d1, d2, s0, s1)>} : tensor<1x1x2x5x5xf32>, tensor<2x1x1x2x2x4x4x2xi64> -> tensor<1x1x2x2x2x4x4x2x2xf32>
// CHECK:         %[[MASK:.*]] = tensor.reshape %mask({{.*}}) : (tensor<1x4x4x4xf32>, tensor<6xi64>) -> tensor<1x1x2x2x4x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[PICKED]], %[[W]], %[[W]], %[[MASK]] :
// CHECK:         %[[KERNEL:.*]] = tensor.reshape %w({{.*}}) : (tensor<4x1x2x2xf32>, tensor<5xi64>) -> tensor<2x2x1x2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d6, d7, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK:         %y = linalg.generic {{.*}} ins(%{{.*}}, %b : tensor<1x4x4x4xf32>, tensor<4xf32>)
