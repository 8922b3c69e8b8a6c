// RUN: ember-opt %s -p 'tensor-default-schedule{cpu=skylake-avx512}' --split-input-file | filecheck %s
// RUN: ember-opt %s -p 'tensor-default-schedule{cpu=haswell}' --split-input-file | filecheck %s --check-prefix=AVX2

// A pointwise grouped convolution (n, f, p, c): p runs innermost, inside the
// reduction over c, and is longer than a register block (4 vectors: 64
// floats with AVX-512, 32 with AVX2), so it is tiled to one.
func.func @pointwise_grouped(%x: tensor<1x8x784xf32>, %w: tensor<8x2xf32>, %o: tensor<1x8x784xf32>) -> tensor<1x8x784xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, (((d1 floordiv 2) * 2) + d3), d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x8x784xf32>, tensor<8x2xf32>) outs(%o : tensor<1x8x784xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x784xf32>
  func.return %y : tensor<1x8x784xf32>
}

// CHECK-LABEL: func.func @pointwise_grouped
// CHECK:       schedule = #loop.schedule<order = [0, 1, 3, 2], tiles = [0, 0, 64, 0], parallel = [0, 1, 2]>
// AVX2-LABEL:  func.func @pointwise_grouped
// AVX2:        schedule = #loop.schedule<order = [0, 1, 3, 2], tiles = [0, 0, 32, 0], parallel = [0, 1, 2]>

// -----

// A max pool over 112 columns (n, c, oh, ow, kh, kw): ow is tiled likewise.
func.func @pool(%x: tensor<1x2x114x114xf32>, %k: tensor<3x3xf32>, %o: tensor<1x2x112x112xf32>) -> tensor<1x2x112x112xf32> {
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d4), (d3 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %k : tensor<1x2x114x114xf32>, tensor<3x3xf32>) outs(%o : tensor<1x2x112x112xf32>) {
  ^bb0(%v: f32, %kk: f32, %acc: f32):
    %max = arith.maxnumf %acc, %v : f32
    linalg.yield %max : f32
  } -> tensor<1x2x112x112xf32>
  func.return %p : tensor<1x2x112x112xf32>
}

// CHECK-LABEL: func.func @pool
// CHECK:       schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 3], tiles = [0, 0, 0, 64, 0, 0], parallel = [0, 1, 2, 3]>

// -----

// Must not fire: a 7x7 pointwise convolution (49 positions fit one block);
// an elementwise generic (no reduction); a reduction over the last axis (its
// reduction dim runs innermost: default-schedule-reductions.mlir); a named matmul (a contraction keeps its own default); an op
// that has a schedule already.
func.func @no_block(%x: tensor<1x8x49xf32>, %w: tensor<8x2xf32>, %o: tensor<1x8x49xf32>, %e: tensor<2x1000xf32>, %r: tensor<64x1000xf32>, %ro: tensor<64xf32>, %a: tensor<4x8xf32>, %b: tensor<8x500xf32>, %c: tensor<4x500xf32>) -> (tensor<1x8x49xf32>, tensor<2x1000xf32>, tensor<64xf32>, tensor<4x500xf32>, tensor<1x8x49xf32>) {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, (((d1 floordiv 2) * 2) + d3), d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x8x49xf32>, tensor<8x2xf32>) outs(%o : tensor<1x8x49xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x49xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<2x1000xf32>) outs(%e : tensor<2x1000xf32>) {
  ^bb0(%p: f32, %q: f32):
    %neg = arith.negf %p : f32
    linalg.yield %neg : f32
  } -> tensor<2x1000xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%r : tensor<64x1000xf32>) outs(%ro : tensor<64xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x500xf32>) outs(%c : tensor<4x500xf32>) -> tensor<4x500xf32>
  %kept = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, (((d1 floordiv 2) * 2) + d3), d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x8x49xf32>, tensor<8x2xf32>) outs(%o : tensor<1x8x49xf32>) attrs = {schedule = #loop.schedule<order = [0, 1, 2, 3]>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x49xf32>
  func.return %y, %n, %sum, %mm, %kept : tensor<1x8x49xf32>, tensor<2x1000xf32>, tensor<64xf32>, tensor<4x500xf32>, tensor<1x8x49xf32>
}

// CHECK-LABEL: func.func @no_block
// CHECK:       %y = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1, 3, 2], parallel = [0, 1, 2]>
// CHECK:       %n = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1], parallel = [0, 1]>
// CHECK:       %sum = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1], parallel = [0]>
// CHECK:       %mm = linalg.matmul {{.*}}schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = {{16|8}}, micro = [0, 1, 4, {{64|16}}]>
// CHECK:       %kept = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1, 2, 3]>

// -----

// Must not fire: a generic over no dims (a scalar copy) has no loop to tile.
func.func @rank0(%x: tensor<f32>, %o: tensor<f32>) -> tensor<f32> {
  %y = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%x : tensor<f32>) outs(%o : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK-LABEL: func.func @rank0
// CHECK:       schedule = #loop.schedule<order = []>

// -----

// Must not fire: a global average pool of NCHW data (n, c, h, w; the sum over
// h, w): c is the output's last dim, but it walks the input along its
// channel axis, not its last, so the block would be read by gathers; the
// sum runs along the input's rows instead (w innermost, reduction_order.py).
func.func @global_pool_nchw(%x: tensor<1x1000x13x13xf32>, %o: tensor<1x1000xf32>) -> tensor<1x1000xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x1000x13x13xf32>) outs(%o : tensor<1x1000xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x1000xf32>
  func.return %y : tensor<1x1000xf32>
}

// CHECK-LABEL: func.func @global_pool_nchw
// CHECK:       schedule = #loop.schedule<order = [0, 1, 2, 3], parallel = [0, 1]>
