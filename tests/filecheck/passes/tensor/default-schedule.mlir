// RUN: ember-opt %s -p tensor-default-schedule --split-input-file --verify-diagnostics | filecheck %s

// tensor-default-schedule attaches today's heuristic as a #loop.schedule to
// every structured op without one: the dims in declared order, except that
// the output's last dim moves inside the reduction dims; no tiles; every
// parallel dim listed as parallel. convert-tensor-to-loop uses the same
// default for an op without a schedule, so the pass changes no loop nest.

// An elementwise generic: all dims parallel, in declared order.
func.func @elementwise(%x: tensor<2x3xf32>, %e: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    tensor.yield %n : f32
  } -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @elementwise
// CHECK:       } -> tensor<2x3xf32> attributes {schedule = #loop.schedule<order = [0, 1], parallel = [0, 1]>}

// -----

// Named ops get the schedule of their generalization. matmul (m, n, k): n
// moves inside k. conv2d (n, f, oh, ow, c, kh, kw): ow moves inside the
// reductions. pool2d (n, c, oh, ow, kh, kw): ow likewise. A reduce over the
// last dim keeps its output's only dim (d0) innermost, the reduction outside.
// transpose and broadcast: all parallel, in order. Ops that are not
// structured (tensor.fill) get nothing.
func.func @named(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<4x5xf32>, tensor<1x3x3x3xf32>, tensor<1x2x3x3xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<2x4x8xf32>) {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<4x5xf32>
  %m = tensor.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%f : tensor<4x5xf32>) -> tensor<4x5xf32>
  %fc = tensor.fill 0.000000e+00 : f32 : tensor<1x3x3x3xf32>
  %c = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) outs(%fc : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %fp = tensor.fill 0.000000e+00 : f32 : tensor<1x2x3x3xf32>
  %p = tensor.pool2d {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} ins(%x : tensor<1x2x5x5xf32>) outs(%fp : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %fr = tensor.fill 0.000000e+00 : f32 : tensor<4xf32>
  %r = tensor.reduce {dimensions = array<i64: 1>, kind = "add"} ins(%a : tensor<4x8xf32>) outs(%fr : tensor<4xf32>) -> tensor<4xf32>
  %et = tensor.empty : tensor<8x4xf32>
  %t = tensor.transpose {permutation = array<i64: 1, 0>} ins(%a : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) -> tensor<8x4xf32>
  %eb = tensor.empty : tensor<2x4x8xf32>
  %br = tensor.broadcast {dimensions = array<i64: 0>} ins(%a : tensor<4x8xf32>) outs(%eb : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %m, %c, %p, %r, %t, %br : tensor<4x5xf32>, tensor<1x3x3x3xf32>, tensor<1x2x3x3xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @named
// CHECK:       %f = tensor.fill 0.000000e+00 : f32 : tensor<4x5xf32>{{$}}
// CHECK:       %m = tensor.matmul {{.*}} attributes {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1]>}
// CHECK:       %c = tensor.conv2d {{.*}} attributes {schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3]>}
// CHECK:       %p = tensor.pool2d {{.*}} attributes {schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 3], parallel = [0, 1, 2, 3]>}
// CHECK:       %r = tensor.reduce {{.*}} attributes {schedule = #loop.schedule<order = [1, 0], parallel = [0]>}
// CHECK:       %t = tensor.transpose {{.*}} attributes {schedule = #loop.schedule<order = [0, 1], parallel = [0, 1]>}
// CHECK:       %br = tensor.broadcast {{.*}} attributes {schedule = #loop.schedule<order = [0, 1, 2], parallel = [0, 1, 2]>}

// -----

// Must not fire: an op that has a schedule keeps it, and the pass leaves
// the other attributes alone.
func.func @kept(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %m = tensor.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32> attributes {ember.fusion_group = 3 : i64, schedule = #loop.schedule<order = [2, 0, 1], tiles = [2, 0, 3], unroll = 2>}
  func.return %m : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK:       attributes {ember.fusion_group = 3 : i64, schedule = #loop.schedule<order = [2, 0, 1], tiles = [2, 0, 3], unroll = 2>}

// -----

// A schedule that is there is checked against its op: a matmul's k is a
// reduction and cannot run in parallel.
func.func @misfit(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %m = tensor.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32> attributes {schedule = #loop.schedule<order = [0, 1, 2], parallel = [2]>}
  func.return %m : tensor<4x5xf32>
}

// CHECK:       {{^}}tensor.matmul %m in @misfit: schedule runs d2 in parallel, but d2 is a reduction dim{{$}}
