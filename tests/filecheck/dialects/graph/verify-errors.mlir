// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case is one op that breaks a rule of its verifier or shape rule. With
// --verify-diagnostics, ember-opt prints each chunk's diagnostic next to the
// (generic) IR and goes on with the next chunk; every case checks that its
// function is the one reported, and the exact message.

// Conv: the input's channels must equal the weight's channels times group.
func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = graph.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// CHECK:      sym_name = "conv_channels"
// CHECK:      Operation does not verify: graph.conv: input channels (3) must equal weight channels (2) x group (1)

// -----

// Conv: group must divide the output channels.
func.func @conv_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %y = graph.conv %x, %w {group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %y : tensor<1x6x6x6xf32>
}

// CHECK:      sym_name = "conv_group"
// CHECK:      Operation does not verify: graph.conv: output channels (6) must be divisible by group (4)

// -----

// Conv: the bias has one value per output channel.
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  %y = graph.conv %x, %w, B %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// CHECK:      sym_name = "conv_bias"
// CHECK:      Operation does not verify: graph.conv: bias must have shape 4, got 3

// -----

// Conv: kernel_shape must agree with the weight.
func.func @conv_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = graph.conv %x, %w {kernel_shape = array<i64: 5, 5>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// CHECK:      sym_name = "conv_kernel"
// CHECK:      Operation does not verify: graph.conv: kernel_shape [5, 5] does not match the weight's [3, 3]

// -----

// Conv: pads needs two values per spatial dim.
func.func @conv_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = graph.conv %x, %w {pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// CHECK:      sym_name = "conv_pads"
// CHECK:      Operation does not verify: graph.conv: pads has 2 values, expected 4

// -----

// Conv: the declared result shape must match the inferred one (stride 2: 3x3).
func.func @conv_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// CHECK:      sym_name = "conv_result"
// CHECK:      Operation does not verify: graph.conv: result #0 has type tensor<1x4x6x6xf32>, but the operands imply tensor<1x4x3x3xf32>

// -----

// Conv: X and W must have the same element type.
func.func @conv_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32> {
  %y = graph.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// CHECK:      sym_name = "conv_types"
// CHECK:      Operation does not verify: graph.conv: operands must have the same element type, got f32, f16

// -----

// MaxPool: kernel_shape is required.
func.func @max_pool_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = graph.max_pool %x {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}

// CHECK:      sym_name = "max_pool_kernel"
// CHECK:      Operation does not verify: property 'kernel_shape' expected in operation 'graph.max_pool'

// -----

// MaxPool: the window must fit the (padded) input.
func.func @max_pool_window(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> {
  %y = graph.max_pool %x {kernel_shape = array<i64: 3, 3>} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  func.return %y : tensor<1x3x1x1xf32>
}

// CHECK:      sym_name = "max_pool_window"
// CHECK:      Operation does not verify: graph.max_pool: window of extent 3 does not fit input extent 2 with padding (0, 0)

// -----

// AveragePool: auto_pad must be one of the ONNX values.
func.func @avg_pool_auto_pad(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %y = graph.average_pool %x {auto_pad = "SAME", kernel_shape = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}

// CHECK:      sym_name = "avg_pool_auto_pad"
// CHECK:      Operation does not verify: graph.average_pool: unknown auto_pad 'SAME'

// -----

// Add: shapes that do not broadcast.
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %y = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      sym_name = "add_broadcast"
// CHECK:      Operation does not verify: graph.add: operands are not broadcast-compatible: 2x3, 4x3

// -----

// Mul: operands of different element types.
func.func @mul_types(%a: tensor<2x3xf32>, %b: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %y = graph.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      sym_name = "mul_types"
// CHECK:      Operation does not verify: graph.mul: operands must have the same element type, got f32, i64

// -----

// Sub: the declared result is not the broadcast shape.
func.func @sub_result(%a: tensor<2x1xf32>, %b: tensor<3xf32>) -> tensor<2x1xf32> {
  %y = graph.sub %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  func.return %y : tensor<2x1xf32>
}

// CHECK:      sym_name = "sub_result"
// CHECK:      Operation does not verify: graph.sub: result #0 has type tensor<2x1xf32>, but the operands imply tensor<2x3xf32>

// -----

// Equal: a comparison gives i1, not the operand type.
func.func @equal_result(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %y = graph.equal %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}

// CHECK:      sym_name = "equal_result"
// CHECK:      Operation does not verify: graph.equal: result #0 has type tensor<4xi64>, but the operands imply tensor<4xi1>

// -----

// And: logical ops need i1 operands.
func.func @and_types(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi1> {
  %y = graph.and %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// CHECK:      sym_name = "and_types"
// CHECK:      Operation does not verify: graph.and: operands must be tensors of i1

// -----

// Sqrt: a float-only op on integers.
func.func @sqrt_int(%a: tensor<4xi64>) -> tensor<4xi64> {
  %y = graph.sqrt %a : (tensor<4xi64>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}

// CHECK:      sym_name = "sqrt_int"
// CHECK:      Operation does not verify: graph.sqrt: expects a floating-point tensor, got tensor<4xi64>

// -----

// Where: the condition must be i1.
func.func @where_condition(%c: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.where %c, %a, %b : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:      sym_name = "where_condition"
// CHECK:      Operation does not verify: graph.where: condition must be a tensor of i1, got tensor<4xf32>

// -----

// Clip: a bound must be a scalar.
func.func @clip_bound(%x: tensor<4xf32>, %lo: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.clip %x, min %lo : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:      sym_name = "clip_bound"
// CHECK:      Operation does not verify: graph.clip: min must be a scalar, got tensor<4xf32>

// -----

// PRelu: the slope must broadcast to X, not grow it.
func.func @prelu_slope(%x: tensor<1x4xf32>, %s: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = graph.prelu %x, %s : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK:      sym_name = "prelu_slope"
// CHECK:      Operation does not verify: graph.prelu: slope must broadcast to the shape of X

// -----

// Cast: the result element type is `to`.
func.func @cast_result(%x: tensor<4xf32>) -> tensor<4xi64> {
  %y = graph.cast %x {to = i32} : (tensor<4xf32>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}

// CHECK:      sym_name = "cast_result"
// CHECK:      Operation does not verify: graph.cast: result #0 has type tensor<4xi64>, but the operands imply tensor<4xi32>

// -----

// Cast: `to` is required.
func.func @cast_to(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.cast %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:      sym_name = "cast_to"
// CHECK:      Operation does not verify: property 'to' expected in operation 'graph.cast'

// -----

// MatMul: inner dimensions must agree.
func.func @matmul_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %y = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// CHECK:      sym_name = "matmul_inner"
// CHECK:      Operation does not verify: graph.matmul: inner dimensions differ: 2x3 @ 4x5

// -----

// MatMul: batch dims must broadcast.
func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x3x6xf32> {
  %y = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x3x6xf32>
  func.return %y : tensor<2x3x6xf32>
}

// CHECK:      sym_name = "matmul_batch"
// CHECK:      Operation does not verify: graph.matmul: batch dimensions are not broadcast-compatible: 2, 5

// -----

// Gemm: C must broadcast to M x N.
func.func @gemm_c(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %c: tensor<3xf32>) -> tensor<2x4xf32> {
  %y = graph.gemm %a, %b, C %c {transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK:      sym_name = "gemm_c"
// CHECK:      Operation does not verify: graph.gemm: C (3) must broadcast to 2x4

// -----

// Gemm: C has the element type of A and B (an integer bias of a float Gemm
// once reached LLVM as a float + i64 add).
func.func @gemm_c_type(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xi64>) -> tensor<2x4xf32> {
  %y = graph.gemm %a, %b, C %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xi64>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK:      sym_name = "gemm_c_type"
// CHECK:      Operation does not verify: graph.gemm: {{.*}}f32, f32, i64

// -----

// Conv: the bias has the element type of X and W.
func.func @conv_bias_type(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %b: tensor<3xf64>) -> tensor<1x3x4x4xf32> {
  %y = graph.conv %x, %w, B %b : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf64>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}

// CHECK:      sym_name = "conv_bias_type"
// CHECK:      Operation does not verify: graph.conv: {{.*}}f32, f32, f64

// -----

// Gemm: without transB the inner dims are 3 and 4.
func.func @gemm_trans(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %y = graph.gemm %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      sym_name = "gemm_trans"
// CHECK:      Operation does not verify: graph.gemm: inner dimensions differ: 3 (A) vs 4 (B)

// -----

// Softmax: axis out of range.
func.func @softmax_axis(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %y = graph.softmax %x {axis = 2 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}

// CHECK:      sym_name = "softmax_axis"
// CHECK:      Operation does not verify: graph.softmax: axis 2 is out of range for rank 2

// -----

// BatchNormalization: per-channel operands must have C values.
func.func @batch_norm_channels(%x: tensor<1x4x8x8xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<3xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %y = graph.batch_normalization %x, %s, %b, %m, %v : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// CHECK:      sym_name = "batch_norm_channels"
// CHECK:      Operation does not verify: graph.batch_normalization: input_mean must have shape 4 (channels), got 3

// -----

// BatchNormalization: the running statistics come only in training mode.
func.func @batch_norm_running_statistics(%x: tensor<1x4x8x8xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
  %y, %mean, %var = graph.batch_normalization %x, %s, %s, %s, %s : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %mean : tensor<4xf32>
}

// CHECK:      sym_name = "batch_norm_running_statistics"
// CHECK:      Operation does not verify: graph.batch_normalization: running_mean and running_var are outputs of training mode (training_mode=1) only

// -----

// Dropout: training_mode is one bool.
func.func @dropout_training_mode(%x: tensor<2x3xf32>, %t: tensor<2xi1>) -> tensor<2x3xf32> {
  %y = graph.dropout %x, training_mode %t : (tensor<2x3xf32>, tensor<2xi1>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      sym_name = "dropout_training_mode"
// CHECK:      Operation does not verify: graph.dropout: training_mode must be an i1 scalar, got tensor<2xi1>

// -----

// LayerNormalization: Scale must broadcast to the normalized dims.
func.func @layer_norm_scale(%x: tensor<2x16x768xf32>, %s: tensor<512xf32>) -> tensor<2x16x768xf32> {
  %y, %m, %i = graph.layer_normalization %x, %s : (tensor<2x16x768xf32>, tensor<512xf32>) -> (tensor<2x16x768xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  func.return %y : tensor<2x16x768xf32>
}

// CHECK:      sym_name = "layer_norm_scale"
// CHECK:      Operation does not verify: graph.layer_normalization: Scale (512) must broadcast to the normalized dims 768

// -----

// LRN: size is required.
func.func @lrn_size(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %y = graph.lrn %x : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// CHECK:      sym_name = "lrn_size"
// CHECK:      Operation does not verify: property 'size' expected in operation 'graph.lrn'

// -----

// Flatten: axis out of range.
func.func @flatten_axis(%x: tensor<2x3xf32>) -> tensor<6x1xf32> {
  %y = graph.flatten %x {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  func.return %y : tensor<6x1xf32>
}

// CHECK:      sym_name = "flatten_axis"
// CHECK:      Operation does not verify: graph.flatten: axis 3 is out of range for rank 2

// -----

// Transpose: perm must be a permutation of the dims.
func.func @transpose_perm(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %y = graph.transpose %x {perm = array<i64: 2, 1, 1>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  func.return %y : tensor<4x3x2xf32>
}

// CHECK:      sym_name = "transpose_perm"
// CHECK:      Operation does not verify: graph.transpose: perm [2, 1, 1] is not a permutation of the 3 dims

// -----

// Reshape: element counts must agree.
func.func @reshape_count(%x: tensor<2x3x4xf32>) -> tensor<5x5xf32> {
  %s = graph.constant dense<[5, 5]> : tensor<2xi64>
  %y = graph.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x5xf32>
  func.return %y : tensor<5x5xf32>
}

// CHECK:      sym_name = "reshape_count"
// CHECK:      Operation does not verify: graph.reshape: cannot reshape 2x3x4 (24 elements) into 5x5 (25 elements)

// -----

// Reshape: at most one -1.
func.func @reshape_two_minus_one(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = graph.constant dense<[-1, -1]> : tensor<2xi64>
  %y = graph.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK:      sym_name = "reshape_two_minus_one"
// CHECK:      Operation does not verify: graph.reshape: shape [-1, -1] has more than one -1

// -----

// Reshape: the shape operand must be a 1-D i64 tensor.
func.func @reshape_shape_type(%x: tensor<2x3x4xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  %y = graph.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK:      sym_name = "reshape_shape_type"
// CHECK:      Operation does not verify: graph.reshape: shape must be a 1-D tensor of i64, got tensor<2xi32>

// -----

// Concat: operands of different ranks.
func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<4x3xf32> {
  %y = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// CHECK:      sym_name = "concat_rank"
// CHECK:      Operation does not verify: graph.concat: operands have different ranks: 2x3, 2x3x1

// -----

// Concat: dims outside the axis must agree.
func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  %y = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// CHECK:      sym_name = "concat_dims"
// CHECK:      Operation does not verify: graph.concat: operands differ in dim 1 outside the concat axis: 2x3, 2x4

// -----

// Concat: axis is required.
func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %y = graph.concat %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// CHECK:      sym_name = "concat_axis"
// CHECK:      Operation does not verify: property 'axis' expected in operation 'graph.concat'

// -----

// Gather: axis out of range.
func.func @gather_axis(%x: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %y = graph.gather %x, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK:      sym_name = "gather_axis"
// CHECK:      Operation does not verify: graph.gather: axis 2 is out of range for rank 2

// -----

// Gather: indices must be integers.
func.func @gather_indices(%x: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  %y = graph.gather %x, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK:      sym_name = "gather_indices"
// CHECK:      Operation does not verify: graph.gather: indices must be i64 or i32, got tensor<3xf32>

// -----

// Split: explicit sizes must add up to the dim.
func.func @split_sizes(%x: tensor<10x4xf32>) -> tensor<3x4xf32> {
  %s = graph.constant dense<[3, 5]> : tensor<2xi64>
  %a, %b = graph.split %x, split %s : (tensor<10x4xf32>, tensor<2xi64>) -> (tensor<3x4xf32>, tensor<5x4xf32>)
  func.return %a : tensor<3x4xf32>
}

// CHECK:      sym_name = "split_sizes"
// CHECK:      Operation does not verify: graph.split: split sizes [3, 5] do not add up to 10

// -----

// Split: equal parts need a dim that divides evenly.
func.func @split_even(%x: tensor<10x4xf32>) -> tensor<4x4xf32> {
  %a, %b, %c = graph.split %x : (tensor<10x4xf32>) -> (tensor<4x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
  func.return %a : tensor<4x4xf32>
}

// CHECK:      sym_name = "split_even"
// CHECK:      Operation does not verify: graph.split: dim of size 10 does not split evenly into 3

// -----

// Split: num_outputs must match the number of results.
func.func @split_num_outputs(%x: tensor<10x4xf32>) -> tensor<5x4xf32> {
  %a, %b = graph.split %x {num_outputs = 3 : i64} : (tensor<10x4xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>)
  func.return %a : tensor<5x4xf32>
}

// CHECK:      sym_name = "split_num_outputs"
// CHECK:      Operation does not verify: graph.split: num_outputs is 3 but the op has 2 results

// -----

// Slice: a zero step.
func.func @slice_step(%x: tensor<10xf32>) -> tensor<?xf32> {
  %s = graph.constant dense<[0]> : tensor<1xi64>
  %e = graph.constant dense<[5]> : tensor<1xi64>
  %z = graph.constant dense<[0]> : tensor<1xi64>
  %y = graph.slice %x, %s, %e, axes %s, steps %z : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// CHECK:      sym_name = "slice_step"
// CHECK:      Operation does not verify: graph.slice: slice steps must be non-zero

// -----

// Slice: starts and ends of different lengths.
func.func @slice_lengths(%x: tensor<10x10xf32>) -> tensor<?x?xf32> {
  %s = graph.constant dense<[0, 0]> : tensor<2xi64>
  %e = graph.constant dense<[5]> : tensor<1xi64>
  %y = graph.slice %x, %s, %e : (tensor<10x10xf32>, tensor<2xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK:      sym_name = "slice_lengths"
// CHECK:      Operation does not verify: graph.slice: starts, ends and axes must have the same length

// -----

// Pad: pads needs two values per padded axis.
func.func @pad_length(%x: tensor<1x3x8x8xf32>) -> tensor<?x?x?x?xf32> {
  %p = graph.constant dense<[1, 1, 1, 1]> : tensor<4xi64>
  %y = graph.pad %x, %p : (tensor<1x3x8x8xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?xf32>
}

// CHECK:      sym_name = "pad_length"
// CHECK:      Operation does not verify: graph.pad: pads has 4 values for 4 axes

// -----

// Pad: unknown mode.
func.func @pad_mode(%x: tensor<8xf32>) -> tensor<10xf32> {
  %p = graph.constant dense<[1, 1]> : tensor<2xi64>
  %y = graph.pad %x, %p {mode = "mirror"} : (tensor<8xf32>, tensor<2xi64>) -> tensor<10xf32>
  func.return %y : tensor<10xf32>
}

// CHECK:      sym_name = "pad_mode"
// CHECK:      Operation does not verify: graph.pad: unknown pad mode 'mirror'

// -----

// Unsqueeze: repeated axes.
func.func @unsqueeze_repeat(%x: tensor<3x4xf32>) -> tensor<1x3x4x1xf32> {
  %a = graph.constant dense<[0, -4]> : tensor<2xi64>
  %y = graph.unsqueeze %x, %a : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<1x3x4x1xf32>
  func.return %y : tensor<1x3x4x1xf32>
}

// CHECK:      sym_name = "unsqueeze_repeat"
// CHECK:      Operation does not verify: graph.unsqueeze: axes [0, -4] repeat an axis

// -----

// Squeeze: a dim that is not 1.
func.func @squeeze_dim(%x: tensor<3x1xf32>) -> tensor<1xf32> {
  %a = graph.constant dense<[0]> : tensor<1xi64>
  %y = graph.squeeze %x, axes %a : (tensor<3x1xf32>, tensor<1xi64>) -> tensor<1xf32>
  func.return %y : tensor<1xf32>
}

// CHECK:      sym_name = "squeeze_dim"
// CHECK:      Operation does not verify: graph.squeeze: cannot squeeze dim 0 of size 3

// -----

// Tile: one repeat per dim.
func.func @tile_repeats(%x: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %r = graph.constant dense<[2]> : tensor<1xi64>
  %y = graph.tile %x, %r : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<6x4xf32>
  func.return %y : tensor<6x4xf32>
}

// CHECK:      sym_name = "tile_repeats"
// CHECK:      Operation does not verify: graph.tile: repeats has 1 values for rank 2

// -----

// Range: delta must be non-zero.
func.func @range_delta() -> tensor<?xi64> {
  %s = graph.constant dense<0> : tensor<i64>
  %l = graph.constant dense<10> : tensor<i64>
  %d = graph.constant dense<0> : tensor<i64>
  %y = graph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %y : tensor<?xi64>
}

// CHECK:      sym_name = "range_delta"
// CHECK:      Operation does not verify: graph.range: delta must be non-zero

// -----

// ConstantOfShape: value must hold one element.
func.func @constant_of_shape_value() -> tensor<2xf32> {
  %s = graph.constant dense<[2]> : tensor<1xi64>
  %y = graph.constant_of_shape %s {value = dense<[1.0, 2.0]> : tensor<2xf32>} : (tensor<1xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      sym_name = "constant_of_shape_value"
// CHECK:      Operation does not verify: graph.constant_of_shape: value must hold one element, got 2

// -----

// Constant: the result type is the value's type.
func.func @constant_type() -> tensor<2xf32> {
  %c = "graph.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return %c : tensor<3xf32>
}

// CHECK:      sym_name = "constant_type"
// CHECK:      Operation does not verify: graph.constant: result type tensor<3xf32> differs from the value's type tensor<2xf32>

// -----

// ReduceSum: a repeated axis.
func.func @reduce_repeat(%x: tensor<2x3xf32>) -> tensor<1x1xf32> {
  %a = graph.constant dense<[1, -1]> : tensor<2xi64>
  %y = graph.reduce_sum %x, axes %a : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x1xf32>
  func.return %y : tensor<1x1xf32>
}

// CHECK:      sym_name = "reduce_repeat"
// CHECK:      Operation does not verify: graph.reduce_sum: axes [1, -1] repeat an axis

// -----

// ArgMax: axis out of range.
func.func @arg_max_axis(%x: tensor<2x3xf32>) -> tensor<2x1xi64> {
  %y = graph.arg_max %x {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  func.return %y : tensor<2x1xi64>
}

// CHECK:      sym_name = "arg_max_axis"
// CHECK:      Operation does not verify: graph.arg_max: reduction axis -3 is out of range for rank 2

// -----

// Sum: a variadic op needs at least one operand.
func.func @sum_empty() -> tensor<f32> {
  %y = graph.sum : () -> tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK:      sym_name = "sum_empty"
// CHECK:      Operation does not verify: graph.sum: expects at least one operand

// -----

// Relu: the declared result must keep the input's shape.
func.func @relu_rank(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %y = graph.relu %x : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %y : tensor<6xf32>
}

// CHECK:      sym_name = "relu_rank"
// CHECK:      Operation does not verify: graph.relu: result #0 has type tensor<6xf32>, but the operands imply tensor<2x3xf32>

// -----

// An attribute of the wrong kind: alpha is a float.
func.func @attr_kind_float(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.leaky_relu %x {alpha = "big"} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      sym_name = "attr_kind_float"
// CHECK:      Operation does not verify: "big" should be of base attribute float

// -----

// An attribute of the wrong kind: kernel_shape is an array of i64.
func.func @attr_kind_ints(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %y = graph.max_pool %x {kernel_shape = 3 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}

// CHECK:      sym_name = "attr_kind_ints"
// CHECK:      Operation does not verify: 3 : i64 should be of base attribute array

// -----

// Operands must be ranked tensors.
func.func @operand_memref(%x: memref<2xf32>) -> tensor<2xf32> {
  %y = graph.relu %x : (memref<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      sym_name = "operand_memref"
// CHECK:      Operation does not verify: operand 'X' at position 0 does not verify:
// CHECK-NEXT: | memref<2xf32> should be of base attribute tensor

// -----

// No tensor may exceed Ember's per-tensor limit (16 GiB): 2^40 floats is 4 TiB.
func.func @too_large(%x: tensor<1xf32>) -> tensor<1099511627776xf32> {
  %shape = graph.constant dense<[1099511627776]> : tensor<1xi64>
  %y = graph.expand %x, %shape : (tensor<1xf32>, tensor<1xi64>) -> tensor<1099511627776xf32>
  func.return %y : tensor<1099511627776xf32>
}

// CHECK:      sym_name = "too_large"
// CHECK:      Operation does not verify: graph.expand: result #0: a tensor of shape 1099511627776 holds 1099511627776 elements (4096 GiB), over Ember's limit of 16 GiB per tensor

// -----

// Expand: the target shape cannot be negative.
func.func @expand_negative(%x: tensor<4xf32>) -> tensor<?x4xf32> {
  %shape = graph.constant dense<[-2, 4]> : tensor<2xi64>
  %y = graph.expand %x, %shape : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// CHECK:      sym_name = "expand_negative"
// CHECK:      Operation does not verify: graph.expand: shape must be non-negative, got [-2, 4]

// -----

// Tile: repeat counts cannot be negative.
func.func @tile_negative(%x: tensor<4xf32>) -> tensor<?xf32> {
  %repeats = graph.constant dense<[-2]> : tensor<1xi64>
  %y = graph.tile %x, %repeats : (tensor<4xf32>, tensor<1xi64>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// CHECK:      sym_name = "tile_negative"
// CHECK:      Operation does not verify: graph.tile: repeats must be non-negative, got [-2]

// -----

// MaxPool: a window lying wholly in the padding has nothing to pool.
func.func @pool_pads(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x7x7xf32> {
  %y = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x7x7xf32>
  func.return %y : tensor<1x1x7x7xf32>
}

// CHECK:      sym_name = "pool_pads"
// CHECK:      Operation does not verify: graph.max_pool: pads [2, 2, 2, 2] must be smaller than kernel_shape [2, 2]

// -----

// Pad: a reflection cannot run past the far end of its axis.
func.func @reflect_wide(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %pads = graph.constant dense<[0, 4, 0, 0]> : tensor<4xi64>
  %y = graph.pad %x, %pads {mode = "reflect"} : (tensor<2x4xf32>, tensor<4xi64>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// CHECK:      sym_name = "reflect_wide"
// CHECK:      Operation does not verify: graph.pad: reflect pads [4, 0] of axis 1 must be smaller than its extent 4

// -----

// GatherElements: indices have the rank of the data.
func.func @gather_elements_rank(%x: tensor<4x5xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  %y = graph.gather_elements %x, %i : (tensor<4x5xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      sym_name = "gather_elements_rank"
// CHECK:      Operation does not verify: graph.gather_elements: indices must have the rank of data (2), got 1

// -----

// GatherND: the tuple depth cannot exceed the data's rank past the batch dims.
func.func @gather_nd_depth(%x: tensor<2x4x5xf32>, %i: tensor<2x3x3xi64>) -> tensor<2x3xf32> {
  %y = graph.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x4x5xf32>, tensor<2x3x3xi64>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      sym_name = "gather_nd_depth"
// CHECK:      Operation does not verify: graph.gather_nd: the tuple depth (3) must be from 1 to 2

// -----

// ScatterND: updates have the shape indices[:-1] + data[depth:].
func.func @scatter_nd_updates(%x: tensor<4x5xf32>, %i: tensor<3x1xi64>, %u: tensor<3x4xf32>) -> tensor<4x5xf32> {
  %y = graph.scatter_nd %x, %i, %u : (tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x4xf32>) -> tensor<4x5xf32>
  func.return %y : tensor<4x5xf32>
}

// CHECK:      sym_name = "scatter_nd_updates"
// CHECK:      Operation does not verify: graph.scatter_nd: updates 3x4 must have shape 3x5

// -----

// ScatterElements: only ONNX's reductions.
func.func @scatter_reduction(%x: tensor<4x5xf32>, %i: tensor<2x5xi64>, %u: tensor<2x5xf32>) -> tensor<4x5xf32> {
  %y = graph.scatter_elements %x, %i, %u {reduction = "mean"} : (tensor<4x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
  func.return %y : tensor<4x5xf32>
}

// CHECK:      sym_name = "scatter_reduction"
// CHECK:      Operation does not verify: graph.scatter_elements: unknown reduction 'mean'

// -----

// Trilu: at least two dims.
func.func @trilu_rank(%x: tensor<5xf32>) -> tensor<5xf32> {
  %y = graph.trilu %x : (tensor<5xf32>) -> tensor<5xf32>
  func.return %y : tensor<5xf32>
}

// CHECK:      sym_name = "trilu_rank"
// CHECK:      Operation does not verify: graph.trilu: input must have rank >= 2, got 1

// -----

// ConvTranspose: output_padding must be smaller than the stride.
func.func @conv_transpose_output_padding(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  %y = graph.conv_transpose %x, %w {output_padding = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %y : tensor<1x2x9x9xf32>
}

// CHECK:      sym_name = "conv_transpose_output_padding"
// CHECK:      Operation does not verify: graph.conv_transpose: output_padding [2, 2] must be smaller than the stride or dilation

// -----

// QuantizeLinear: a per-axis scale has one value per element of the axis.
func.func @quantize_axis(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf32>) -> tensor<1x3x4x4xui8> {
  %q = graph.quantize_linear %x, %s {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x4x4xui8>
  func.return %q : tensor<1x3x4x4xui8>
}

// CHECK:      sym_name = "quantize_axis"
// CHECK:      Operation does not verify: graph.quantize_linear: y_scale has 4 values, axis 1 has 3

// -----

// DequantizeLinear: blocks of 4 along axis 1 of 8 need 2 scales per row.
func.func @dequantize_blocked(%x: tensor<4x8xi8>, %s: tensor<4x3xf32>) -> tensor<4x8xf32> {
  %y = graph.dequantize_linear %x, %s {block_size = 4 : i64} : (tensor<4x8xi8>, tensor<4x3xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK:      sym_name = "dequantize_blocked"
// CHECK:      Operation does not verify: graph.dequantize_linear: x_scale has 3 values on dim 1, where blocks of 4 along axis 1 need 2

// -----

// ConvInteger: a weight zero point holds one value or one per output channel.
func.func @conv_integer_points(%x: tensor<1x3x5x5xui8>, %w: tensor<4x3x3x3xi8>, %wz: tensor<3xi8>) -> tensor<1x4x3x3xi32> {
  %y = graph.conv_integer %x, %w, w_zero_point %wz : (tensor<1x3x5x5xui8>, tensor<4x3x3x3xi8>, tensor<3xi8>) -> tensor<1x4x3x3xi32>
  func.return %y : tensor<1x4x3x3xi32>
}

// CHECK:      sym_name = "conv_integer_points"
// CHECK:      Operation does not verify: graph.conv_integer: w_zero_point must hold one value or have shape 4, got 3

// -----

// MatMulInteger: a zero point has its operand's element type.
func.func @matmul_integer_point_type(%a: tensor<4x6xui8>, %b: tensor<6x5xi8>, %az: tensor<i8>) -> tensor<4x5xi32> {
  %y = graph.matmul_integer %a, %b, a_zero_point %az : (tensor<4x6xui8>, tensor<6x5xi8>, tensor<i8>) -> tensor<4x5xi32>
  func.return %y : tensor<4x5xi32>
}

// CHECK:      sym_name = "matmul_integer_point_type"
// CHECK:      Operation does not verify: graph.matmul_integer: a_zero_point must have A's element type ui8, got i8

// -----

// MatMulInteger: the operands are 8-bit integers.
func.func @matmul_integer_wide(%a: tensor<4x6xi32>, %b: tensor<6x5xi8>) -> tensor<4x5xi32> {
  %y = graph.matmul_integer %a, %b : (tensor<4x6xi32>, tensor<6x5xi8>) -> tensor<4x5xi32>
  func.return %y : tensor<4x5xi32>
}

// CHECK:      sym_name = "matmul_integer_wide"
// CHECK:      Operation does not verify: graph.matmul_integer: A must be an int8 or uint8 tensor, got i32

// -----

// DynamicQuantizeLinear: x is float32.
func.func @dynamic_quantize_f16(%x: tensor<4xf16>) -> (tensor<4xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = graph.dynamic_quantize_linear %x : (tensor<4xf16>) -> (tensor<4xui8>, tensor<f32>, tensor<ui8>)
  func.return %y, %s, %z : tensor<4xui8>, tensor<f32>, tensor<ui8>
}

// CHECK:      sym_name = "dynamic_quantize_f16"
// CHECK:      Operation does not verify: graph.dynamic_quantize_linear: x must be a float32 tensor, got f16
