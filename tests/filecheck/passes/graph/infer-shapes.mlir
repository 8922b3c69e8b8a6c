// RUN: ember-opt %s -p graph-infer-shapes --split-input-file | filecheck %s

// A changed input type flows through to every result and the signature.
func.func @batch(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<?x16x30x30xf32> {
  %y = graph.conv %x, %w : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x30x30xf32>
  %r = graph.relu %y : (tensor<?x16x30x30xf32>) -> tensor<?x16x30x30xf32>
  func.return %r : tensor<?x16x30x30xf32>
}

// CHECK-LABEL: func.func @batch
// CHECK-SAME:    -> tensor<8x16x30x30xf32>
// CHECK:         %y = graph.conv %x, %w : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf32>
// CHECK-NEXT:    %r = graph.relu %y : (tensor<8x16x30x30xf32>) -> tensor<8x16x30x30xf32>

// -----

// Shape arithmetic on constants is evaluated, so Reshape gets a static type.
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = graph.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = graph.constant dense<0> : tensor<i64>
  %n = graph.gather %s, %i : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = graph.constant dense<0> : tensor<1xi64>
  %n1 = graph.unsqueeze %n, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m = graph.constant dense<-1> : tensor<1xi64>
  %shape = graph.concat %n1, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @shape_chain
// CHECK-SAME:    -> tensor<2x12xf32>
// CHECK:         graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>

// -----

// An unknown dim stays unknown: the rule never guesses.
func.func @dynamic(%x: tensor<?x4xf32>, %y: tensor<1x4xf32>) -> tensor<?x4xf32> {
  %z = graph.add %x, %y : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @dynamic
// CHECK:         graph.add %x, %y : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>

// -----

// Broadcasting: rank extension, size-1 dims stretched, and a ? dim facing a known
// dim takes the known one.
func.func @broadcast(%x: tensor<8x1x5xf32>, %y: tensor<3x1xf32>, %z: tensor<?x1xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xi1>) {
  %a = graph.add %x, %y : (tensor<8x1x5xf32>, tensor<3x1xf32>) -> tensor<?x?x?xf32>
  %b = graph.mul %a, %z : (tensor<?x?x?xf32>, tensor<?x1xf32>) -> tensor<?x?x?xf32>
  %c = graph.greater %b, %x : (tensor<?x?x?xf32>, tensor<8x1x5xf32>) -> tensor<?x?x?xi1>
  func.return %b, %c : tensor<?x?x?xf32>, tensor<?x?x?xi1>
}

// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:    -> (tensor<8x3x5xf32>, tensor<8x3x5xi1>)
// CHECK-NEXT:    %a = graph.add %x, %y : (tensor<8x1x5xf32>, tensor<3x1xf32>) -> tensor<8x3x5xf32>
// CHECK-NEXT:    %b = graph.mul %a, %z : (tensor<8x3x5xf32>, tensor<?x1xf32>) -> tensor<8x3x5xf32>
// CHECK-NEXT:    %c = graph.greater %b, %x : (tensor<8x3x5xf32>, tensor<8x1x5xf32>) -> tensor<8x3x5xi1>
// CHECK-NEXT:    func.return %b, %c : tensor<8x3x5xf32>, tensor<8x3x5xi1>

// -----

// Conv with strides, pads and dilations: (224 + 3 + 3 - (2*(7-1) + 1)) / 2 + 1 = 109.
func.func @conv_window(%x: tensor<2x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>) -> tensor<?x?x?x?xf32> {
  %y = graph.conv %x, %w, B %b {dilations = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<2x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @conv_window(
// CHECK-SAME:    -> tensor<2x64x109x109xf32>
// CHECK-NEXT:    %y = graph.conv %x, %w, B %b {dilations = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<2x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<2x64x109x109xf32>
// CHECK-NEXT:    func.return %y : tensor<2x64x109x109xf32>

// -----

// SAME_UPPER: the output is ceil(input / stride), 113 / 2 -> 57; asymmetric pads.
func.func @conv_same_upper(%x: tensor<1x32x113x113xf32>, %w: tensor<32x1x3x3xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %y = graph.conv %x, %w {auto_pad = "SAME_UPPER", group = 32 : i64, strides = array<i64: 2, 2>} : (tensor<1x32x113x113xf32>, tensor<32x1x3x3xf32>) -> tensor<?x?x?x?xf32>
  %z = graph.conv %x, %w {group = 32 : i64, pads = array<i64: 0, 1, 2, 3>} : (tensor<1x32x113x113xf32>, tensor<32x1x3x3xf32>) -> tensor<?x?x?x?xf32>
  func.return %y, %z : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @conv_same_upper(
// CHECK-SAME:    -> (tensor<1x32x57x57xf32>, tensor<1x32x113x115xf32>)
// CHECK-NEXT:    %y = graph.conv %x, %w {auto_pad = "SAME_UPPER", group = 32 : i64, strides = array<i64: 2, 2>} : (tensor<1x32x113x113xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x57x57xf32>
// CHECK-NEXT:    %z = graph.conv %x, %w {group = 32 : i64, pads = array<i64: 0, 1, 2, 3>} : (tensor<1x32x113x113xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x113x115xf32>
// CHECK-NEXT:    func.return %y, %z : tensor<1x32x57x57xf32>, tensor<1x32x113x115xf32>

// -----

// MaxPool with ceil_mode: 112 -> ceil((112 - 3) / 2) + 1 = 56 (55 without it).
func.func @max_pool_ceil(%x: tensor<1x64x112x112xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %c = graph.max_pool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<?x?x?x?xf32>
  %f = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<?x?x?x?xf32>
  func.return %c, %f : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @max_pool_ceil(
// CHECK-SAME:    -> (tensor<1x64x56x56xf32>, tensor<1x64x55x55xf32>)
// CHECK-NEXT:    %c = graph.max_pool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %f = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x55x55xf32>
// CHECK-NEXT:    func.return %c, %f : tensor<1x64x56x56xf32>, tensor<1x64x55x55xf32>

// -----

// Gemm with transB: A is MxK, B is NxK.
func.func @gemm_trans_b(%a: tensor<4x2048xf32>, %b: tensor<1000x2048xf32>, %c: tensor<1000xf32>) -> tensor<?x?xf32> {
  %y = graph.gemm %a, %b, C %c {transB = 1 : i64} : (tensor<4x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @gemm_trans_b(
// CHECK-SAME:    -> tensor<4x1000xf32>
// CHECK-NEXT:    %y = graph.gemm %a, %b, C %c {transB = 1 : i64} : (tensor<4x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<4x1000xf32>
// CHECK-NEXT:    func.return %y : tensor<4x1000xf32>

// -----

// MatMul: broadcast batch dims, and 1-D operands (the promoted dim is dropped).
func.func @matmul_forms(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>, %v: tensor<4xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<f32>) {
  %ab = graph.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<?x?x?x?xf32>
  %av = graph.matmul %a, %v : (tensor<2x1x3x4xf32>, tensor<4xf32>) -> tensor<?x?x?xf32>
  %vb = graph.matmul %v, %b : (tensor<4xf32>, tensor<5x4x6xf32>) -> tensor<?x?xf32>
  %vv = graph.matmul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  func.return %ab, %vb, %av, %vv : tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @matmul_forms(
// CHECK-SAME:    -> (tensor<2x5x3x6xf32>, tensor<5x6xf32>, tensor<2x1x3xf32>, tensor<f32>)
// CHECK-NEXT:    %ab = graph.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
// CHECK-NEXT:    %av = graph.matmul %a, %v : (tensor<2x1x3x4xf32>, tensor<4xf32>) -> tensor<2x1x3xf32>
// CHECK-NEXT:    %vb = graph.matmul %v, %b : (tensor<4xf32>, tensor<5x4x6xf32>) -> tensor<5x6xf32>
// CHECK-NEXT:    %vv = graph.matmul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT:    func.return %ab, %vb, %av, %vv : tensor<2x5x3x6xf32>, tensor<5x6xf32>, tensor<2x1x3xf32>, tensor<f32>

// -----

// Flatten at the default axis 1, at 0 and at -1; a ? dim makes its side unknown.
func.func @flatten(%x: tensor<2x3x4x5xf32>, %d: tensor<?x3x4xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %a = graph.flatten %x : (tensor<2x3x4x5xf32>) -> tensor<?x?xf32>
  %b = graph.flatten %x {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<?x?xf32>
  %c = graph.flatten %x {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<?x?xf32>
  %e = graph.flatten %d {axis = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<?x?xf32>
  func.return %a, %b, %c, %e : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @flatten(
// CHECK-SAME:    -> (tensor<2x60xf32>, tensor<1x120xf32>, tensor<24x5xf32>, tensor<?x12xf32>)
// CHECK-NEXT:    %a = graph.flatten %x : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
// CHECK-NEXT:    %b = graph.flatten %x {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<1x120xf32>
// CHECK-NEXT:    %c = graph.flatten %x {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<24x5xf32>
// CHECK-NEXT:    %e = graph.flatten %d {axis = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
// CHECK-NEXT:    func.return %a, %b, %c, %e : tensor<2x60xf32>, tensor<1x120xf32>, tensor<24x5xf32>, tensor<?x12xf32>

// -----

// Split into equal parts, into explicit sizes, and with an uneven num_outputs.
func.func @split(%x: tensor<2x12x5xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %a:3 = graph.split %x {axis = 1 : i64} : (tensor<2x12x5xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>)
  %s = graph.constant dense<[2, 10]> : tensor<2xi64>
  %b:2 = graph.split %x, split %s {axis = -2 : i64} : (tensor<2x12x5xf32>, tensor<2xi64>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>)
  %c:2 = graph.split %x {axis = 2 : i64, num_outputs = 2 : i64} : (tensor<2x12x5xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>)
  func.return %a#0, %b#1 : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @split(
// CHECK-SAME:    -> (tensor<2x4x5xf32>, tensor<2x10x5xf32>)
// CHECK-NEXT:    %a, %a_1, %a_2 = graph.split %x {axis = 1 : i64} : (tensor<2x12x5xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<2x4x5xf32>)
// CHECK-NEXT:    %s = graph.constant dense<[2, 10]> : tensor<2xi64>
// CHECK-NEXT:    %b, %b_1 = graph.split %x, split %s {axis = -2 : i64} : (tensor<2x12x5xf32>, tensor<2xi64>) -> (tensor<2x2x5xf32>, tensor<2x10x5xf32>)
// CHECK-NEXT:    %c, %c_1 = graph.split %x {axis = 2 : i64, num_outputs = 2 : i64} : (tensor<2x12x5xf32>) -> (tensor<2x12x3xf32>, tensor<2x12x2xf32>)
// CHECK-NEXT:    func.return %a, %b_1 : tensor<2x4x5xf32>, tensor<2x10x5xf32>

// -----

// Slice with negative steps: reverse a whole axis, and every second element backwards.
func.func @slice_negative_steps(%x: tensor<10x20xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %start = graph.constant dense<[-1]> : tensor<1xi64>
  %end = graph.constant dense<[-9223372036854775807]> : tensor<1xi64>
  %axis = graph.constant dense<[1]> : tensor<1xi64>
  %minus1 = graph.constant dense<[-1]> : tensor<1xi64>
  %rev = graph.slice %x, %start, %end, axes %axis, steps %minus1 : (tensor<10x20xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %starts = graph.constant dense<[8, 15]> : tensor<2xi64>
  %ends = graph.constant dense<[1, 0]> : tensor<2xi64>
  %steps = graph.constant dense<[-2, -4]> : tensor<2xi64>
  %odd = graph.slice %x, %starts, %ends, steps %steps : (tensor<10x20xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %rev, %odd : tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @slice_negative_steps(
// CHECK-SAME:    -> (tensor<10x20xf32>, tensor<4x4xf32>)
// CHECK-NEXT:    %start = graph.constant dense<-1> : tensor<1xi64>
// CHECK-NEXT:    %end = graph.constant dense<-9223372036854775807> : tensor<1xi64>
// CHECK-NEXT:    %axis = graph.constant dense<1> : tensor<1xi64>
// CHECK-NEXT:    %minus1 = graph.constant dense<-1> : tensor<1xi64>
// CHECK-NEXT:    %rev = graph.slice %x, %start, %end, axes %axis, steps %minus1 : (tensor<10x20xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<10x20xf32>
// CHECK-NEXT:    %starts = graph.constant dense<[8, 15]> : tensor<2xi64>
// CHECK-NEXT:    %ends = graph.constant dense<[1, 0]> : tensor<2xi64>
// CHECK-NEXT:    %steps = graph.constant dense<[-2, -4]> : tensor<2xi64>
// CHECK-NEXT:    %odd = graph.slice %x, %starts, %ends, steps %steps : (tensor<10x20xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %rev, %odd : tensor<10x20xf32>, tensor<4x4xf32>

// -----

// Squeeze given axes or all size-1 dims; Unsqueeze with negative axes.
func.func @squeeze_unsqueeze(%x: tensor<1x3x1x5xf32>) -> (tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?x?x?xf32>) {
  %all = graph.squeeze %x : (tensor<1x3x1x5xf32>) -> tensor<?x?xf32>
  %a0 = graph.constant dense<[0]> : tensor<1xi64>
  %some = graph.squeeze %x, axes %a0 : (tensor<1x3x1x5xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %a = graph.constant dense<[-1, 1]> : tensor<2xi64>
  %more = graph.unsqueeze %x, %a : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<?x?x?x?x?x?xf32>
  func.return %all, %some, %more : tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?x?x?xf32>
}

// CHECK-LABEL: func.func @squeeze_unsqueeze(
// CHECK-SAME:    -> (tensor<3x5xf32>, tensor<3x1x5xf32>, tensor<1x1x3x1x5x1xf32>)
// CHECK-NEXT:    %all = graph.squeeze %x : (tensor<1x3x1x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %a0 = graph.constant dense<0> : tensor<1xi64>
// CHECK-NEXT:    %some = graph.squeeze %x, axes %a0 : (tensor<1x3x1x5xf32>, tensor<1xi64>) -> tensor<3x1x5xf32>
// CHECK-NEXT:    %a = graph.constant dense<[-1, 1]> : tensor<2xi64>
// CHECK-NEXT:    %more = graph.unsqueeze %x, %a : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<1x1x3x1x5x1xf32>
// CHECK-NEXT:    func.return %all, %some, %more : tensor<3x5xf32>, tensor<3x1x5xf32>, tensor<1x1x3x1x5x1xf32>

// -----

// Reductions with keepdims 1 and 0, all axes, and ArgMax.
func.func @reductions(%x: tensor<4x6x8xf32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?xi64>) {
  %axes = graph.constant dense<[0, -1]> : tensor<2xi64>
  %keep = graph.reduce_mean %x, axes %axes : (tensor<4x6x8xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
  %one = graph.constant dense<[1]> : tensor<1xi64>
  %drop = graph.reduce_sum %x, axes %one {keepdims = 0 : i64} : (tensor<4x6x8xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %all = graph.reduce_max %x {keepdims = 0 : i64} : (tensor<4x6x8xf32>) -> tensor<f32>
  %arg = graph.arg_max %x {axis = 2 : i64, keepdims = 0 : i64} : (tensor<4x6x8xf32>) -> tensor<?x?xi64>
  func.return %keep, %drop, %all, %arg : tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?xi64>
}

// CHECK-LABEL: func.func @reductions(
// CHECK-SAME:    -> (tensor<1x6x1xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x6xi64>)
// CHECK-NEXT:    %axes = graph.constant dense<[0, -1]> : tensor<2xi64>
// CHECK-NEXT:    %keep = graph.reduce_mean %x, axes %axes : (tensor<4x6x8xf32>, tensor<2xi64>) -> tensor<1x6x1xf32>
// CHECK-NEXT:    %one = graph.constant dense<1> : tensor<1xi64>
// CHECK-NEXT:    %drop = graph.reduce_sum %x, axes %one {keepdims = 0 : i64} : (tensor<4x6x8xf32>, tensor<1xi64>) -> tensor<4x8xf32>
// CHECK-NEXT:    %all = graph.reduce_max %x {keepdims = 0 : i64} : (tensor<4x6x8xf32>) -> tensor<f32>
// CHECK-NEXT:    %arg = graph.arg_max %x {axis = 2 : i64, keepdims = 0 : i64} : (tensor<4x6x8xf32>) -> tensor<4x6xi64>
// CHECK-NEXT:    func.return %keep, %drop, %all, %arg : tensor<1x6x1xf32>, tensor<4x8xf32>, tensor<f32>, tensor<4x6xi64>

// -----

// Concat sums the axis; a ? on the axis makes the sum unknown, elsewhere a known dim wins.
func.func @concat(%a: tensor<1x64x28x28xf32>, %b: tensor<1x32x28x28xf32>, %c: tensor<?x16x?x28xf32>, %d: tensor<1x16x5x28xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %x = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<?x16x?x28xf32>) -> tensor<?x?x?x?xf32>
  %y = graph.concat %c, %d {axis = -2 : i64} : (tensor<?x16x?x28xf32>, tensor<1x16x5x28xf32>) -> tensor<?x?x?x?xf32>
  func.return %x, %y : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    -> (tensor<1x112x28x28xf32>, tensor<1x16x?x28xf32>)
// CHECK-NEXT:    %x = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<?x16x?x28xf32>) -> tensor<1x112x28x28xf32>
// CHECK-NEXT:    %y = graph.concat %c, %d {axis = -2 : i64} : (tensor<?x16x?x28xf32>, tensor<1x16x5x28xf32>) -> tensor<1x16x?x28xf32>
// CHECK-NEXT:    func.return %x, %y : tensor<1x112x28x28xf32>, tensor<1x16x?x28xf32>

// -----

// Transpose: an explicit perm, and the default reversal.
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %p = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<?x?x?xf32>
  %r = graph.transpose %x : (tensor<2x3x4xf32>) -> tensor<?x?x?xf32>
  func.return %p, %r : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    -> (tensor<3x4x2xf32>, tensor<4x3x2xf32>)
// CHECK-NEXT:    %p = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT:    %r = graph.transpose %x : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:    func.return %p, %r : tensor<3x4x2xf32>, tensor<4x3x2xf32>

// -----

// Gather: the indices' shape replaces the gathered axis.
func.func @gather(%table: tensor<1000x64xf32>, %ids: tensor<4x7xi64>, %x: tensor<2x5x3xf32>, %i: tensor<i32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %e = graph.gather %table, %ids : (tensor<1000x64xf32>, tensor<4x7xi64>) -> tensor<?x?x?xf32>
  %s = graph.gather %x, %i {axis = -2 : i64} : (tensor<2x5x3xf32>, tensor<i32>) -> tensor<?x?xf32>
  func.return %e, %s : tensor<?x?x?xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @gather(
// CHECK-SAME:    -> (tensor<4x7x64xf32>, tensor<2x3xf32>)
// CHECK-NEXT:    %e = graph.gather %table, %ids : (tensor<1000x64xf32>, tensor<4x7xi64>) -> tensor<4x7x64xf32>
// CHECK-NEXT:    %s = graph.gather %x, %i {axis = -2 : i64} : (tensor<2x5x3xf32>, tensor<i32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %e, %s : tensor<4x7x64xf32>, tensor<2x3xf32>

// -----

// Pad: begins then ends for every axis, or for the given axes; negative pads crop.
func.func @pad(%x: tensor<1x3x32x32xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %pads = graph.constant dense<[0, 0, 1, 2, 0, 0, 3, -4]> : tensor<8xi64>
  %a = graph.pad %x, %pads : (tensor<1x3x32x32xf32>, tensor<8xi64>) -> tensor<?x?x?x?xf32>
  %p = graph.constant dense<[2, 2]> : tensor<2xi64>
  %axes = graph.constant dense<[-1]> : tensor<1xi64>
  %b = graph.pad %x, %p, axes %axes {mode = "reflect"} : (tensor<1x3x32x32xf32>, tensor<2xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
  func.return %a, %b : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @pad(
// CHECK-SAME:    -> (tensor<1x3x36x30xf32>, tensor<1x3x32x36xf32>)
// CHECK-NEXT:    %pads = graph.constant dense<[0, 0, 1, 2, 0, 0, 3, -4]> : tensor<8xi64>
// CHECK-NEXT:    %a = graph.pad %x, %pads : (tensor<1x3x32x32xf32>, tensor<8xi64>) -> tensor<1x3x36x30xf32>
// CHECK-NEXT:    %p = graph.constant dense<2> : tensor<2xi64>
// CHECK-NEXT:    %axes = graph.constant dense<-1> : tensor<1xi64>
// CHECK-NEXT:    %b = graph.pad %x, %p, axes %axes {mode = "reflect"} : (tensor<1x3x32x32xf32>, tensor<2xi64>, tensor<1xi64>) -> tensor<1x3x32x36xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<1x3x36x30xf32>, tensor<1x3x32x36xf32>

// -----

// Expand broadcasts in both directions.
func.func @expand(%x: tensor<3x1xf32>) -> tensor<?x?x?xf32> {
  %s = graph.constant dense<[2, 1, 6]> : tensor<3xi64>
  %y = graph.expand %x, %s : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @expand(
// CHECK-SAME:    -> tensor<2x3x6xf32>
// CHECK-NEXT:    %s = graph.constant dense<[2, 1, 6]> : tensor<3xi64>
// CHECK-NEXT:    %y = graph.expand %x, %s : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x6xf32>
// CHECK-NEXT:    func.return %y : tensor<2x3x6xf32>

// -----

// ConstantOfShape fed by a constant, and by the Shape of an input (evaluated at compile time).
func.func @constant_of_shape(%x: tensor<4x7xf32>) -> (tensor<?x?x?xi64>, tensor<?x?xf32>) {
  %s = graph.constant dense<[2, 3, 5]> : tensor<3xi64>
  %a = graph.constant_of_shape %s {value = dense<7> : tensor<1xi64>} : (tensor<3xi64>) -> tensor<?x?x?xi64>
  %shape = graph.shape %x : (tensor<4x7xf32>) -> tensor<2xi64>
  %b = graph.constant_of_shape %shape : (tensor<2xi64>) -> tensor<?x?xf32>
  func.return %a, %b : tensor<?x?x?xi64>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @constant_of_shape(
// CHECK-SAME:    -> (tensor<2x3x5xi64>, tensor<4x7xf32>)
// CHECK-NEXT:    %s = graph.constant dense<[2, 3, 5]> : tensor<3xi64>
// CHECK-NEXT:    %a = graph.constant_of_shape %s {value = dense<7> : tensor<1xi64>} : (tensor<3xi64>) -> tensor<2x3x5xi64>
// CHECK-NEXT:    %shape = graph.shape %x : (tensor<4x7xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %b = graph.constant_of_shape %shape : (tensor<2xi64>) -> tensor<4x7xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<2x3x5xi64>, tensor<4x7xf32>

// -----

// Tile and Range with constant operands.
func.func @tile_range(%x: tensor<2x3xf32>) -> (tensor<?x?xf32>, tensor<?xi64>) {
  %r = graph.constant dense<[3, 2]> : tensor<2xi64>
  %t = graph.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %start = graph.constant dense<10> : tensor<i64>
  %limit = graph.constant dense<-3> : tensor<i64>
  %delta = graph.constant dense<-4> : tensor<i64>
  %range = graph.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %t, %range : tensor<?x?xf32>, tensor<?xi64>
}

// CHECK-LABEL: func.func @tile_range(
// CHECK-SAME:    -> (tensor<6x6xf32>, tensor<4xi64>)
// CHECK-NEXT:    %r = graph.constant dense<[3, 2]> : tensor<2xi64>
// CHECK-NEXT:    %t = graph.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<6x6xf32>
// CHECK-NEXT:    %start = graph.constant dense<10> : tensor<i64>
// CHECK-NEXT:    %limit = graph.constant dense<-3> : tensor<i64>
// CHECK-NEXT:    %delta = graph.constant dense<-4> : tensor<i64>
// CHECK-NEXT:    %range = graph.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
// CHECK-NEXT:    func.return %t, %range : tensor<6x6xf32>, tensor<4xi64>
