// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver4}" | filecheck %s --check-prefix=AVX512
// RUN: ember-opt %s -p "tensor-default-schedule{cpu=haswell}" | filecheck %s --check-prefix=AVX2
// RUN: ember-opt %s -p "tensor-default-schedule{cpu=generic}" | filecheck %s --check-prefix=GENERIC

// Contractions get a register-blocked micro-kernel on a CPU with vector
// registers and an fma: n the output's innermost dim, m a parallel output
// dim that the vector reads do not depend on, NR up to 4 vectors of 16 f32
// on AVX-512 (32 registers) or 2 of 8 on AVX2 (16 registers), MR the rows
// the remaining registers hold, preferring a block that divides both
// extents. Without a vector unit (generic), every op keeps the scalar default.

func.func @contractions(%a: tensor<12x8xf32>, %b: tensor<8x64xf32>, %c: tensor<12x64xf32>,
                        %ad: tensor<12x8xf64>, %bd: tensor<8x64xf64>, %cd: tensor<12x64xf64>,
                        %x: tensor<1x10x10x8xf32>, %w: tensor<3x3x8x32xf32>, %o: tensor<1x8x8x32xf32>,
                        %xn: tensor<1x8x6x34xf32>, %wn: tensor<16x8x3x3xf32>, %on: tensor<1x16x4x32xf32>,
                        %xs: tensor<1x8x9x67xf32>, %os: tensor<1x16x4x33xf32>) -> (tensor<12x64xf32>, tensor<12x64xf64>, tensor<1x8x8x32xf32>, tensor<1x16x4x32xf32>, tensor<1x16x4x33xf32>) {
  // matmul (m, n, k)
  %mm = linalg.matmul ins(%a, %b : tensor<12x8xf32>, tensor<8x64xf32>) outs(%c : tensor<12x64xf32>) -> tensor<12x64xf32>
  // f64: half as many elements per vector
  %md = linalg.matmul ins(%ad, %bd : tensor<12x8xf64>, tensor<8x64xf64>) outs(%cd : tensor<12x64xf64>) -> tensor<12x64xf64>
  // NHWC as graph-layout emits it (n, oh, ow, kh, kw, c, f): m = ow, n = f
  %nhwc = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d3, d2 + d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : tensor<1x10x10x8xf32>, tensor<3x3x8x32xf32>) outs(%o : tensor<1x8x8x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x32xf32>
  // NCHW, stride 1 (n, f, oh, ow, c, kh, kw): n = ow, m = f (the weights
  // are broadcast, each input vector serves every output channel of a block)
  %nchw = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%xn, %wn : tensor<1x8x6x34xf32>, tensor<16x8x3x3xf32>) outs(%on : tensor<1x16x4x32xf32>) -> tensor<1x16x4x32xf32>
  // NCHW, stride 2: the same m and n, the input read as vectors at steps of 2
  // along ow (two loads and a shuffle of their even lanes)
  %nchw2 = linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%xs, %wn : tensor<1x8x9x67xf32>, tensor<16x8x3x3xf32>) outs(%os : tensor<1x16x4x33xf32>) -> tensor<1x16x4x33xf32>
  func.return %mm, %md, %nhwc, %nchw, %nchw2 : tensor<12x64xf32>, tensor<12x64xf64>, tensor<1x8x8x32xf32>, tensor<1x16x4x32xf32>, tensor<1x16x4x33xf32>
}

// AVX512-LABEL: func.func @contractions
// AVX512: %mm = linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 16, micro = [0, 1, 6, 64]>}
// AVX512: %md = linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 6, 32]>}
// AVX512: schedule = #loop.schedule<order = [0, 1, 2, 3, 4, 5, 6], parallel = [0, 1, 2, 6], vector = 16, micro = [2, 6, 8, 32]>
// AVX512: %nchw = linalg.conv_2d_nchw_fchw {{.*}}schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3], vector = 16, micro = [1, 3, 8, 32]>
// AVX512: %nchw2 = linalg.conv_2d_nchw_fchw {{.*}}schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3], vector = 16, micro = [1, 3, 8, 32]>

// AVX2-LABEL: func.func @contractions
// AVX2: %mm = linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 6, 16]>}
// AVX2: %md = linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 4, micro = [0, 1, 6, 8]>}
// AVX2: schedule = #loop.schedule<order = [0, 1, 2, 3, 4, 5, 6], parallel = [0, 1, 2, 6], vector = 8, micro = [2, 6, 4, 16]>
// AVX2: %nchw = linalg.conv_2d_nchw_fchw {{.*}}schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3], vector = 8, micro = [1, 3, 4, 16]>
// AVX2: %nchw2 = linalg.conv_2d_nchw_fchw {{.*}}schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3], vector = 8, micro = [1, 3, 4, 16]>

