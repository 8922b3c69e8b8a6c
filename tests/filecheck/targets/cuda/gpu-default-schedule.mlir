// RUN: ember-opt %s -p gpu-default-schedule --split-input-file | filecheck %s

// Products with m and n of 32 or more: block-tiled (64 along a dim of 64
// or more, else 32); the batch dim of a batched product is left to the grid.
// Tiles are staged in loads of 4 where each thread gets whole loads (a
// 64 x 16 tile: one load of 4 for each of 256 threads; a 32 x 16 one: one
// of 2), with two stages.

func.func @products(%a: memref<128x96xf32>, %b: memref<96x256xf32>, %c: memref<128x256xf32>,
                    %p: memref<4x40x16xf32>, %q: memref<4x16x48xf32>, %r: memref<4x40x48xf32>) {
  linalg.matmul ins(%a, %b : memref<128x96xf32>, memref<96x256xf32>) outs(%c : memref<128x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %q : memref<4x40x16xf32>, memref<4x16x48xf32>) outs(%r : memref<4x40x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @products
// CHECK:         linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [4, 4], stages = 2>
// CHECK:         linalg.generic {{.*}} attrs = {schedule = #ember_gpu.schedule<m = [1], n = [2], k = [3], block = [32, 32], threads = [16, 16], k_tile = 16, vector = [2, 2], stages = 2>

// Must not tile: a product with m below 32 (a batch of 8), an elementwise
// op, a reduction (of 16 points: too few for a block per row); they get a
// #loop.schedule whose parallel dims come first. A schedule given is kept,
// and ops on tensors are left alone.

func.func @loops(%x: memref<8x64xf32>, %w: memref<64x32xf32>, %y: memref<8x32xf32>, %z: memref<8xf32>,
                 %v: memref<8x16xf32>, %t: tensor<64x64xf32>) -> tensor<64x64xf32> {
  linalg.matmul ins(%x, %w : memref<8x64xf32>, memref<64x32xf32>) outs(%y : memref<8x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<8x32xf32>) outs(%y : memref<8x32xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%v : memref<8x16xf32>) outs(%z : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.matmul {schedule = #loop.schedule<order = [1, 0, 2]>} ins(%x, %w : memref<8x64xf32>, memref<64x32xf32>) outs(%y : memref<8x32xf32>)
  %u = linalg.matmul ins(%t, %t : tensor<64x64xf32>, tensor<64x64xf32>) outs(%t : tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %u : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @loops
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 1, 2], parallel = [0, 1]>}
// CHECK:         attrs = {schedule = #loop.schedule<order = [0, 1], parallel = [0, 1]>}
// CHECK:         attrs = {schedule = #loop.schedule<order = [1, 0], parallel = [1]>}
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [1, 0, 2]>}
// CHECK:         linalg.matmul ins(%t, %t

// -----

// An NCHW convolution is an implicit GEMM: rows are the filters, columns
// the output pixels (with the batch: the group holding the output's
// innermost dim), the reduction its (channel, window) points. The bias and
// ReLU after it are its epilogue; an exp is not (not an op the epilogue
// rules take).

func.func @conv(%x: memref<1x16x10x10xf32>, %w: memref<32x16x3x3xf32>, %b: memref<32xf32>,
                %y: memref<1x32x8x8xf32>, %z: memref<1x32x8x8xf32>) {
  %c = memref.alloc() : memref<1x32x8x8xf32>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x16x10x10xf32>, memref<32x16x3x3xf32>) outs(%c : memref<1x32x8x8xf32>)
  %biased = memref.alloc() : memref<1x32x8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : memref<1x32x8x8xf32>, memref<32xf32>) outs(%biased : memref<1x32x8x8xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%biased : memref<1x32x8x8xf32>) outs(%y : memref<1x32x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  %d = memref.alloc() : memref<1x32x8x8xf32>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x16x10x10xf32>, memref<32x16x3x3xf32>) outs(%d : memref<1x32x8x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d : memref<1x32x8x8xf32>) outs(%z : memref<1x32x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x2 = math.exp %v : f32
    linalg.yield %x2 : f32
  }
  func.return
}

// The convolution then writes the epilogue's output (%y), which its first
// step reads, so memory planning keeps %y apart from the convolution's
// operands; its own buffer goes.

// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    linalg.conv_2d_nchw_fchw {{.*}}schedule = #ember_gpu.schedule<m = [1], n = [0, 2, 3], k = [4, 5, 6], block = [32, 64], threads = [16, 16], k_tile = 16, vector = [2, 1], stages = 2>{{.*}} outs(%y : memref<1x32x8x8xf32>)
// CHECK-NEXT:    %biased = memref.alloc()
// CHECK-NEXT:    linalg.generic {{.*}} ins(%y, %b : {{.*}}) outs(%biased : {{.*}}) attrs = {schedule = #ember_gpu.epilogue}
// CHECK:         linalg.generic {{.*}} ins(%biased : {{.*}}) outs(%y : {{.*}}) attrs = {schedule = #ember_gpu.epilogue}
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}}schedule = #ember_gpu.schedule
// CHECK:         attrs = {schedule = #loop.schedule<order = [0, 1, 2, 3], parallel = [0, 1, 2, 3]>}

