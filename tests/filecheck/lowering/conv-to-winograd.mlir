// RUN: ember-opt %s --split-input-file -p convert-conv-to-winograd | filecheck %s
// RUN: ember-opt %s --split-input-file -p convert-conv-to-winograd,convert-graph-to-tensor | filecheck %s --check-prefix=TENSOR

// convert-conv-to-winograd: a 3x3 stride-1 f32 NHWC convolution with 16 or
// more channels each way and 9 or more 4x4 output tiles becomes Winograd F(4x4, 3x3) on tensors: pad to
// whole 4x4 output tiles, the input transform as two generics reducing over
// 6 taps with B^T, a batched matmul over the 36 tile positions with the
// weights transformed at compile time ([36, C, F]), the output transform as
// two generics reducing with A^T, a slice to the output's size, the bias.
// Inside a graph.fused region the ReLU stays in the group's kernel.

func.func @fused(%x: tensor<3x6x7x16xf32>) -> tensor<3x6x7x16xf32> {
  %y = graph.fused "conv" (%x) : (tensor<3x6x7x16xf32>) -> tensor<3x6x7x16xf32> {
  ^bb0(%a: tensor<3x6x7x16xf32>):
    %w = graph.constant dense<5.000000e-01> : tensor<3x3x16x16xf32>
    %b = graph.constant dense<2.500000e-01> : tensor<16xf32>
    %c = graph.conv_nhwc %a, %w, B %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<3x6x7x16xf32>, tensor<3x3x16x16xf32>, tensor<16xf32>) -> tensor<3x6x7x16xf32>
    %r = graph.relu %c : (tensor<3x6x7x16xf32>) -> tensor<3x6x7x16xf32>
    graph.yield %r : tensor<3x6x7x16xf32>
  }
  func.return %y : tensor<3x6x7x16xf32>
}

// 6x7 outputs need 2x2 tiles (12 over the batch of 3): the input is padded
// to 4*2+2 = 10 each way (pads 1 low, 1 + 2 and 1 + 1 high).
// CHECK-LABEL: func.func @fused(
// CHECK:         ^bb0(%a: tensor<3x6x7x16xf32>):
// CHECK-NOT:       graph.conv_nhwc
// CHECK:           %[[P:.*]] = tensor.pad %a low[0, 1, 1, 0] high[0, 3, 2, 0] {
// CHECK:           } : tensor<3x6x7x16xf32> to tensor<3x10x10x16xf32>
// CHECK-NEXT:      %[[BT:winograd_bt]] = graph.constant {{.*}} : tensor<6x6xf32>
// CHECK-NEXT:      %[[AT:winograd_at]] = graph.constant {{.*}} : tensor<4x6xf32>
// rows[n, th, tw, i, b, c] += x[n, 4 th + i, 4 tw + j, c] * BT[b, j]
// CHECK:           %[[ROWS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, ((d1 * 4) + d3), ((d2 * 4) + d5), d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d6)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[P]], %[[BT]] : tensor<3x10x10x16xf32>, tensor<6x6xf32>) outs(%{{.*}} : tensor<3x2x2x6x6x16xf32>)
// tiles[a, b, n, th, tw, c] += rows[n, th, tw, i, b, c] * BT[a, i], the
// tiles outermost as in rows (loop-fuse merges the two nests tile by tile)
// CHECK:           %[[TILES:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d5, d4, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d0, d1, d2, d6)>], {{.*}} ins(%[[ROWS]], %[[BT]] : {{.*}}) outs(%{{.*}} : tensor<6x6x3x2x2x16xf32>)
// CHECK:           %[[V:.*]] = tensor.reshape %[[TILES]]({{.*}}) : (tensor<6x6x3x2x2x16xf32>, tensor<3xi64>) -> tensor<36x12x16xf32>
// CHECK-NEXT:      %[[U:w_winograd]] = graph.constant {{.*}} : tensor<36x16x16xf32>
// products[p, t, f] += V[p, t, c] * U[p, c, f]: a batched matmul
// CHECK:           %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[V]], %[[U]] : tensor<36x12x16xf32>, tensor<36x16x16xf32>) outs(%{{.*}} : tensor<36x12x16xf32>)
// CHECK:             arith.mulf
// CHECK-NEXT:        arith.addf
// CHECK:           %[[M6:.*]] = tensor.reshape %[[M]]({{.*}}) : (tensor<36x12x16xf32>, tensor<6xi64>) -> tensor<6x6x3x2x2x16xf32>
// half[n, th, tw, a, j, f] += M[a, b, n, th, tw, f] * AT[j, b]
// CHECK:           %[[HALF:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d5, d0, d1, d2, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5)>, {{.*}} ins(%[[M6]], %[[AT]] : {{.*}}) outs(%{{.*}} : tensor<3x2x2x6x4x16xf32>)
// out[n, th, i, tw, j, f] += half[n, th, tw, a, j, f] * AT[i, a]
// CHECK:           %[[FULL:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3, d5, d4, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d2, d5)>, {{.*}} ins(%[[HALF]], %[[AT]] : {{.*}}) outs(%{{.*}} : tensor<3x2x4x2x4x16xf32>)
// CHECK:           %[[Y8:.*]] = tensor.reshape %[[FULL]]({{.*}}) : (tensor<3x2x4x2x4x16xf32>, tensor<4xi64>) -> tensor<3x8x8x16xf32>
// CHECK-NEXT:      %[[Y:.*]] = tensor.extract_slice %[[Y8]][0, 0, 0, 0] [3, 6, 7, 16] [1, 1, 1, 1] : tensor<3x8x8x16xf32> to tensor<3x6x7x16xf32>
// CHECK:           %c = linalg.generic {{.*}} ins(%[[Y]], %b : tensor<3x6x7x16xf32>, tensor<16xf32>)
// CHECK:           %r = graph.relu %c
// CHECK-NEXT:      graph.yield %r

