// RUN: ember-opt %s -p gpu-default-schedule --split-input-file | filecheck %s

// Depthwise convolutions (each output point reads one plane of the input
// through a 3 x 3 window, no channel summed): a window schedule, blocks of
// up to 16 x 8 threads with 2 x 2 outputs each; a 7 x 7 output takes 4 x 4
// threads (8 x 8 outputs cover it). The Relu after the first runs in its
// registers (#ember_gpu.epilogue), and the conv then writes the Relu's output.

func.func @depthwise(%x: memref<1x32x114x114xf32>, %w: memref<32x3x3xf32>, %r: memref<1x32x112x112xf32>,
                     %x2: memref<1x8x15x15xf32>, %w2: memref<8x3x3xf32>, %y2: memref<1x8x7x7xf32>) {
  %y = memref.alloc() : memref<1x32x112x112xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<1x32x114x114xf32>, memref<32x3x3xf32>) outs(%y : memref<1x32x112x112xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<1x32x112x112xf32>) outs(%r : memref<1x32x112x112xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x2, %w2 : memref<1x8x15x15xf32>, memref<8x3x3xf32>) outs(%y2 : memref<1x8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @depthwise
// CHECK:         linalg.generic {{.*}} outs(%r : memref<1x32x112x112xf32>) attrs =  {schedule = #ember_gpu.window<tile = [16, 32], threads = [16, 8]>}
// CHECK:         linalg.generic {{.*}} ins(%r : memref<1x32x112x112xf32>) outs(%r : memref<1x32x112x112xf32>) attrs =  {schedule = #ember_gpu.epilogue}
// CHECK:         linalg.generic {{.*}} outs(%y2 : memref<1x8x7x7xf32>) attrs =  {schedule = #ember_gpu.window<tile = [8, 8], threads = [4, 4]>}

// -----

// Must not fire: a convolution that sums channels (4 of them by 3 x 3,
// too few filters to tile: a reduction of 36 points, a warp each), a
// depthwise one of dynamic extents, and a depthwise one whose weights read
// the output's width.

func.func @not_windows(%x: memref<1x4x9x9xf32>, %w: memref<8x4x3x3xf32>, %y: memref<1x8x7x7xf32>,
                       %xd: memref<1x8x?x9xf32>, %wd: memref<8x3x3xf32>, %yd: memref<1x8x?x7xf32>,
                       %x3: memref<1x8x7x9xf32>, %ww: memref<8x7x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x4x9x9xf32>, memref<8x4x3x3xf32>) outs(%y : memref<1x8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%xd, %wd : memref<1x8x?x9xf32>, memref<8x3x3xf32>) outs(%yd : memref<1x8x?x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3 + d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x3, %ww : memref<1x8x7x9xf32>, memref<8x7x3xf32>) outs(%y : memref<1x8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @not_windows
// CHECK-NOT:     ember_gpu.window
// CHECK:         linalg.generic {{.*}} attrs =  {schedule = #ember_gpu.reduce<threads = 32, rows = 8>}
// CHECK:         linalg.generic {{.*}} attrs =  {schedule = #loop.schedule<order = [0, 1, 2, 3, 4, 5], parallel = [0, 1, 2, 3]>}
// CHECK:         linalg.generic {{.*}} attrs =  {schedule = #loop.schedule<order = [0, 1, 2, 3, 4], parallel = [0, 1, 2, 3]>}
// CHECK-NOT:     ember_gpu.window

// -----

// A depthwise convolution's padded input (an alloc written by fills of 0
// and one copy of x, read only by the convolution): the fills and the copy
// are marked #ember_gpu.padding, to run in the window's staging, and the
// copy moves to just before the convolution, after its output's fill (which
// stays unscheduled: the kernel starts from its value).

func.func @padded(%x: memref<1x8x10x10xf32>, %w: memref<8x3x3xf32>, %y: memref<1x8x10x10xf32>) {
  %p = memref.alloc() : memref<1x8x12x12xf32>
  %top = memref.subview %p[0, 0, 0, 0] [1, 8, 1, 12] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%top : memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>)
  %inner = memref.subview %p[0, 0, 1, 1] [1, 8, 10, 10] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>
  linalg.copy ins(%x : memref<1x8x10x10xf32>) outs(%inner : memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>)
  linalg.fill ins(%zero : f32) outs(%y : memref<1x8x10x10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : memref<1x8x12x12xf32>, memref<8x3x3xf32>) outs(%y : memref<1x8x10x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @padded
// CHECK:         linalg.fill {schedule = #ember_gpu.padding}
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%y : memref<1x8x10x10xf32>)
// CHECK-NEXT:    linalg.copy {schedule = #ember_gpu.padding}
// CHECK-NEXT:    linalg.generic {{.*}} attrs =  {schedule = #ember_gpu.window<tile = [16, 16], threads = [8, 8]>}
