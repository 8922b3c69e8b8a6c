// RUN: not ember-opt %s -p convert-loop-to-gpu 2>&1 | filecheck %s

// Must not lower: a window schedule written by hand on a convolution that
// sums its channels (the input's channel index is a reduction dim).

func.func @sums_channels(%x: memref<1x4x8x8xf32>, %w: memref<2x4x3x3xf32>, %y: memref<1x2x6x6xf32>) {
  loop.kernel {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x4x8x8xf32>, memref<2x4x3x3xf32>) outs(%y : memref<1x2x6x6xf32>) attrs = {schedule = #ember_gpu.window<tile = [4, 8], threads = [4, 2]>} {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  }
  func.return
}

// CHECK: error: convert-loop-to-gpu: linalg.generic {{.*}} cannot run as #ember_gpu.window<tile = [4, 8], threads = [4, 2]>: no product operand reads one plane through windows