// convert-graph-to-tensor then lowers the ReLU and makes the group one
// kernel; the constants move out in front of it.
// TENSOR-LABEL: func.func @fused(
// TENSOR-NOT:     graph.fused
// TENSOR:         %w_winograd = graph.constant
// TENSOR:         loop.kernel "conv"
// TENSOR-NOT:       graph.
// TENSOR:           ins(%{{.*}}, %w_winograd : tensor<36x12x16xf32>, tensor<36x16x16xf32>)
// TENSOR-NOT:       graph.
// TENSOR:           %r = linalg.generic
// TENSOR:           loop.yield %r

// -----

// Whole tiles, no padding, no bias, batch 2: no pad before the transform
// (14 - 2 = 12 outputs: 3 tiles), no slice after it.
func.func @whole_tiles(%x: tensor<2x14x14x32xf32>) -> tensor<2x12x12x16xf32> {
  %w = graph.constant dense<1.000000e+00> : tensor<3x3x32x16xf32>
  %y = graph.conv_nhwc %x, %w : (tensor<2x14x14x32xf32>, tensor<3x3x32x16xf32>) -> tensor<2x12x12x16xf32>
  func.return %y : tensor<2x12x12x16xf32>
}

// CHECK-LABEL: func.func @whole_tiles(
// CHECK-NOT:     %w =
// CHECK-NOT:     tensor.pad
// CHECK-NOT:     graph.conv_nhwc
// CHECK:         ins(%x, %{{.*}} : tensor<2x14x14x32xf32>, tensor<6x6xf32>) outs(%{{.*}} : tensor<2x3x3x6x6x32xf32>)
// CHECK:         %w_winograd = graph.constant {{.*}} : tensor<36x32x16xf32>
// CHECK:         tensor<36x18x16xf32>
// CHECK:         %y = tensor.reshape {{.*}} -> tensor<2x12x12x16xf32>
// CHECK-NOT:     tensor.extract_slice
// CHECK-NEXT:    func.return %y

// -----

// Must not fire: the direct convolution stays for each of these.

