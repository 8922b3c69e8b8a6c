// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case is one tensor op that breaks a rule of its verifier. With
// --verify-diagnostics, ember-opt prints each chunk's diagnostic next to the
// (generic) IR and goes on with the next chunk; every case checks that its
// function is the one reported, and the exact message.

// generic: one indexing map per operand (2 maps, 3 operands).
func.func @generic_map_count(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    tensor.yield %x : f32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_map_count"
// CHECK:      Operation does not verify: tensor.generic: 2 indexing maps for 3 operands

// -----

// generic: every map has one dim per iterator (map #1 has 1, the op iterates 2).
func.func @generic_map_dims(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty : tensor<4x8xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0) -> (d0, d0)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    tensor.yield %x : f32
  } -> tensor<4x8xf32>
  func.return %g : tensor<4x8xf32>
}

// CHECK:      sym_name = "generic_map_dims"
// CHECK:      Operation does not verify: tensor.generic: map #1 has 1 dims, the op iterates 2

// -----

// generic: a map gives one index per dim of its operand (map #0: 1 index, rank 2).
func.func @generic_map_rank(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty : tensor<4x8xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    tensor.yield %x : f32
  } -> tensor<4x8xf32>
  func.return %g : tensor<4x8xf32>
}

// CHECK:      sym_name = "generic_map_rank"
// CHECK:      Operation does not verify: tensor.generic: map #0 gives 1 indices for an operand of rank 2

// -----

// generic: iterator types are "parallel" or "reduction".
func.func @generic_iterator(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["window"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    tensor.yield %x : f32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_iterator"
// CHECK:      Operation does not verify: tensor.generic: unknown iterator type 'window'

// -----

// generic: an output map holds bare dims only (no d0 + d1).
func.func @generic_output_expr(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0 + d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    tensor.yield %x : f32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_output_expr"
// CHECK:      Operation does not verify: tensor.generic: output map #0 must be dims only

// -----

// generic: an output is indexed by parallel dims only (the second output uses d1).
func.func @generic_output_reduction(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %z = tensor.fill 0.000000e+00 : f32 : tensor<4xf32>
  %e = tensor.empty : tensor<4x8xf32>
  %s, %n = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf32>) outs(%z, %e : tensor<4xf32>, tensor<4x8xf32>) {
  ^bb0(%x: f32, %acc: f32, %o: f32):
    %t = arith.addf %acc, %x : f32
    tensor.yield %t, %x : f32, f32
  } -> tensor<4xf32>, tensor<4x8xf32>
  func.return %s, %n : tensor<4xf32>, tensor<4x8xf32>
}

// CHECK:      sym_name = "generic_output_reduction"
// CHECK:      Operation does not verify: tensor.generic: output map #1 uses reduction dim d1

// -----

// generic: every dim must be the bare index of some operand dim (d1 only
// appears inside d0 + d1), or its extent is unknown.
func.func @generic_unbounded_dim(%a: tensor<8xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    tensor.yield %x : f32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_unbounded_dim"
// CHECK:      Operation does not verify: tensor.generic: dims [1] are not the bare index of any operand dim

// -----

// generic: the body takes the operands' element types (f16 given for f32).
func.func @generic_body_types(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f16, %o: f32):
    tensor.yield %o : f32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_body_types"
// CHECK:      Operation does not verify: tensor.generic: body arguments must be the operands' element types ['f32', 'f32']

// -----

// generic: the body takes one argument per operand (the output's is missing).
func.func @generic_body_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32):
    tensor.yield %x : f32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_body_count"
// CHECK:      Operation does not verify: tensor.generic: body arguments must be the operands' element types ['f32', 'f32']

// -----

// generic: one yielded value per output (two yielded, one output).
func.func @generic_yield_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    tensor.yield %x, %o : f32, f32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_yield_count"
// CHECK:      Operation does not verify: tensor.generic: body must end in tensor.yield of one value per output

// -----

// generic: the yielded value has the output's element type (i32 for f32).
func.func @generic_yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty : tensor<4xf32>
  %g = tensor.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = arith.fptosi %x : f32 to i32
    tensor.yield %i : i32
  } -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK:      sym_name = "generic_yield_type"
// CHECK:      Operation does not verify: tensor.generic: yielded types must match the outputs

// -----

// matmul: the contracted dims differ (8 vs 6).
func.func @matmul_shapes(%a: tensor<4x8xf32>, %b: tensor<6x4xf32>) -> tensor<4x4xf32> {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<4x4xf32>
  %m = tensor.matmul ins(%a, %b : tensor<4x8xf32>, tensor<6x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m : tensor<4x4xf32>
}

// CHECK:      sym_name = "matmul_shapes"
// CHECK:      Operation does not verify: tensor.matmul: (4, 8) x (6, 4) does not give (4, 4)

// -----

// matmul: the result shape is (m, n) of the operands.
func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x4xf32> {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<4x4xf32>
  %m = tensor.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m : tensor<4x4xf32>
}

// CHECK:      sym_name = "matmul_result"
// CHECK:      Operation does not verify: tensor.matmul: (4, 8) x (8, 3) does not give (4, 4)

// -----

// matmul: batch dims are equal.
func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<2x4x4xf32> {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<2x4x4xf32>
  %m = tensor.matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32>) outs(%f : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  func.return %m : tensor<2x4x4xf32>
}

// CHECK:      sym_name = "matmul_batch"
// CHECK:      Operation does not verify: tensor.matmul: batch dims must be equal

// -----

// matmul: all three operands have one rank >= 2.
func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1xf32> {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<1xf32>
  %m = tensor.matmul ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<1xf32>) -> tensor<1xf32>
  func.return %m : tensor<1xf32>
}

// CHECK:      sym_name = "matmul_rank"
// CHECK:      Operation does not verify: tensor.matmul: operands must have the same rank >= 2

// -----

// conv2d: the input has filter channels x groups channels (4 != 3 x 2).
func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %e = tensor.empty : tensor<1x8x6x6xf32>
  %c = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) outs(%e : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  func.return %c : tensor<1x8x6x6xf32>
}