// GENERIC-LABEL: func.func @contractions
// GENERIC-NOT: micro
// GENERIC: %mm = linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1]>}
// GENERIC-NOT: micro

// Must not fire: an integer matmul; an output row shorter than a vector
// (even AVX2's 8); a depthwise NHWC convolution, whose input channel is
// f floordiv the multiplier (no unit step along n); a stride-3 NCHW
// convolution (its input steps by 3 along ow: only steps of 1 and 2 are
// read as vectors); a max pool (no product).
func.func @scalar(%ai: tensor<12x8xi32>, %bi: tensor<8x64xi32>, %ci: tensor<12x64xi32>,
                  %a: tensor<12x8xf32>, %bs: tensor<8x5xf32>, %cs: tensor<12x5xf32>,
                  %x: tensor<1x10x10x16xf32>, %wd: tensor<3x3x1x32xf32>, %od: tensor<1x8x8x32xf32>,
                  %xn: tensor<1x8x9x67xf32>, %wn: tensor<16x8x3x3xf32>, %on: tensor<1x16x3x22xf32>,
                  %window: tensor<3x3xf32>, %op: tensor<1x8x8x16xf32>) -> (tensor<12x64xi32>, tensor<12x5xf32>, tensor<1x8x8x32xf32>, tensor<1x16x3x22xf32>, tensor<1x8x8x16xf32>) {
  %mi = linalg.matmul ins(%ai, %bi : tensor<12x8xi32>, tensor<8x64xi32>) outs(%ci : tensor<12x64xi32>) -> tensor<12x64xi32>
  %ms = linalg.matmul ins(%a, %bs : tensor<12x8xf32>, tensor<8x5xf32>) outs(%cs : tensor<12x5xf32>) -> tensor<12x5xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d3, d2 + d4, d6 floordiv 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %wd : tensor<1x10x10x16xf32>, tensor<3x3x1x32xf32>) outs(%od : tensor<1x8x8x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x32xf32>
  %s3 = linalg.conv_2d_nchw_fchw {strides = dense<3> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%xn, %wn : tensor<1x8x9x67xf32>, tensor<16x8x3x3xf32>) outs(%on : tensor<1x16x3x22xf32>) -> tensor<1x16x3x22xf32>
  %pool = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %window : tensor<1x10x10x16xf32>, tensor<3x3xf32>) outs(%op : tensor<1x8x8x16xf32>) {
  ^bb0(%v: f32, %k: f32, %acc: f32):
    %max = arith.maxnumf %acc, %v : f32
    linalg.yield %max : f32
  } -> tensor<1x8x8x16xf32>
  func.return %mi, %ms, %dw, %s3, %pool : tensor<12x64xi32>, tensor<12x5xf32>, tensor<1x8x8x32xf32>, tensor<1x16x3x22xf32>, tensor<1x8x8x16xf32>
}

// AVX512-LABEL: func.func @scalar
// AVX512-NOT: micro
// AVX512: func.return
// AVX2-LABEL: func.func @scalar
// AVX2-NOT: micro
// AVX2: func.return

// A block that divides the extents is preferred (5 x 4 vectors for 100
// rows: no partial block to emit), except where the output is filled just
// before: loop-generate then runs the last block overlapping the one before
// (the fill's constant starts the accumulators), so the largest block that
// recomputes least wins (6 x 4 vectors, 2 rows recomputed).
func.func @filled(%a: tensor<100x8xf32>, %b: tensor<8x64xf32>, %c: tensor<100x64xf32>) -> (tensor<100x64xf32>, tensor<100x64xf32>) {
  %unfilled = linalg.matmul ins(%a, %b : tensor<100x8xf32>, tensor<8x64xf32>) outs(%c : tensor<100x64xf32>) -> tensor<100x64xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<100x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x64xf32>) -> tensor<100x64xf32>
  %filled = linalg.matmul ins(%a, %b : tensor<100x8xf32>, tensor<8x64xf32>) outs(%f : tensor<100x64xf32>) -> tensor<100x64xf32>
  func.return %unfilled, %filled : tensor<100x64xf32>, tensor<100x64xf32>
}

// AVX512-LABEL: func.func @filled
// AVX512: %unfilled = linalg.matmul {schedule = #loop.schedule<{{.*}}, vector = 16, micro = [0, 1, 5, 64]>}
// AVX512: %filled = linalg.matmul {schedule = #loop.schedule<{{.*}}, vector = 16, micro = [0, 1, 6, 64]>}