func.func @not_winograd(%x: tensor<1x16x16x32xf32>, %wa: tensor<3x3x32x32xf32>, %xi: tensor<1x16x16x32xi32>, %x8: tensor<1x16x16x8xf32>, %xs: tensor<1x5x5x32xf32>, %xd: tensor<1x16x16x32xf64>) -> (tensor<1x8x8x32xf32>, tensor<1x12x12x32xf32>, tensor<1x16x16x32xf32>, tensor<1x12x12x32xf32>, tensor<1x14x14x32xf32>, tensor<1x14x14x32xf32>, tensor<1x14x14x32xi32>, tensor<1x14x14x32xf64>, tensor<1x14x14x32xf32>, tensor<1x14x14x8xf32>, tensor<1x3x3x32xf32>) {
  %w = graph.constant dense<1.000000e+00> : tensor<3x3x32x32xf32>
  %strided = graph.conv_nhwc %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x16x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x8x8x32xf32>
  %dilated = graph.conv_nhwc %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x16x16x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x12x12x32xf32>
  %w1 = graph.constant dense<1.000000e+00> : tensor<1x1x32x32xf32>
  %pointwise = graph.conv_nhwc %x, %w1 : (tensor<1x16x16x32xf32>, tensor<1x1x32x32xf32>) -> tensor<1x16x16x32xf32>
  %w5 = graph.constant dense<1.000000e+00> : tensor<5x5x32x32xf32>
  %five = graph.conv_nhwc %x, %w5 : (tensor<1x16x16x32xf32>, tensor<5x5x32x32xf32>) -> tensor<1x12x12x32xf32>
  %wg = graph.constant dense<1.000000e+00> : tensor<3x3x16x32xf32>
  %grouped = graph.conv_nhwc %x, %wg {group = 2 : i64} : (tensor<1x16x16x32xf32>, tensor<3x3x16x32xf32>) -> tensor<1x14x14x32xf32>
  %argument = graph.conv_nhwc %x, %wa : (tensor<1x16x16x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x14x14x32xf32>
  %wi = graph.constant dense<1> : tensor<3x3x32x32xi32>
  %integer = graph.conv_nhwc %xi, %wi : (tensor<1x16x16x32xi32>, tensor<3x3x32x32xi32>) -> tensor<1x14x14x32xi32>
  %wd = graph.constant dense<1.000000e+00> : tensor<3x3x32x32xf64>
  %double = graph.conv_nhwc %xd, %wd : (tensor<1x16x16x32xf64>, tensor<3x3x32x32xf64>) -> tensor<1x14x14x32xf64>
  %w8 = graph.constant dense<1.000000e+00> : tensor<3x3x8x32xf32>
  %few_in = graph.conv_nhwc %x8, %w8 : (tensor<1x16x16x8xf32>, tensor<3x3x8x32xf32>) -> tensor<1x14x14x32xf32>
  %w8o = graph.constant dense<1.000000e+00> : tensor<3x3x32x8xf32>
  %few_out = graph.conv_nhwc %x, %w8o : (tensor<1x16x16x32xf32>, tensor<3x3x32x8xf32>) -> tensor<1x14x14x8xf32>
  %small = graph.conv_nhwc %xs, %w : (tensor<1x5x5x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x3x3x32xf32>
  func.return %strided, %dilated, %pointwise, %five, %grouped, %argument, %integer, %double, %few_in, %few_out, %small : tensor<1x8x8x32xf32>, tensor<1x12x12x32xf32>, tensor<1x16x16x32xf32>, tensor<1x12x12x32xf32>, tensor<1x14x14x32xf32>, tensor<1x14x14x32xf32>, tensor<1x14x14x32xi32>, tensor<1x14x14x32xf64>, tensor<1x14x14x32xf32>, tensor<1x14x14x8xf32>, tensor<1x3x3x32xf32>
}

// CHECK-LABEL: func.func @not_winograd(
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc {{.*}}strides = array<i64: 2, 2>
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc {{.*}}dilations = array<i64: 2, 2>
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc {{.*}} tensor<1x1x32x32xf32>
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc {{.*}} tensor<5x5x32x32xf32>
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc {{.*}}group = 2
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc %x, %wa
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc %xi, %wi
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc %xd, %wd
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc %x8, %w8
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc %x, %w8o
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:       graph.conv_nhwc %xs, %w
// CHECK-NOT:   {{linalg|winograd}}
// CHECK:         func.return

// -----

// Must not fire: 7x7 outputs are 2x2 tiles of 4x4, fewer than MIN_TILES (9)
// to share each transformed weight; with a batch of 3 they are 12.
func.func @few_tiles(%x: tensor<1x9x9x32xf32>, %xb: tensor<3x9x9x32xf32>) -> (tensor<1x7x7x32xf32>, tensor<3x7x7x32xf32>) {
  %w = graph.constant dense<1.000000e+00> : tensor<3x3x32x32xf32>
  %one = graph.conv_nhwc %x, %w : (tensor<1x9x9x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x7x7x32xf32>
  %three = graph.conv_nhwc %xb, %w : (tensor<3x9x9x32xf32>, tensor<3x3x32x32xf32>) -> tensor<3x7x7x32xf32>
  func.return %one, %three : tensor<1x7x7x32xf32>, tensor<3x7x7x32xf32>
}

// CHECK-LABEL: func.func @few_tiles(
// CHECK-NOT:     linalg
// CHECK:         %one = graph.conv_nhwc %x, %w
// CHECK-NOT:     graph.conv_nhwc
// CHECK:         tensor<36x12x32xf32>
// CHECK-NOT:     graph.conv_nhwc
// CHECK:         func.return

// -----

// NCHW convolutions (-O1, or --layout none) are left alone.
func.func @nchw(%x: tensor<1x32x16x16xf32>) -> tensor<1x32x14x14xf32> {
  %w = graph.constant dense<1.000000e+00> : tensor<32x32x3x3xf32>
  %y = graph.conv %x, %w : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x14x14xf32>
  func.return %y : tensor<1x32x14x14xf32>
}

// CHECK-LABEL: func.func @nchw(
// CHECK-NEXT:    %w = graph.constant
// CHECK-NEXT:    %y = graph.conv %x, %w
