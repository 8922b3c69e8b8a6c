// RUN: ember-opt %s -p graph-layout --split-input-file | filecheck %s
// RUN: ember-opt %s -p "graph-layout{layout=NHWC}" --split-input-file | filecheck %s --check-prefix=NHWC
// RUN: ember-opt %s -p "graph-layout{layout=NCHWc block=8},graph-fold-constants" --split-input-file | filecheck %s --check-prefix=FOLD

// conv -> relu -> conv -> relu: the input is converted once, each weight and
// bias once (constants, folded later), and only the returned value back.
func.func @chain(%x: tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w1 = graph.constant dense<1.0> : tensor<16x16x3x3xf32>
  %b1 = graph.constant dense<0.5> : tensor<16xf32>
  %w2 = graph.constant dense<2.0> : tensor<32x16x1x1xf32>
  %c1 = graph.conv %x, %w1, B %b1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %r1 = graph.relu %c1 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %c2 = graph.conv %r1, %w2 : (tensor<1x16x8x8xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x8x8xf32>
  %r2 = graph.relu %c2 : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  func.return %r2 : tensor<1x32x8x8xf32>
}

// CHECK-LABEL: func.func @chain
// CHECK:         %x_nchw8c = graph.layout_transform %x {source = "NCHW", target = "NCHW8c"} : (tensor<1x16x8x8xf32>) -> tensor<1x2x8x8x8xf32>
// CHECK-NEXT:    %w1_oihw8i8o = graph.layout_transform %w1 {source = "OIHW", target = "OIHW8i8o"} : (tensor<16x16x3x3xf32>) -> tensor<2x2x3x3x8x8xf32>
// CHECK-NEXT:    %b1_o8o = graph.layout_transform %b1 {source = "O", target = "O8o"} : (tensor<16xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %c1 = graph.conv_nchwc %x_nchw8c, %w1_oihw8i8o, B %b1_o8o {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8x8xf32>, tensor<2x2x3x3x8x8xf32>, tensor<2x8xf32>) -> tensor<1x2x8x8x8xf32>
// CHECK-NEXT:    %r1 = graph.relu %c1 : (tensor<1x2x8x8x8xf32>) -> tensor<1x2x8x8x8xf32>
// CHECK-NEXT:    %w2_oihw8i8o = graph.layout_transform %w2 {source = "OIHW", target = "OIHW8i8o"}
// CHECK-NEXT:    %c2 = graph.conv_nchwc %r1, %w2_oihw8i8o : (tensor<1x2x8x8x8xf32>, tensor<4x2x1x1x8x8xf32>) -> tensor<1x4x8x8x8xf32>
// CHECK-NEXT:    %r2 = graph.relu %c2 : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x8x8x8xf32>
// CHECK-NEXT:    %r2_nchw = graph.layout_transform %r2 {source = "NCHW8c", target = "NCHW"} : (tensor<1x4x8x8x8xf32>) -> tensor<1x32x8x8xf32>
// CHECK-NEXT:    func.return %r2_nchw

// NHWC-LABEL: func.func @chain
// NHWC:         %x_nhwc = graph.layout_transform %x {source = "NCHW", target = "NHWC"} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32>
// NHWC-NEXT:    %w1_hwio = graph.layout_transform %w1 {source = "OIHW", target = "HWIO"} : (tensor<16x16x3x3xf32>) -> tensor<3x3x16x16xf32>
// NHWC-NEXT:    %c1 = graph.conv_nhwc %x_nhwc, %w1_hwio, B %b1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf32>, tensor<3x3x16x16xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
// NHWC-NEXT:    %r1 = graph.relu %c1 : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// NHWC-NEXT:    %w2_hwio = graph.layout_transform %w2 {source = "OIHW", target = "HWIO"}
// NHWC-NEXT:    %c2 = graph.conv_nhwc %r1, %w2_hwio : (tensor<1x8x8x16xf32>, tensor<1x1x16x32xf32>) -> tensor<1x8x8x32xf32>
// NHWC-NEXT:    %r2 = graph.relu %c2 : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
// NHWC-NEXT:    %r2_nchw = graph.layout_transform %r2 {source = "NHWC", target = "NCHW"} : (tensor<1x8x8x32xf32>) -> tensor<1x32x8x8xf32>
// NHWC-NEXT:    func.return %r2_nchw

// FOLD-LABEL: func.func @chain
// FOLD-NEXT:    %x_nchw8c = graph.layout_transform %x
// FOLD-NEXT:    %w1_oihw8i8o = graph.constant dense<1.000000e+00> : tensor<2x2x3x3x8x8xf32>
// FOLD-NEXT:    %b1_o8o = graph.constant dense<5.000000e-01> : tensor<2x8xf32>
// FOLD-NEXT:    %c1 = graph.conv_nchwc
// FOLD-NEXT:    %r1 = graph.relu
// FOLD-NEXT:    %w2_oihw8i8o = graph.constant dense<2.000000e+00> : tensor<4x2x1x1x8x8xf32>
// FOLD-NEXT:    %c2 = graph.conv_nchwc
// FOLD-NEXT:    %r2 = graph.relu
// FOLD-NEXT:    %r2_nchw = graph.layout_transform %r2
// FOLD-NEXT:    func.return %r2_nchw

// -----


// A value read by two convolutions and by an op that stays NCHW (Softmax) is
// converted once; the laid-out conv results meet in a residual Sum; a
// per-channel constant scale ([C, 1, 1]) is converted as a constant, a
// scalar bias stays; the Sum is converted back for the Softmax.
func.func @shared(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %w1 = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %w2 = graph.constant dense<2.0> : tensor<8x8x3x3xf32>
  %scale = graph.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]]> : tensor<8x1x1xf32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %a = graph.conv %x, %w1 : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %b = graph.conv %x, %w2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  %s = graph.mul %b, %scale : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %t = graph.add %s, %half : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %sum = graph.sum %a, %t : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %p = graph.softmax %sum {axis = 1 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %q = graph.softmax %x {axis = 1 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %p, %q : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// CHECK-LABEL: func.func @shared
// CHECK:         %x_nchw8c = graph.layout_transform %x {source = "NCHW", target = "NCHW8c"}
// CHECK-NOT:     graph.layout_transform %x
// CHECK:         %a = graph.conv_nchwc %x_nchw8c,
// CHECK:         %b = graph.conv_nchwc %x_nchw8c,
// CHECK-NEXT:    %[[SCALE:.*]] = graph.constant dense<{{.*}}> : tensor<1x8x1x1xf32>
// CHECK-NEXT:    %scale_nchw8c = graph.layout_transform %[[SCALE]] {source = "NCHW", target = "NCHW8c"} : (tensor<1x8x1x1xf32>) -> tensor<1x1x1x1x8xf32>
// CHECK-NEXT:    %s = graph.mul %b, %scale_nchw8c : (tensor<1x1x4x4x8xf32>, tensor<1x1x1x1x8xf32>) -> tensor<1x1x4x4x8xf32>
// CHECK-NEXT:    %t = graph.add %s, %half : (tensor<1x1x4x4x8xf32>, tensor<f32>) -> tensor<1x1x4x4x8xf32>
// CHECK-NEXT:    %sum = graph.sum %a, %t : (tensor<1x1x4x4x8xf32>, tensor<1x1x4x4x8xf32>) -> tensor<1x1x4x4x8xf32>
// CHECK-NEXT:    %sum_nchw = graph.layout_transform %sum {source = "NCHW8c", target = "NCHW"}
// CHECK-NEXT:    %p = graph.softmax %sum_nchw {axis = 1 : i64}
// CHECK-NEXT:    %q = graph.softmax %x {axis = 1 : i64}
// CHECK-NEXT:    func.return %p, %q

// -----


// Pools and a channel Concat stay in the layout (NCHWc concatenates whole
// blocks along C/c); the global pool does not.
func.func @fire(%x: tensor<1x8x9x9xf32>) -> tensor<1x32x1x1xf32> {
  %w1 = graph.constant dense<1.0> : tensor<16x8x1x1xf32>
  %w2 = graph.constant dense<2.0> : tensor<16x8x3x3xf32>
  %m = graph.conv %x, %w1 : (tensor<1x8x9x9xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x9x9xf32>
  %p = graph.max_pool %m {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x16x9x9xf32>) -> tensor<1x16x4x4xf32>
  %a = graph.average_pool %p {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %pooled = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x8x9x9xf32>) -> tensor<1x8x4x4xf32>
  %e = graph.conv %pooled, %w2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  %cat = graph.concat %a, %e {axis = 1 : i64} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x32x4x4xf32>
  %g = graph.global_average_pool %cat : (tensor<1x32x4x4xf32>) -> tensor<1x32x1x1xf32>
  func.return %g : tensor<1x32x1x1xf32>
}

// CHECK-LABEL: func.func @fire
// CHECK:         %x_nchw8c = graph.layout_transform %x
// CHECK:         %m = graph.conv_nchwc %x_nchw8c,
// CHECK-NEXT:    %p = graph.max_pool_nchwc %m {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x9x9x8xf32>) -> tensor<1x2x4x4x8xf32>
// CHECK-NEXT:    %a = graph.average_pool_nchwc %p {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x2x4x4x8xf32>) -> tensor<1x2x4x4x8xf32>
// CHECK-NEXT:    %pooled = graph.max_pool_nchwc %x_nchw8c
// CHECK:         %e = graph.conv_nchwc %pooled,
// CHECK-NEXT:    %cat = graph.concat %a, %e {axis = 1 : i64} : (tensor<1x2x4x4x8xf32>, tensor<1x2x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
// CHECK-NEXT:    %cat_nchw = graph.layout_transform %cat {source = "NCHW8c", target = "NCHW"}
// CHECK-NEXT:    %g = graph.global_average_pool %cat_nchw
// CHECK-NEXT:    func.return %g

// NHWC-LABEL: func.func @fire
// NHWC:         %p = graph.max_pool_nhwc %m {{.*}} : (tensor<1x9x9x16xf32>) -> tensor<1x4x4x16xf32>
// NHWC:         %cat = graph.concat %a, %e {axis = 3 : i64} : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x32xf32>
// NHWC-NEXT:    %cat_nchw = graph.layout_transform %cat {source = "NHWC", target = "NCHW"}

// -----

// A MaxPool that gives its Indices (flat positions in the NCHW input) stays
// in NCHW: its input is converted back.
func.func @max_pool_indices(%x: tensor<1x8x4x4xf32>) -> (tensor<1x16x2x2xf32>, tensor<1x16x2x2xi64>) {
  %w = graph.constant dense<1.0> : tensor<16x8x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
  %y, %i = graph.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x4x4xf32>) -> (tensor<1x16x2x2xf32>, tensor<1x16x2x2xi64>)
  func.return %y, %i : tensor<1x16x2x2xf32>, tensor<1x16x2x2xi64>
}

// CHECK-LABEL: func.func @max_pool_indices
// CHECK:         %c = graph.conv_nchwc
// CHECK-NEXT:    %c_nchw = graph.layout_transform %c {source = "NCHW8c", target = "NCHW"}
// CHECK-NEXT:    %y, %i = graph.max_pool %c_nchw

// NHWC-LABEL: func.func @max_pool_indices
// NHWC:         %c_nchw = graph.layout_transform %c {source = "NHWC", target = "NCHW"}
// NHWC-NEXT:    %y, %i = graph.max_pool %c_nchw

// -----


// Conversions that undo each other cancel, in the input as in the output.
func.func @round_trip(%x: tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32> {
  %b = graph.layout_transform %x {source = "NCHW", target = "NCHW8c"} : (tensor<1x16x2x2xf32>) -> tensor<1x2x2x2x8xf32>
  %y = graph.layout_transform %b {source = "NCHW8c", target = "NCHW"} : (tensor<1x2x2x2x8xf32>) -> tensor<1x16x2x2xf32>
  %r = graph.relu %y : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  func.return %r : tensor<1x16x2x2xf32>
}

// CHECK-LABEL: func.func @round_trip
// CHECK-NEXT:    %r = graph.relu %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
// CHECK-NEXT:    func.return %r

// -----


// Must not fire (NCHWc): 12 channels are not whole blocks of 8; an integer
// convolution; a grouped convolution; a 1-D convolution; a dynamic batch.
// NHWC takes the 12-channel and the grouped convolutions.
func.func @keep(%x: tensor<1x12x4x4xf32>, %i: tensor<1x8x4x4xi32>, %g: tensor<1x16x4x4xf32>, %s: tensor<1x8x10xf32>, %d: tensor<?x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xi32>, tensor<1x16x4x4xf32>, tensor<1x8x10xf32>, tensor<?x8x4x4xf32>) {
  %w = graph.constant dense<1.0> : tensor<8x12x1x1xf32>
  %wi = graph.constant dense<1> : tensor<8x8x1x1xi32>
  %wg = graph.constant dense<1.0> : tensor<16x8x1x1xf32>
  %ws = graph.constant dense<1.0> : tensor<8x8x1xf32>
  %wd = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %a = graph.conv %x, %w : (tensor<1x12x4x4xf32>, tensor<8x12x1x1xf32>) -> tensor<1x8x4x4xf32>
  %b = graph.conv %i, %wi : (tensor<1x8x4x4xi32>, tensor<8x8x1x1xi32>) -> tensor<1x8x4x4xi32>
  %c = graph.conv %g, %wg {group = 2 : i64} : (tensor<1x16x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
  %e = graph.conv %s, %ws : (tensor<1x8x10xf32>, tensor<8x8x1xf32>) -> tensor<1x8x10xf32>
  %f = graph.conv %d, %wd : (tensor<?x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x4x4xf32>
  func.return %a, %b, %c, %e, %f : tensor<1x8x4x4xf32>, tensor<1x8x4x4xi32>, tensor<1x16x4x4xf32>, tensor<1x8x10xf32>, tensor<?x8x4x4xf32>
}

// CHECK-LABEL: func.func @keep
// CHECK-NOT:     graph.layout_transform
// CHECK-NOT:     _nchwc
// CHECK:         %a = graph.conv %x, %w
// CHECK-NEXT:    %b = graph.conv %i, %wi
// CHECK-NEXT:    %c = graph.conv %g, %wg {group = 2 : i64}
// CHECK-NEXT:    %e = graph.conv %s, %ws
// CHECK-NEXT:    %f = graph.conv %d, %wd
// CHECK-NEXT:    func.return %a, %b, %c, %e, %f

// NHWC-LABEL: func.func @keep
// NHWC:         %a = graph.conv_nhwc %x_nhwc, %w_hwio : (tensor<1x4x4x12xf32>, tensor<1x1x12x8xf32>) -> tensor<1x4x4x8xf32>
// NHWC-NEXT:    %a_nchw = graph.layout_transform %a
// NHWC-NEXT:    %b = graph.conv %i, %wi
// NHWC:         %c = graph.conv_nhwc %g_nhwc, %wg_hwio {group = 2 : i64} : (tensor<1x4x4x16xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x4x16xf32>
// NHWC-NEXT:    %c_nchw = graph.layout_transform %c
// NHWC-NEXT:    %e = graph.conv %s, %ws
// NHWC-NEXT:    %f = graph.conv %d, %wd

// -----


// Must not fire: an element-wise op whose laid-out operands are outnumbered
// by NCHW activations that would need converting; a per-channel operand
// that is not a constant and not 4-D.
func.func @outnumbered(%x: tensor<1x8x4x4xf32>, %y: tensor<1x8x4x4xf32>, %z: tensor<1x8x4x4xf32>, %v: tensor<8x1x1xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %w = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %s = graph.sum %c, %y, %z : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %m = graph.mul %c, %v : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %s, %m : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// CHECK-LABEL: func.func @outnumbered
// CHECK:         %c = graph.conv_nchwc
// CHECK-NEXT:    %c_nchw = graph.layout_transform %c {source = "NCHW8c", target = "NCHW"}
// CHECK-NEXT:    %s = graph.sum %c_nchw, %y, %z
// CHECK-NEXT:    %m = graph.mul %c_nchw, %v

// -----

// Clip with scalar bounds (optional operands) and Cast (another element
// type) follow the layout too.
func.func @clip_cast(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf16> {
  %w = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %lo = graph.constant dense<0.0> : tensor<f32>
  %hi = graph.constant dense<6.0> : tensor<f32>
  %c = graph.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %r = graph.clip %c, min %lo, max %hi : (tensor<1x8x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %h = graph.cast %r {to = f16} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf16>
  func.return %h : tensor<1x8x4x4xf16>
}

// CHECK-LABEL: func.func @clip_cast
// CHECK:         %c = graph.conv_nchwc
// CHECK-NEXT:    %r = graph.clip %c, min %lo, max %hi : (tensor<1x1x4x4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1x4x4x8xf32>
// CHECK-NEXT:    %h = graph.cast %r {to = f16} : (tensor<1x1x4x4x8xf32>) -> tensor<1x1x4x4x8xf16>
// CHECK-NEXT:    %h_nchw = graph.layout_transform %h {source = "NCHW8c", target = "NCHW"} : (tensor<1x1x4x4x8xf16>) -> tensor<1x8x4x4xf16>
// CHECK-NEXT:    func.return %h_nchw

// -----

// A channel shuffle (Reshape to [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4),
// Reshape back) of a channels-last value stays channels-last, as the last
// axis split into [g, C/g], swapped and merged. NCHWc leaves it in NCHW.
func.func @shuffle(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %split = graph.constant dense<[1, 2, 4, 4, 4]> : tensor<5xi64>
  %merge = graph.constant dense<[1, 8, 4, 4]> : tensor<4xi64>
  %g = graph.reshape %c, %split : (tensor<1x8x4x4xf32>, tensor<5xi64>) -> tensor<1x2x4x4x4xf32>
  %t = graph.transpose %g {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x4x2x4x4xf32>
  %s = graph.reshape %t, %merge : (tensor<1x4x2x4x4xf32>, tensor<4xi64>) -> tensor<1x8x4x4xf32>
  %d = graph.conv %s, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %d : tensor<1x8x4x4xf32>
}

// NHWC-LABEL: func.func @shuffle
// NHWC:         %c = graph.conv_nhwc
// NHWC-NOT:     graph.layout_transform
// NHWC:         graph.reshape %c, %{{.*}} : (tensor<1x4x4x8xf32>, tensor<5xi64>) -> tensor<1x4x4x2x4xf32>
// NHWC-NEXT:    %[[T:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 1, 2, 4, 3>} : (tensor<1x4x4x2x4xf32>) -> tensor<1x4x4x4x2xf32>
// NHWC:         %s = graph.reshape %[[T]], %{{.*}} : (tensor<1x4x4x4x2xf32>, tensor<4xi64>) -> tensor<1x4x4x8xf32>
// NHWC-NOT:     graph.layout_transform
// NHWC:         %d = graph.conv_nhwc %s
// NHWC-NOT:     graph.reshape
// NHWC:         func.return

// CHECK-LABEL: func.func @shuffle
// CHECK:         %c_nchw = graph.layout_transform %c
// CHECK:         %g = graph.reshape %c_nchw, %split
// CHECK-NEXT:    %t = graph.transpose %g
// CHECK-NEXT:    %s = graph.reshape %t, %merge

// -----

// An LRN of a channels-last value stays channels-last: its pixels are
// viewed as a batch [N*H*W, C, 1, 1], whose axis 1 (the window's) is the
// channels, and the result viewed back. NCHWc leaves it in NCHW.
func.func @lrn(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %n = graph.lrn %c {alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 2.000000e+00 : f32, size = 5 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %d = graph.conv %n, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %d : tensor<1x8x4x4xf32>
}

// NHWC-LABEL: func.func @lrn
// NHWC:         %c = graph.conv_nhwc
// NHWC-NOT:     graph.layout_transform
// NHWC:         %[[P:.*]] = graph.reshape %c, %{{.*}} : (tensor<1x4x4x8xf32>, tensor<4xi64>) -> tensor<16x8x1x1xf32>
// NHWC-NEXT:    %[[L:.*]] = graph.lrn %[[P]] {alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 2.000000e+00 : f32, size = 5 : i64} : (tensor<16x8x1x1xf32>) -> tensor<16x8x1x1xf32>
// NHWC:         %n = graph.reshape %[[L]], %{{.*}} : (tensor<16x8x1x1xf32>, tensor<4xi64>) -> tensor<1x4x4x8xf32>
// NHWC-NOT:     graph.layout_transform
// NHWC:         %d = graph.conv_nhwc %n
// NHWC:         func.return

// CHECK-LABEL: func.func @lrn
// CHECK:         %c_nchw = graph.layout_transform %c
// CHECK-NEXT:    %n = graph.lrn %c_nchw

// -----

// Must not fire: a split of H instead of C, a Transpose that does not swap
// the groups with the channels of a group, and a split whose 5-D value is
// used elsewhere too: those stay NCHW, converted back.
func.func @not_a_shuffle(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x2x4x4x4xf32>) {
  %w = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %rows = graph.constant dense<[1, 8, 2, 2, 4]> : tensor<5xi64>
  %split = graph.constant dense<[1, 2, 4, 4, 4]> : tensor<5xi64>
  %merge = graph.constant dense<[1, 8, 4, 4]> : tensor<4xi64>
  %h = graph.reshape %c, %rows : (tensor<1x8x4x4xf32>, tensor<5xi64>) -> tensor<1x8x2x2x4xf32>
  %ht = graph.transpose %h {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x8x2x2x4xf32>) -> tensor<1x2x8x2x4xf32>
  %hs = graph.reshape %ht, %merge : (tensor<1x2x8x2x4xf32>, tensor<4xi64>) -> tensor<1x8x4x4xf32>
  %g = graph.reshape %c, %split : (tensor<1x8x4x4xf32>, tensor<5xi64>) -> tensor<1x2x4x4x4xf32>
  %gt = graph.transpose %g {perm = array<i64: 0, 1, 2, 4, 3>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %gs = graph.reshape %gt, %merge : (tensor<1x2x4x4x4xf32>, tensor<4xi64>) -> tensor<1x8x4x4xf32>
  %u = graph.reshape %c, %split : (tensor<1x8x4x4xf32>, tensor<5xi64>) -> tensor<1x2x4x4x4xf32>
  %ut = graph.transpose %u {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x4x2x4x4xf32>
  %us = graph.reshape %ut, %merge : (tensor<1x4x2x4x4xf32>, tensor<4xi64>) -> tensor<1x8x4x4xf32>
  func.return %hs, %gs, %us, %u : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x2x4x4x4xf32>
}

// NHWC-LABEL: func.func @not_a_shuffle
// NHWC:         %c_nchw = graph.layout_transform %c {source = "NHWC", target = "NCHW"}
// NHWC:         %h = graph.reshape %c_nchw, %rows
// NHWC-NEXT:    %ht = graph.transpose %h
// NHWC-NEXT:    %hs = graph.reshape %ht, %merge
// NHWC-NEXT:    %g = graph.reshape %c_nchw, %split
// NHWC-NEXT:    %gt = graph.transpose %g
// NHWC-NEXT:    %gs = graph.reshape %gt, %merge
// NHWC-NEXT:    %u = graph.reshape %c_nchw, %split
// NHWC-NEXT:    %ut = graph.transpose %u
// NHWC-NEXT:    %us = graph.reshape %ut, %merge
// NHWC-NEXT:    func.return %hs, %gs, %us, %u