// -----

// Reductions of 32 points or more whose body folds a value of the inputs
// into the output with one associative, commutative op run one block of
// 256 threads per row (768 points), or, with fewer than 256 points, a warp
// per row, 8 rows a block or as many as there are (49 points of a 7 x 7
// pool, 512 rows: 8; 100 points, 4 rows: 4). Softmax's sum of exp(x - max)
// folds code of two inputs; maxnumf may take the output second.

func.func @reductions(%x: memref<8x768xf32>, %m: memref<8xf32>, %s: memref<8xf32>,
                      %p: memref<1x512x7x7xf32>, %q: memref<1x512xf32>, %y: memref<4x100xf32>, %z: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x768xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %m : memref<8x768xf32>, memref<8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %max: f32, %acc: f32):
    %d = arith.subf %a, %max : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%p : memref<1x512x7x7xf32>) outs(%q : memref<1x512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<4x100xf32>) outs(%z : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maxnumf %a, %acc : f32
    linalg.yield %r : f32
  }
  func.return
}

// CHECK-LABEL: func.func @reductions
// CHECK:         ins(%x : memref<8x768xf32>) outs(%s : memref<8xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 256>}
// CHECK:         ins(%x, %m : {{.*}}) outs(%s : memref<8xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 256>}
// CHECK:         ins(%p : {{.*}}) outs(%q : {{.*}}) attrs = {schedule = #ember_gpu.reduce<threads = 32, rows = 8>}
// CHECK:         ins(%y : {{.*}}) outs(%z : {{.*}}) attrs = {schedule = #ember_gpu.reduce<threads = 32, rows = 4>}

// -----

// Must not run a block per row: fewer than 32 points; a combiner outside
// the table (subf is not associative); a body that reads the output twice
// (acc * acc + a) or whose combined value feeds more code (acc + a, then
// doubled); dynamic extents. They keep a thread per row.

func.func @not_reductions(%x: memref<8x16xf32>, %s: memref<8xf32>, %w: memref<8x768xf32>,
                          %d: memref<?x768xf32>, %ds: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%w : memref<8x768xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.subf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%w : memref<8x768xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %acc, %acc : f32
    %r = arith.addf %sq, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%w : memref<8x768xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    %twice = arith.addf %r, %r : f32
    linalg.yield %twice : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%d : memref<?x768xf32>) outs(%ds : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  func.return
}

// CHECK-LABEL: func.func @not_reductions
// CHECK-NOT:     ember_gpu.reduce
// CHECK-COUNT-5: attrs = {schedule = #loop.schedule<order = [0, 1], parallel = [0]>}
// CHECK-NOT:     ember_gpu.reduce

// -----

// Loads narrower than 4, or of one: a transposed column operand (K^T, read
// at [j, l]) is contiguous along k, not n: 1; 70 columns split into loads
// of 2, not 4; a view at an offset of 2
// elements, or with a row stride of 66, aligns loads of 2 at most. A
// convolution's input, read through its windows, is never contiguous along
// the output pixels: 1 (above).

func.func @widths(%q: memref<64x32xf32>, %k: memref<64x32xf32>, %s: memref<64x64xf32>,
                  %a: memref<64x32xf32>, %b: memref<32x70xf32>, %c: memref<64x70xf32>,
                  %big: memref<64x66xf32>, %d: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : memref<64x32xf32>, memref<64x32xf32>) outs(%s : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x70xf32>) outs(%c : memref<64x70xf32>)
  %view = memref.subview %big[0, 2] [64, 64] [1, 1] : memref<64x66xf32> to memref<64x64xf32, strided<[66, 1], offset: 2>>
  linalg.matmul ins(%view, %d : memref<64x64xf32, strided<[66, 1], offset: 2>>, memref<64x64xf32>) outs(%s : memref<64x64xf32>)
  func.return
}

// CHECK-LABEL: func.func @widths
// CHECK:         schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [4, 1], stages = 2>
// CHECK:         linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [4, 2], stages = 2>
// CHECK:         linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [2, 4], stages = 2>