// CHECK:      sym_name = "conv_channels"
// CHECK:      Operation does not verify: tensor.conv2d: channels of (1, 4, 8, 8), (8, 3, 3, 3), (1, 8, 6, 6) disagree with groups=2

// -----

// conv2d: the groups divide the filters (6 filters, 4 groups).
func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %e = tensor.empty : tensor<1x6x6x6xf32>
  %c = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 4 : i64} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) outs(%e : tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  func.return %c : tensor<1x6x6x6xf32>
}

// CHECK:      sym_name = "conv_groups"
// CHECK:      Operation does not verify: tensor.conv2d: channels of (1, 4, 8, 8), (6, 1, 3, 3), (1, 6, 6, 6) disagree with groups=4

// -----

// conv2d: the output has one channel per filter (8 filters, 4 channels).
func.func @conv_out_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %e = tensor.empty : tensor<1x4x6x6xf32>
  %c = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %c : tensor<1x4x6x6xf32>
}

// CHECK:      sym_name = "conv_out_channels"
// CHECK:      Operation does not verify: tensor.conv2d: channels of (1, 3, 8, 8), (8, 3, 3, 3), (1, 4, 6, 6) disagree with groups=1

// -----

// conv2d: the last output row would read row (7 - 1) * 1 + (3 - 1) * 1 = 8 of
// an 8-row input (the input is already padded; 6 rows fit).
func.func @conv_past_input(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x7x6xf32> {
  %e = tensor.empty : tensor<1x4x7x6xf32>
  %c = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%e : tensor<1x4x7x6xf32>) -> tensor<1x4x7x6xf32>
  func.return %c : tensor<1x4x7x6xf32>
}

// CHECK:      sym_name = "conv_past_input"
// CHECK:      Operation does not verify: tensor.conv2d: output dim 2 reads past the input

// -----

// conv2d: stride and dilation count too (width: (3 - 1) * 2 + (3 - 1) * 2 = 8
// reads past an 8-column input).
func.func @conv_past_input_strided(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x2x3xf32> {
  %e = tensor.empty : tensor<1x4x2x3xf32>
  %c = tensor.conv2d {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, groups = 1 : i64} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%e : tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  func.return %c : tensor<1x4x2x3xf32>
}

// CHECK:      sym_name = "conv_past_input_strided"
// CHECK:      Operation does not verify: tensor.conv2d: output dim 3 reads past the input

// -----

// conv2d: NCHW / FCHW operands of rank 4.
func.func @conv_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %e = tensor.empty : tensor<1x4x6x6xf32>
  %c = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} ins(%x, %w : tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %c : tensor<1x4x6x6xf32>
}

// CHECK:      sym_name = "conv_rank"
// CHECK:      Operation does not verify: tensor.conv2d: operands must have rank 4

// -----

// pool2d: the kind is max or sum (average pooling is a sum, then a division).
func.func @pool_kind(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %e = tensor.empty : tensor<1x4x4x4xf32>
  %p = tensor.pool2d {kind = "avg", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} ins(%x : tensor<1x4x8x8xf32>) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %p : tensor<1x4x4x4xf32>
}

// CHECK:      sym_name = "pool_kind"
// CHECK:      Operation does not verify: tensor.pool2d: kind must be max or sum, got 'avg'

// -----

// pool2d: the output keeps the input's N and C.
func.func @pool_channels(%x: tensor<1x4x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %e = tensor.empty : tensor<1x2x4x4xf32>
  %p = tensor.pool2d {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} ins(%x : tensor<1x4x8x8xf32>) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %p : tensor<1x2x4x4xf32>
}

// CHECK:      sym_name = "pool_channels"
// CHECK:      Operation does not verify: tensor.pool2d: input and output must be NCHW with equal N, C

// -----

// fill: the value has the element type (an i32 value for an f32 tensor).
func.func @fill_type() -> tensor<4xf32> {
  %f = tensor.fill 0 : i32 : tensor<4xf32>
  func.return %f : tensor<4xf32>
}

