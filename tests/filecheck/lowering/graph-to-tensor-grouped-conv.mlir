// RUN: ember-opt %s --split-input-file -p convert-graph-to-tensor | filecheck %s
// RUN: ember-opt %s --split-input-file -p 'convert-graph-to-tensor,tensor-default-schedule{cpu=znver4}' | filecheck %s --check-prefix=SCHED

// A grouped convolution has the group as a dim of its own: the padded input,
// the weights, the output and the bias are viewed with their channels split
// into (groups, per group) by tensor.reshape, so no index needs a floordiv:
// out[n, g, fg, oh, ow] += x[n, g, c, oh + kh, ow + kw] * w[g, fg, c, kh, kw].
func.func @grouped(%x: tensor<1x8x5x20xf32>, %b: tensor<8xf32>) -> tensor<1x8x5x20xf32> {
  %w = graph.constant dense<1.0> : tensor<8x2x3x3xf32>
  %y = graph.conv %x, %w, B %b {group = 4 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x5x20xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<1x8x5x20xf32>
  func.return %y : tensor<1x8x5x20xf32>
}

// CHECK-LABEL: func.func @grouped
// CHECK-NOT:     floordiv
// CHECK:         %[[P:.*]] = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[X:.*]] = tensor.reshape %[[P]]({{.*}}) : (tensor<1x8x7x22xf32>, tensor<5xi64>) -> tensor<1x4x2x7x22xf32>
// CHECK:         %[[W:.*]] = tensor.reshape %w({{.*}}) : (tensor<8x2x3x3xf32>, tensor<5xi64>) -> tensor<4x2x2x3x3xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x2x5x20xf32>)
// CHECK:         %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, (d3 + d6), (d4 + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X]], %[[W]] : tensor<1x4x2x7x22xf32>, tensor<4x2x2x3x3xf32>) outs(%[[Z]] : tensor<1x4x2x5x20xf32>)
// CHECK:         %[[B:.*]] = tensor.reshape %b({{.*}}) : (tensor<8xf32>, tensor<2xi64>) -> tensor<4x2xf32>
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], {{.*}} ins(%[[C]], %[[B]] : tensor<1x4x2x5x20xf32>, tensor<4x2xf32>)
// CHECK:         %y = tensor.reshape %[[S]]({{.*}}) : (tensor<1x4x2x5x20xf32>, tensor<4xi64>) -> tensor<1x8x5x20xf32>
// CHECK-NOT:     floordiv

// Stride 1 along ow (the output's innermost dim): a micro-kernel with n = ow
// and m = fg (the weights do not depend on ow: broadcast).
// SCHED-LABEL: func.func @grouped
// SCHED:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x2x5x20xf32>) attrs =  {schedule = #loop.schedule<{{.*}}micro = [2, 4,

// -----

// A pointwise one (1x1, stride 1, no padding) also flattens its positions:
// one dim of 49, not rows of 7, and no unit kernel dims.
func.func @pointwise(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32> {
  %w = graph.constant dense<1.0> : tensor<8x2x1x1xf32>
  %y = graph.conv %x, %w {group = 4 : i64, kernel_shape = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x7x7xf32>
  func.return %y : tensor<1x8x7x7xf32>
}

// CHECK-LABEL: func.func @pointwise
// CHECK:         tensor.reshape %x({{.*}}) : (tensor<1x8x7x7xf32>, tensor<4xi64>) -> tensor<1x4x2x49xf32>
// CHECK:         tensor.reshape %w({{.*}}) : (tensor<8x2x1x1xf32>, tensor<3xi64>) -> tensor<4x2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<1x4x2x49xf32>)
// CHECK:         %y = tensor.reshape {{.*}} : (tensor<1x4x2x49xf32>, tensor<4xi64>) -> tensor<1x8x7x7xf32>

// -----

// Depthwise (one channel per group, multiplier 1): no channel dims at all, so
// the input needs no view; stride 2 stays in the window sums.
func.func @depthwise(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<8x1x3x3xf32>
  %y = graph.conv %x, %w {group = 8 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}

// CHECK-LABEL: func.func @depthwise
// CHECK:         %[[P:.*]] = tensor.pad %x
// CHECK:         %[[W:.*]] = tensor.reshape %w({{.*}}) : (tensor<8x1x3x3xf32>, tensor<3xi64>) -> tensor<8x3x3xf32>
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P]], %[[W]] : tensor<1x8x9x9xf32>, tensor<8x3x3xf32>)

