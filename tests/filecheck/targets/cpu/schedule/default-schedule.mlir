// RUN: ember-opt %s -p "tensor-default-schedule{cpu=generic}" --split-input-file --verify-diagnostics | filecheck %s

// tensor-default-schedule for a CPU without a vector unit (cpu=generic)
// attaches the scalar heuristic as a #loop.schedule to every structured op
// (linalg.generic, linalg.matmul, linalg.conv_2d_nchw_fchw) without one: the
// dims in declared order, except that the output's last dim moves inside the
// reduction dims; no tiles; every parallel dim listed as parallel.
// loop-generate uses the same default for an op without a schedule, so the
// pass changes no loop nest. (Micro-kernels for vector CPUs:
// default-schedule-micro.mlir; register blocks of other generics:
// default-schedule-register-blocking.mlir.)

// An elementwise generic: all dims parallel, in declared order.
func.func @elementwise(%x: tensor<2x3xf32>, %e: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @elementwise
// CHECK:       %y = linalg.generic {{.*}} attrs = {{ *}}{schedule = #loop.schedule<order = [0, 1], parallel = [0, 1]>} {

// -----

// Named ops get the schedule of their generalization. matmul (m, n, k): n
// moves inside k. conv_2d_nchw_fchw (n, f, oh, ow, c, kh, kw): ow moves
// inside the reductions. The generics convert-graph-to-tensor makes: a max
// pool (n, c, oh, ow, kh, kw): ow likewise; a reduction over the last dim
// keeps its output's only dim (d0) innermost, the reduction outside; a
// transpose and a broadcast: all parallel, in order. Ops that are not structured (linalg.fill) get nothing.
func.func @named(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<4x5xf32>, tensor<1x3x3x3xf32>, tensor<1x2x3x3xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<2x4x8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ef = tensor.empty() : tensor<4x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%ef : tensor<4x5xf32>) -> tensor<4x5xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%f : tensor<4x5xf32>) -> tensor<4x5xf32>
  %efc = tensor.empty() : tensor<1x3x3x3xf32>
  %fc = linalg.fill ins(%zero : f32) outs(%efc : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) outs(%fc : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %efp = tensor.empty() : tensor<1x2x3x3xf32>
  %fp = linalg.fill ins(%zero : f32) outs(%efp : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d4), (d3 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %window : tensor<1x2x5x5xf32>, tensor<3x3xf32>) outs(%fp : tensor<1x2x3x3xf32>) {
  ^bb0(%v: f32, %k: f32, %acc: f32):
    %max = arith.maxnumf %acc, %v : f32
    linalg.yield %max : f32
  } -> tensor<1x2x3x3xf32>
  %efr = tensor.empty() : tensor<4xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%efr : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf32>) outs(%fr : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<4xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %eb = tensor.empty() : tensor<2x4x8xf32>
  %br = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%eb : tensor<2x4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x4x8xf32>
  func.return %m, %c, %p, %r, %t, %br : tensor<4x5xf32>, tensor<1x3x3x3xf32>, tensor<1x2x3x3xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @named
// CHECK:       %f = linalg.fill ins(%zero : f32) outs(%ef : tensor<4x5xf32>) -> tensor<4x5xf32>{{$}}
// CHECK:       %m = linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1]>} ins(
// CHECK:       %c = linalg.conv_2d_nchw_fchw {schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3]>, strides
// CHECK:       %p = linalg.generic {{.*}} attrs = {{ *}}{schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 3], parallel = [0, 1, 2, 3]>} {
// CHECK:       %r = linalg.generic {{.*}} attrs = {{ *}}{schedule = #loop.schedule<order = [1, 0], parallel = [0]>} {
// CHECK:       %t = linalg.generic {{.*}} attrs = {{ *}}{schedule = #loop.schedule<order = [0, 1], parallel = [0, 1]>} {
// CHECK:       %br = linalg.generic {{.*}} attrs = {{ *}}{schedule = #loop.schedule<order = [0, 1, 2], parallel = [0, 1, 2]>} {

// -----

// Must not fire: an op that has a schedule keeps it, and the pass leaves
// the other attributes alone.
func.func @kept(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %m = linalg.matmul {ember.note = 3 : i64, schedule = #loop.schedule<order = [2, 0, 1], tiles = [2, 0, 3], unroll = 2>} ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %m : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK:       linalg.matmul {ember.note = 3 : i64, schedule = #loop.schedule<order = [2, 0, 1], tiles = [2, 0, 3], unroll = 2>} ins(

// -----

// A schedule that is there is checked against its op: a matmul's k is a
// reduction and cannot run in parallel.
func.func @misfit(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %m = linalg.matmul {schedule = #loop.schedule<order = [0, 1, 2], parallel = [2]>} ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %m : tensor<4x5xf32>
}

// CHECK:       {{^}}linalg.matmul %m in @misfit: schedule runs d2 in parallel, but d2 is a reduction dim{{$}}
