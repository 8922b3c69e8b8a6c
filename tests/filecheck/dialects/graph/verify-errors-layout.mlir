// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of Ember's layout ops: each case breaks one rule, and the
// message names it (layout strings, blocks, the ONNX op's own shape rule).

// A layout string that names an axis twice.
func.func @bad_layout(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %y = graph.layout_transform %x {source = "NCHW", target = "NCHWC"} : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// CHECK:      sym_name = "bad_layout"
// CHECK:      Operation does not verify: graph.layout_transform: layout 'NCHWC': axis C is named twice

// -----

// 12 channels are not whole blocks of 8.
func.func @not_divisible(%x: tensor<1x12x4x4xf32>) -> tensor<1x2x4x4x8xf32> {
  %y = graph.layout_transform %x {source = "NCHW", target = "NCHW8c"} : (tensor<1x12x4x4xf32>) -> tensor<1x2x4x4x8xf32>
  func.return %y : tensor<1x2x4x4x8xf32>
}

// CHECK:      sym_name = "not_divisible"
// CHECK:      Operation does not verify: graph.layout_transform: axis C of extent 12 is not divisible by the block 8 of layout NCHW8c

// -----

// The source layout has rank 5, the operand rank 4.
func.func @rank(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %y = graph.layout_transform %x {source = "NCHW8c", target = "NCHW"} : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// CHECK:      sym_name = "rank"
// CHECK:      Operation does not verify: graph.layout_transform: a tensor of rank 4 does not have layout NCHW8c

// -----

// Blocks of 8 and 12 channels do not nest.
func.func @blocks(%x: tensor<1x3x4x4x8xf32>) -> tensor<1x2x4x4x12xf32> {
  %y = graph.layout_transform %x {source = "NCHW8c", target = "NCHW12c"} : (tensor<1x3x4x4x8xf32>) -> tensor<1x2x4x4x12xf32>
  func.return %y : tensor<1x2x4x4x12xf32>
}

// CHECK:      sym_name = "blocks"
// CHECK:      Operation does not verify: graph.layout_transform: cannot convert NCHW8c to NCHW12c: blocks 12 and 8 of axis C do not nest

// -----

// The input's block (4 channels) is not the weight's input block (8).
func.func @conv_blocks(%x: tensor<1x4x4x4x4xf32>, %w: tensor<1x2x1x1x8x8xf32>) -> tensor<1x1x4x4x8xf32> {
  %y = graph.conv_nchwc %x, %w : (tensor<1x4x4x4x4xf32>, tensor<1x2x1x1x8x8xf32>) -> tensor<1x1x4x4x8xf32>
  func.return %y : tensor<1x1x4x4x8xf32>
}

// CHECK:      sym_name = "conv_blocks"
// CHECK:      Operation does not verify: graph.conv_nchwc: X: dim 4 of layout NCHW8c must be its block 8

// -----

// Conv's own rule, on the operands in NCHW/OIHW: 16 input channels, the weight reads 8.
func.func @conv_channels(%x: tensor<1x2x4x4x8xf32>, %w: tensor<1x1x1x1x8x8xf32>) -> tensor<1x1x4x4x8xf32> {
  %y = graph.conv_nchwc %x, %w : (tensor<1x2x4x4x8xf32>, tensor<1x1x1x1x8x8xf32>) -> tensor<1x1x4x4x8xf32>
  func.return %y : tensor<1x1x4x4x8xf32>
}

// CHECK:      sym_name = "conv_channels"
// CHECK:      Operation does not verify: graph.conv_nchwc: input channels (16) must equal weight channels (8) x group (1)

// -----

// A blocked convolution takes a 6-D weight.
func.func @conv_weight_rank(%x: tensor<1x1x4x4x8xf32>, %w: tensor<8x8x1x1xf32>) -> tensor<1x1x4x4x8xf32> {
  %y = graph.conv_nchwc %x, %w : (tensor<1x1x4x4x8xf32>, tensor<8x8x1x1xf32>) -> tensor<1x1x4x4x8xf32>
  func.return %y : tensor<1x1x4x4x8xf32>
}

// CHECK:      sym_name = "conv_weight_rank"
// CHECK:      Operation does not verify: graph.conv_nchwc: W (F/k x C/c x KH x KW x c x k) must have rank 6 and a static block dim

// -----

// The pooled output of NHWC 8x8 with a 3x3 window is 6x6, not 8x8.
func.func @pool_shape(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %y = graph.max_pool_nhwc %x {kernel_shape = array<i64: 3, 3>} : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  func.return %y : tensor<1x8x8x16xf32>
}

// CHECK:      sym_name = "pool_shape"
// CHECK:      Operation does not verify: graph.max_pool_nhwc: result #0 has type tensor<1x8x8x16xf32>, but the operands imply tensor<1x6x6x16xf32>