// CHECK:      sym_name = "fill_type"
// CHECK:      Operation does not verify: tensor.fill: value type must be the element type

// -----

// pad: source + low + high must be the result (2 + 1 + 1 != 5).
func.func @pad_sizes(%a: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %p = tensor.pad %a {low = array<i64: 1, 0>, high = array<i64: 1, 0>, value = 0.000000e+00 : f32} : tensor<2x3xf32> -> tensor<5x3xf32>
  func.return %p : tensor<5x3xf32>
}

// CHECK:      sym_name = "pad_sizes"
// CHECK:      Operation does not verify: tensor.pad: (2, 3) padded by [1, 0]/[1, 0] is not (5, 3)

// -----

// pad: low and high have one entry per dim.
func.func @pad_rank(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %p = tensor.pad %a {low = array<i64: 1>, high = array<i64: 1>, value = 0.000000e+00 : f32} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return %p : tensor<4x3xf32>
}

// CHECK:      sym_name = "pad_rank"
// CHECK:      Operation does not verify: tensor.pad: low/high must have one entry per dim

// -----

// extract_slice: the last element read, 2 + (3 - 1) * 2 = 6, is past dim 1 (6).
func.func @extract_out_of_bounds(%a: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %a {offsets = array<i64: 0, 2>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK:      sym_name = "extract_out_of_bounds"
// CHECK:      Operation does not verify: tensor.extract_slice: slice [0, 2]/[2, 3]/[1, 2] leaves (4, 6)

// -----

// extract_slice: sizes are the result's shape.
func.func @extract_sizes(%a: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %a {offsets = array<i64: 0, 0>, sizes = array<i64: 3, 2>, strides = array<i64: 1, 1>} : tensor<4x6xf32> -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK:      sym_name = "extract_sizes"
// CHECK:      Operation does not verify: tensor.extract_slice: sizes [3, 2] differ from the slice shape (2, 3)

// -----

// extract_slice: a stride is at least 1.
func.func @extract_stride(%a: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %a {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 3>, strides = array<i64: 0, 1>} : tensor<4x6xf32> -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK:      sym_name = "extract_stride"
// CHECK:      Operation does not verify: tensor.extract_slice: slice [0, 0]/[2, 3]/[0, 1] leaves (4, 6)

// -----

// extract_slice: offsets, sizes and strides have one entry per dim of the source.
func.func @extract_rank(%a: tensor<4x6xf32>) -> tensor<2xf32> {
  %s = tensor.extract_slice %a {offsets = array<i64: 0>, sizes = array<i64: 2>, strides = array<i64: 1>} : tensor<4x6xf32> -> tensor<2xf32>
  func.return %s : tensor<2xf32>
}

// CHECK:      sym_name = "extract_rank"
// CHECK:      Operation does not verify: tensor.extract_slice: offsets, sizes and strides need one entry per dim

// -----

// insert_slice: a 2x4 slice at row 3 of a 4-row tensor leaves it.
func.func @insert_out_of_bounds(%s: tensor<2x4xf32>, %d: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tensor.insert_slice %s into %d {offsets = array<i64: 3, 0>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<2x4xf32> into tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK:      sym_name = "insert_out_of_bounds"
// CHECK:      Operation does not verify: tensor.insert_slice: slice [3, 0]/[2, 4]/[1, 1] leaves (4, 8)

// -----

// insert_slice: sizes are the inserted tensor's shape.
func.func @insert_sizes(%s: tensor<2x4xf32>, %d: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tensor.insert_slice %s into %d {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 1>} : tensor<2x4xf32> into tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK:      sym_name = "insert_sizes"
// CHECK:      Operation does not verify: tensor.insert_slice: sizes [2, 2] differ from the slice shape (2, 4)

// -----

// insert_slice: the result has the destination's type.
func.func @insert_result(%s: tensor<2x4xf32>, %d: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %r = tensor.insert_slice %s into %d {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<2x4xf32> into tensor<4x8xf32> -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}

// CHECK:      sym_name = "insert_result"
// CHECK:      Operation does not verify: tensor.insert_slice: result type must be the dest type

// -----

// reshape: the element count is kept (24 vs 25).
func.func @reshape_count(%a: tensor<4x6xf32>) -> tensor<5x5xf32> {
  %r = tensor.reshape %a : tensor<4x6xf32> -> tensor<5x5xf32>
  func.return %r : tensor<5x5xf32>
}

// CHECK:      sym_name = "reshape_count"
// CHECK:      Operation does not verify: tensor.reshape: element counts differ

// -----

// reshape: the element type is kept.
func.func @reshape_type(%a: tensor<4x6xf32>) -> tensor<24xi32> {
  %r = tensor.reshape %a : tensor<4x6xf32> -> tensor<24xi32>
  func.return %r : tensor<24xi32>
}

// CHECK:      sym_name = "reshape_type"
// CHECK:      Operation does not verify: tensor.reshape: element types differ
