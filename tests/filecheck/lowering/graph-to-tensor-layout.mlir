// RUN: ember-opt %s --split-input-file -p convert-graph-to-tensor | filecheck %s

// convert-graph-to-tensor on Ember's layout ops: a layout transform is
// reshape + transpose + reshape; a laid-out convolution is pad + fill + one
// generic indexing the layouts directly, whose last dim is the output's
// innermost (contiguous) dim; a laid-out pool is one reduction generic.

func.func @to_blocked(%x: tensor<1x16x4x4xf32>) -> tensor<1x2x4x4x8xf32> {
  %y = graph.layout_transform %x {source = "NCHW", target = "NCHW8c"} : (tensor<1x16x4x4xf32>) -> tensor<1x2x4x4x8xf32>
  func.return %y : tensor<1x2x4x4x8xf32>
}

// CHECK-LABEL: func.func @to_blocked(
// CHECK-NEXT:    %[[SH:.*]] = arith.constant dense<[1, 2, 8, 4, 4]> : tensor<5xi64>
// CHECK-NEXT:    %[[S:.*]] = tensor.reshape %x(%[[SH]]) : (tensor<1x16x4x4xf32>, tensor<5xi64>) -> tensor<1x2x8x4x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x2x4x4x8xf32>
// CHECK-NEXT:    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<1x2x8x4x4xf32>) outs(%[[E]] : tensor<1x2x4x4x8xf32>) {
// CHECK:         func.return %y

// -----


func.func @conv_nchwc(%x: tensor<1x2x6x6x8xf32>, %w: tensor<4x2x3x3x8x8xf32>, %b: tensor<4x8xf32>) -> tensor<1x4x3x3x8xf32> {
  %y = graph.conv_nchwc %x, %w, B %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6x8xf32>, tensor<4x2x3x3x8x8xf32>, tensor<4x8xf32>) -> tensor<1x4x3x3x8xf32>
  func.return %y : tensor<1x4x3x3x8xf32>
}

// out[n, fo, oh, ow, fi] += x[n, co, 2oh + kh, 2ow + kw, ci] * w[fo, co, kh, kw, ci, fi]:
// dims (n, fo, co, kh, kw, ci, oh, ow, fi).
// CHECK-LABEL: func.func @conv_nchwc(
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
// CHECK:         } : tensor<1x2x6x6x8xf32> to tensor<1x2x8x8x8xf32>
// CHECK-NEXT:    %[[ZV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZE:.*]] = tensor.empty() : tensor<1x4x3x3x8xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%[[ZV]] : f32) outs(%[[ZE]] : tensor<1x4x3x3x8xf32>) -> tensor<1x4x3x3x8xf32>
// CHECK-NEXT:    %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d2, ((d6 * 2) + d3), ((d7 * 2) + d4), d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d2, d3, d4, d5, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d6, d7, d8)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "parallel", "parallel"]} ins(%[[P]], %w : tensor<1x2x8x8x8xf32>, tensor<4x2x3x3x8x8xf32>) outs(%[[Z]] : tensor<1x4x3x3x8xf32>)
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], {{.*}} ins(%[[C]], %b : tensor<1x4x3x3x8xf32>, tensor<4x8xf32>)

// -----


func.func @conv_nhwc(%x: tensor<1x6x6x16xf32>, %w: tensor<3x3x4x32xf32>) -> tensor<1x6x6x32xf32> {
  %y = graph.conv_nhwc %x, %w {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x16xf32>, tensor<3x3x4x32xf32>) -> tensor<1x6x6x32xf32>
  func.return %y : tensor<1x6x6x32xf32>
}

// Groups of 4 input channels: the group is a dim of its own (d3), on views
// with the channels split (graph-to-tensor-grouped-conv.mlir has more).
// CHECK-LABEL: func.func @conv_nhwc(
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
// CHECK:         } : tensor<1x6x6x16xf32> to tensor<1x8x8x16xf32>
// CHECK:         %[[X:.*]] = tensor.reshape %[[P]]({{.*}}) : (tensor<1x8x8x16xf32>, tensor<5xi64>) -> tensor<1x8x8x4x4xf32>
// CHECK:         %[[W:.*]] = tensor.reshape %w({{.*}}) : (tensor<3x3x4x32xf32>, tensor<5xi64>) -> tensor<3x3x4x4x8xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x6x4x8xf32>) -> tensor<1x6x6x4x8xf32>
// CHECK-NEXT:    %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d1 + d4), (d2 + d5), d3, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d4, d5, d6, d3, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[X]], %[[W]] : tensor<1x8x8x4x4xf32>, tensor<3x3x4x4x8xf32>) outs(%[[Z]] : tensor<1x6x6x4x8xf32>)
// CHECK:         %y = tensor.reshape %[[C]]({{.*}}) : (tensor<1x6x6x4x8xf32>, tensor<4xi64>) -> tensor<1x6x6x32xf32>

// -----


func.func @max_pool_nchwc(%x: tensor<1x2x6x6x8xf32>) -> tensor<1x2x3x3x8xf32> {
  %y = graph.max_pool_nchwc %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6x8xf32>) -> tensor<1x2x3x3x8xf32>
  func.return %y : tensor<1x2x3x3x8xf32>
}

// CHECK-LABEL: func.func @max_pool_nchwc(
// CHECK-NEXT:    %[[IV:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:    %[[IE:.*]] = tensor.empty() : tensor<1x2x3x3x8xf32>
// CHECK-NEXT:    %[[I:.*]] = linalg.fill ins(%[[IV]] : f32) outs(%[[IE]] : tensor<1x2x3x3x8xf32>) -> tensor<1x2x3x3x8xf32>
// CHECK-NEXT:    %[[K:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT:    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, ((d2 * 2) + d5), ((d3 * 2) + d6), d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %[[K]] : tensor<1x2x6x6x8xf32>, tensor<2x2xf32>) outs(%[[I]] : tensor<1x2x3x3x8xf32>)
// CHECK:           arith.maxnumf
