// RUN: ember-opt %s | ember-opt | filecheck %s

// Ember's layout ops (ops_layout.py): layout transforms of activations,
// weights and biases; convolution and pooling in NCHWc (blocks of 8, and 4
// input channels per block with 8 output channels per block) and NHWC.

func.func @layout(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>, %b: tensor<32xf32>, %dw: tensor<3x3x1x16xf32>) -> (tensor<1x32x8x8xf32>, tensor<1x4x4x16xf32>, tensor<1x4x8x8x8xf32>, tensor<1x4x4x4x8xf32>, tensor<1x2x4x1x8xf32>) {
  %xl = graph.layout_transform %x {source = "NCHW", target = "NCHW8c"} : (tensor<1x16x8x8xf32>) -> tensor<1x2x8x8x8xf32>
  %x4 = graph.layout_transform %xl {source = "NCHW8c", target = "NCHW4c"} : (tensor<1x2x8x8x8xf32>) -> tensor<1x4x8x8x4xf32>
  %wl = graph.layout_transform %w {source = "OIHW", target = "OIHW8i8o"} : (tensor<32x16x3x3xf32>) -> tensor<4x2x3x3x8x8xf32>
  %w4 = graph.layout_transform %w {source = "OIHW", target = "OIHW4i8o"} : (tensor<32x16x3x3xf32>) -> tensor<4x4x3x3x4x8xf32>
  %bl = graph.layout_transform %b {source = "O", target = "O8o"} : (tensor<32xf32>) -> tensor<4x8xf32>
  %y = graph.conv_nchwc %xl, %wl, B %bl {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8x8xf32>, tensor<4x2x3x3x8x8xf32>, tensor<4x8xf32>) -> tensor<1x4x8x8x8xf32>
  %y4 = graph.conv_nchwc %x4, %w4 {auto_pad = "SAME_UPPER"} : (tensor<1x4x8x8x4xf32>, tensor<4x4x3x3x4x8xf32>) -> tensor<1x4x8x8x8xf32>
  %p = graph.max_pool_nchwc %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x8xf32>
  %a = graph.average_pool_nchwc %p {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
  %r = graph.layout_transform %y {source = "NCHW8c", target = "NCHW"} : (tensor<1x4x8x8x8xf32>) -> tensor<1x32x8x8xf32>
  %xh = graph.layout_transform %x {source = "NCHW", target = "NHWC"} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32>
  %d = graph.conv_nhwc %xh, %dw {group = 16 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x8x8x16xf32>
  %m = graph.max_pool_nhwc %d {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
  %v = graph.average_pool_nhwc %m {kernel_shape = array<i64: 1, 4>, strides = array<i64: 1, 4>} : (tensor<1x4x4x16xf32>) -> tensor<1x4x1x16xf32>
  %vb = graph.layout_transform %v {source = "NHWC", target = "NCHW8c"} : (tensor<1x4x1x16xf32>) -> tensor<1x2x4x1x8xf32>
  %t = graph.layout_transform %m {source = "NHWC", target = "NCHW"} : (tensor<1x4x4x16xf32>) -> tensor<1x16x4x4xf32>
  %u = graph.layout_transform %t {source = "NCHW", target = "NCHW16c"} : (tensor<1x16x4x4xf32>) -> tensor<1x1x4x4x16xf32>
  %o = graph.layout_transform %u {source = "NCHW16c", target = "NHWC"} : (tensor<1x1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  func.return %r, %o, %y4, %a, %vb : tensor<1x32x8x8xf32>, tensor<1x4x4x16xf32>, tensor<1x4x8x8x8xf32>, tensor<1x4x4x4x8xf32>, tensor<1x2x4x1x8xf32>
}

// CHECK-LABEL: func.func @layout(
// CHECK-NEXT:    %xl = graph.layout_transform %x {source = "NCHW", target = "NCHW8c"} : (tensor<1x16x8x8xf32>) -> tensor<1x2x8x8x8xf32>
// CHECK-NEXT:    %x4 = graph.layout_transform %xl {source = "NCHW8c", target = "NCHW4c"} : (tensor<1x2x8x8x8xf32>) -> tensor<1x4x8x8x4xf32>
// CHECK-NEXT:    %wl = graph.layout_transform %w {source = "OIHW", target = "OIHW8i8o"} : (tensor<32x16x3x3xf32>) -> tensor<4x2x3x3x8x8xf32>
// CHECK-NEXT:    %w4 = graph.layout_transform %w {source = "OIHW", target = "OIHW4i8o"} : (tensor<32x16x3x3xf32>) -> tensor<4x4x3x3x4x8xf32>
// CHECK-NEXT:    %bl = graph.layout_transform %b {source = "O", target = "O8o"} : (tensor<32xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = graph.conv_nchwc %xl, %wl, B %bl {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8x8xf32>, tensor<4x2x3x3x8x8xf32>, tensor<4x8xf32>) -> tensor<1x4x8x8x8xf32>
// CHECK-NEXT:    %y4 = graph.conv_nchwc %x4, %w4 {auto_pad = "SAME_UPPER"} : (tensor<1x4x8x8x4xf32>, tensor<4x4x3x3x4x8xf32>) -> tensor<1x4x8x8x8xf32>
// CHECK-NEXT:    %p = graph.max_pool_nchwc %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x8xf32>
// CHECK-NEXT:    %a = graph.average_pool_nchwc %p {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4x8xf32>) -> tensor<1x4x4x4x8xf32>
// CHECK-NEXT:    %r = graph.layout_transform %y {source = "NCHW8c", target = "NCHW"} : (tensor<1x4x8x8x8xf32>) -> tensor<1x32x8x8xf32>
// CHECK-NEXT:    %xh = graph.layout_transform %x {source = "NCHW", target = "NHWC"} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT:    %d = graph.conv_nhwc %xh, %dw {group = 16 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT:    %m = graph.max_pool_nhwc %d {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
// CHECK-NEXT:    %v = graph.average_pool_nhwc %m {kernel_shape = array<i64: 1, 4>, strides = array<i64: 1, 4>} : (tensor<1x4x4x16xf32>) -> tensor<1x4x1x16xf32>
// CHECK-NEXT:    %vb = graph.layout_transform %v {source = "NHWC", target = "NCHW8c"} : (tensor<1x4x1x16xf32>) -> tensor<1x2x4x1x8xf32>
// CHECK-NEXT:    %t = graph.layout_transform %m {source = "NHWC", target = "NCHW"} : (tensor<1x4x4x16xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NEXT:    %u = graph.layout_transform %t {source = "NCHW", target = "NCHW16c"} : (tensor<1x16x4x4xf32>) -> tensor<1x1x4x4x16xf32>
// CHECK-NEXT:    %o = graph.layout_transform %u {source = "NCHW16c", target = "NHWC"} : (tensor<1x1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
// CHECK-NEXT:    func.return %r, %o, %y4, %a, %vb : tensor<1x32x8x8xf32>, tensor<1x4x4x16xf32>, tensor<1x4x8x8x8xf32>, tensor<1x4x4x4x8xf32>, tensor<1x2x4x1x8xf32>