// -----

// Depthwise with multiplier 2: the filters split into (4, 2), the input not.
func.func @multiplier(%x: tensor<1x4x7x7xf32>) -> tensor<1x8x5x5xf32> {
  %w = graph.constant dense<1.0> : tensor<8x1x3x3xf32>
  %y = graph.conv %x, %w {group = 4 : i64, kernel_shape = array<i64: 3, 3>} : (tensor<1x4x7x7xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x5x5xf32>
  func.return %y : tensor<1x8x5x5xf32>
}

// CHECK-LABEL: func.func @multiplier
// CHECK:         %[[W:.*]] = tensor.reshape %w({{.*}}) : (tensor<8x1x3x3xf32>, tensor<4xi64>) -> tensor<4x2x3x3xf32>
// CHECK:         %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, (d3 + d5), (d4 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>], {{.*}} ins(%x, %[[W]] : tensor<1x4x7x7xf32>, tensor<4x2x3x3xf32>)
// CHECK:         %y = tensor.reshape %[[C]]({{.*}}) : (tensor<1x4x2x5x5xf32>, tensor<4xi64>) -> tensor<1x8x5x5xf32>

// -----

// NHWC (graph-layout's form): out[n, oh, ow, g, fg] += x[n, oh + kh, ow + kw,
// g, c] * w[kh, kw, c, g, fg], fg innermost in the output and the weights.
func.func @nhwc(%x: tensor<1x6x6x16xf32>, %w: tensor<3x3x4x64xf32>, %b: tensor<64xf32>) -> tensor<1x6x6x64xf32> {
  %y = graph.conv_nhwc %x, %w, B %b {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x16xf32>, tensor<3x3x4x64xf32>, tensor<64xf32>) -> tensor<1x6x6x64xf32>
  func.return %y : tensor<1x6x6x64xf32>
}

// CHECK-LABEL: func.func @nhwc
// CHECK:         %[[P:.*]] = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         %[[X:.*]] = tensor.reshape %[[P]]({{.*}}) : (tensor<1x8x8x16xf32>, tensor<5xi64>) -> tensor<1x8x8x4x4xf32>
// CHECK:         %[[W:.*]] = tensor.reshape %w({{.*}}) : (tensor<3x3x4x64xf32>, tensor<5xi64>) -> tensor<3x3x4x4x16xf32>
// CHECK:         %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d1 + d4), (d2 + d5), d3, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d4, d5, d6, d3, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[X]], %[[W]] : tensor<1x8x8x4x4xf32>, tensor<3x3x4x4x16xf32>)
// CHECK:         tensor.reshape %b({{.*}}) : (tensor<64xf32>, tensor<2xi64>) -> tensor<4x16xf32>
// CHECK:         %y = tensor.reshape {{.*}} : (tensor<1x6x6x4x16xf32>, tensor<4xi64>) -> tensor<1x6x6x64xf32>

// The 16 filters of a group are one AVX-512 vector: a micro-kernel with n = fg
// (d7) and m = ow (d2), as an ungrouped NHWC convolution gets.
// SCHED-LABEL: func.func @nhwc
// SCHED:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x6x6x4x16xf32>) attrs =  {schedule = #loop.schedule<order = [0, 1, 2, 3, 4, 5, 6, 7], parallel = [0, 1, 2, 3, 7], vector = 16, micro = [2, 7, 6, 16]>}

// -----

// NHWC depthwise: out[n, oh, ow, g] += x[n, oh + kh, ow + kw, g] * w[kh, kw, g],
// g innermost and contiguous in every operand; only the weights need a view.
func.func @nhwc_depthwise(%x: tensor<1x6x6x128xf32>, %w: tensor<3x3x1x128xf32>) -> tensor<1x6x6x128xf32> {
  %y = graph.conv_nhwc %x, %w {group = 128 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x128xf32>, tensor<3x3x1x128xf32>) -> tensor<1x6x6x128xf32>
  func.return %y : tensor<1x6x6x128xf32>
}

// CHECK-LABEL: func.func @nhwc_depthwise
// CHECK:         %[[P:.*]] = tensor.pad %x
// CHECK:         %[[W:.*]] = tensor.reshape %w({{.*}}) : (tensor<3x3x1x128xf32>, tensor<3xi64>) -> tensor<3x3x128xf32>
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d1 + d4), (d2 + d5), d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P]], %[[W]] : tensor<1x8x8x128xf32>, tensor<3x3x128xf32>)

