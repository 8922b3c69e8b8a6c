// RUN: ember-opt %s -p gpu-default-schedule --split-input-file | filecheck %s

// A tiled convolution's padded input (an alloc written by fills of 0 and
// one copy of x, read only by the convolution): the fills and the copy are
// marked #ember_gpu.padding, to run in the convolution's loads; the input
// loads one element at a time.

func.func @padded(%x: memref<1x8x10x10xf32>, %w: memref<32x8x3x3xf32>, %y: memref<1x32x10x10xf32>) {
  %p = memref.alloc() : memref<1x8x12x12xf32>
  %top = memref.subview %p[0, 0, 0, 0] [1, 8, 1, 12] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%top : memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>)
  %bottom = memref.subview %p[0, 0, 11, 0] [1, 8, 1, 12] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x1x12xf32, strided<[1152, 144, 12, 1], offset: 132>>
  %zero2 = arith.constant 0.0 : f32
  linalg.fill ins(%zero2 : f32) outs(%bottom : memref<1x8x1x12xf32, strided<[1152, 144, 12, 1], offset: 132>>)
  %inner = memref.subview %p[0, 0, 1, 1] [1, 8, 10, 10] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>
  linalg.copy ins(%x : memref<1x8x10x10xf32>) outs(%inner : memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%p, %w : memref<1x8x12x12xf32>, memref<32x8x3x3xf32>) outs(%y : memref<1x32x10x10xf32>)
  func.return
}

// CHECK-LABEL: func.func @padded
// CHECK:         linalg.fill {schedule = #ember_gpu.padding}
// CHECK:         linalg.fill {schedule = #ember_gpu.padding}
// CHECK:         linalg.copy {schedule = #ember_gpu.padding}
// CHECK:         linalg.conv_2d_nchw_fchw {schedule = #ember_gpu.schedule<{{.*}}vector = [2, 1], stages = 2>

// -----

// Must not fold: a padded buffer something else reads too (the copy after
// the convolution), and fills of two values. Their ops stay unmarked
// (loop-generate makes them loops, convert-loop-to-gpu their own kernels).

func.func @seen(%x: memref<1x8x10x10xf32>, %w: memref<32x8x3x3xf32>, %y: memref<1x32x10x10xf32>, %z: memref<1x8x12x12xf32>) {
  %p = memref.alloc() : memref<1x8x12x12xf32>
  %top = memref.subview %p[0, 0, 0, 0] [1, 8, 1, 12] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%top : memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>)
  %inner = memref.subview %p[0, 0, 1, 1] [1, 8, 10, 10] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>
  linalg.copy ins(%x : memref<1x8x10x10xf32>) outs(%inner : memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%p, %w : memref<1x8x12x12xf32>, memref<32x8x3x3xf32>) outs(%y : memref<1x32x10x10xf32>)
  linalg.copy ins(%p : memref<1x8x12x12xf32>) outs(%z : memref<1x8x12x12xf32>)
  func.return
}

func.func @two_values(%x: memref<1x8x10x10xf32>, %w: memref<32x8x3x3xf32>, %y: memref<1x32x10x10xf32>) {
  %p = memref.alloc() : memref<1x8x12x12xf32>
  %top = memref.subview %p[0, 0, 0, 0] [1, 8, 1, 12] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%top : memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>)
  %bottom = memref.subview %p[0, 0, 11, 0] [1, 8, 1, 12] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x1x12xf32, strided<[1152, 144, 12, 1], offset: 132>>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%bottom : memref<1x8x1x12xf32, strided<[1152, 144, 12, 1], offset: 132>>)
  %inner = memref.subview %p[0, 0, 1, 1] [1, 8, 10, 10] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>
  linalg.copy ins(%x : memref<1x8x10x10xf32>) outs(%inner : memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%p, %w : memref<1x8x12x12xf32>, memref<32x8x3x3xf32>) outs(%y : memref<1x32x10x10xf32>)
  func.return
}

// CHECK-NOT:   ember_gpu.padding
// CHECK-LABEL: func.func @seen
// CHECK:         linalg.fill ins
// CHECK:         linalg.copy ins
// CHECK-LABEL: func.func @two_values
// CHECK-COUNT-2: linalg.fill ins
// CHECK:         linalg.copy ins
// CHECK-NOT:   ember_gpu.padding
