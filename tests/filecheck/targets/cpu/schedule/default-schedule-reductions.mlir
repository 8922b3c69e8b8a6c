// RUN: ember-opt %s -p 'tensor-default-schedule{cpu=skylake-avx512}' --split-input-file | filecheck %s
// RUN: ember-opt %s -p 'tensor-default-schedule{cpu=haswell}' --split-input-file | filecheck %s
// RUN: ember-opt %s -p 'tensor-default-schedule{cpu=generic}' --split-input-file | filecheck %s --check-prefix=GENERIC

// A reduction along its input's last (contiguous) axis, as Softmax and
// LayerNormalization lower: the reduction dim runs innermost, so the loop
// reads rows contiguously and carries one accumulator per row; a second
// input that does not depend on it (the row's max) changes nothing.
func.func @rows(%x: tensor<64x1000xf32>, %m: tensor<64xf32>, %o: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1000xf32>) outs(%o : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %m : tensor<64x1000xf32>, tensor<64xf32>) outs(%o : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %r = arith.addf %acc, %d fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  func.return %max, %sum : tensor<64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @rows
// CHECK:       %max = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1], parallel = [0]>
// CHECK:       %sum = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1], parallel = [0]>

// Must not fire without vectors: the scalar default stays.
// GENERIC-LABEL: func.func @rows
// GENERIC:       %max = linalg.generic {{.*}}schedule = #loop.schedule<order = [1, 0], parallel = [0]>
// GENERIC:       %sum = linalg.generic {{.*}}schedule = #loop.schedule<order = [1, 0], parallel = [0]>

// -----

// A rank-3 reduction over the last axis (batch, row, column), and a global
// pool of NCHW data over h, w: the declared order, with the last reduction
// innermost.
func.func @rank3(%x: tensor<2x8x768xf32>, %o: tensor<2x8xf32>, %p: tensor<1x16x13x13xf32>, %po: tensor<1x16xf32>) -> (tensor<2x8xf32>, tensor<1x16xf32>) {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x768xf32>) outs(%o : tensor<2x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%p : tensor<1x16x13x13xf32>) outs(%po : tensor<1x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  func.return %y, %g : tensor<2x8xf32>, tensor<1x16xf32>
}

// CHECK-LABEL: func.func @rank3
// CHECK:       %y = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1, 2], parallel = [0, 1]>
// CHECK:       %g = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1, 2, 3], parallel = [0, 1]>

// -----

// Must not fire: a reduction over a middle axis (the input's last dim is
// the output's: the default's contiguous walk along it stays); a pool of
// NHWC data (c walks the input contiguously); a batched product whose B
// is contiguous along the output's last dim; a reduction whose contiguous
// dim is not the last reduction (its terms would be reordered).
func.func @kept(%x: tensor<4x8x16xf32>, %o: tensor<4x16xf32>, %h: tensor<1x7x7x32xf32>, %ho: tensor<1x32xf32>, %a: tensor<2x4x8xf32>, %b: tensor<2x8x5xf32>, %c: tensor<2x4x5xf32>, %t: tensor<8x4xf32>, %to: tensor<1xf32>) -> (tensor<4x16xf32>, tensor<1x32xf32>, tensor<2x4x5xf32>, tensor<1xf32>) {
  %mid = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<4x8x16xf32>) outs(%o : tensor<4x16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %nhwc = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%h : tensor<1x7x7x32xf32>) outs(%ho : tensor<1x32xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x32xf32>
  %bmm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x5xf32>) outs(%c : tensor<2x4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x5xf32>
  %cols = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%t : tensor<8x4xf32>) outs(%to : tensor<1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  func.return %mid, %nhwc, %bmm, %cols : tensor<4x16xf32>, tensor<1x32xf32>, tensor<2x4x5xf32>, tensor<1xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK:       %mid = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1, 2], parallel = [0, 2]>
// CHECK:       %nhwc = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 2, 3, 1], parallel = [0, 1]>
// CHECK:       %bmm = linalg.generic {{.*}}schedule = #loop.schedule<order = [0, 1, 3, 2]
// CHECK:       %cols = linalg.generic {{.*}}schedule = #loop.schedule<order = [1, 2, 0], parallel = [0]>