// Both operands depend on g (n), none depends on ow alone: a micro-kernel
// with m = ow (d2), whose rows share each vector of weights and read their
// own input vectors.
// SCHED-LABEL: func.func @nhwc_depthwise
// SCHED:         %y = linalg.generic {{.*}} attrs =  {schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 3], parallel = [0, 1, 2, 3], vector = 16, micro = [2, 3, 6, 64]>}

// -----

// Must not fire: an NCHW depthwise convolution reads only its input as
// vectors (along ow), and the input depends on every other output dim, so no
// rows could share a read: no micro-kernel, ow tiled to a register block.
func.func @nchw_depthwise_wide(%x: tensor<1x8x7x100xf32>) -> tensor<1x8x7x100xf32> {
  %w = graph.constant dense<1.0> : tensor<8x1x3x3xf32>
  %y = graph.conv %x, %w {group = 8 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x7x100xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x7x100xf32>
  func.return %y : tensor<1x8x7x100xf32>
}

// CHECK-LABEL: func.func @nchw_depthwise_wide
// SCHED-LABEL: func.func @nchw_depthwise_wide
// SCHED:         %y = linalg.generic {{.*}} attrs =  {schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 3], tiles = [0, 0, 0, 64, 0, 0], parallel = [0, 1, 2, 3]>}

// -----

// NHWC pointwise: positions flattened (36), the rows of its micro-kernel.
func.func @nhwc_pointwise(%x: tensor<1x6x6x16xf32>, %w: tensor<1x1x4x64xf32>) -> tensor<1x6x6x64xf32> {
  %y = graph.conv_nhwc %x, %w {group = 4 : i64} : (tensor<1x6x6x16xf32>, tensor<1x1x4x64xf32>) -> tensor<1x6x6x64xf32>
  func.return %y : tensor<1x6x6x64xf32>
}

// CHECK-LABEL: func.func @nhwc_pointwise
// CHECK:         tensor.reshape %x({{.*}}) : (tensor<1x6x6x16xf32>, tensor<4xi64>) -> tensor<1x36x4x4xf32>
// CHECK:         tensor.reshape %w({{.*}}) : (tensor<1x1x4x64xf32>, tensor<3xi64>) -> tensor<4x4x16xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d3, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK:         %y = tensor.reshape {{.*}} : (tensor<1x36x4x16xf32>, tensor<4xi64>) -> tensor<1x6x6x64xf32>

// SCHED-LABEL: func.func @nhwc_pointwise
// SCHED:         linalg.generic {{.*}} attrs =  {schedule = #loop.schedule<{{.*}}micro = [1, 4,

// -----

// Must not fire: ungrouped convolutions keep linalg's named conv (NCHW) and
// the one NHWC generic, with no views of their operands.
func.func @ungrouped(%x: tensor<1x8x7x7xf32>, %xh: tensor<1x6x6x16xf32>, %wh: tensor<3x3x16x32xf32>) -> (tensor<1x8x7x7xf32>, tensor<1x6x6x32xf32>) {
  %w = graph.constant dense<1.0> : tensor<8x8x3x3xf32>
  %y = graph.conv %x, %w {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x7x7xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x7x7xf32>
  %h = graph.conv_nhwc %xh, %wh {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x16xf32>, tensor<3x3x16x32xf32>) -> tensor<1x6x6x32xf32>
  func.return %y, %h : tensor<1x8x7x7xf32>, tensor<1x6x6x32xf32>
}

// CHECK-LABEL: func.func @ungrouped
// CHECK-NOT:     tensor.reshape
// CHECK:         %y = linalg.conv_2d_nchw_fchw
// CHECK-NOT:     tensor.reshape
// CHECK:         %h = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 + d3), (d2 + d4), d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>]
// CHECK-NOT:     tensor.reshape
