// RUN: ember-opt %s | ember-opt | filecheck %s
// RUN: ember-opt %s --print-op-generic | ember-opt | filecheck %s

// #loop.schedule prints in its custom form and parses back to the same text,
// also from the generic form of the op that carries it. Fields print in one
// order (order, tiles, parallel, unroll, vector, pack, micro) and those at their default
// (no tiles, no parallel dims, unroll 1, no vector hint, no packing, no micro-kernel) are left out; the
// parser takes the fields in any order. Errors are in schedule-errors.mlir.

// Every field, on a linalg.matmul (dims m, n, k), given in another order
// than the printed one; tiles that do not divide the extents are fine. The
// packed operands keep their order.
func.func @every_field(%a: tensor<10x7xf32>, %b: tensor<7x13xf32>, %c: tensor<10x13xf32>) -> tensor<10x13xf32> {
  %m = linalg.matmul {schedule = #loop.schedule<pack = [1, 0], vector = 8, unroll = 4, parallel = [1, 0], tiles = [4, 5, 3], order = [2, 0, 1]>} ins(%a, %b : tensor<10x7xf32>, tensor<7x13xf32>) outs(%c : tensor<10x13xf32>) -> tensor<10x13xf32>
  %v = linalg.matmul {schedule = #loop.schedule<micro = [0, 1, 4, 16], vector = 8, pack = [1], tiles = [0, 16, 4], order = [0, 2, 1]>} ins(%a, %b : tensor<10x7xf32>, tensor<7x13xf32>) outs(%c : tensor<10x13xf32>) -> tensor<10x13xf32>
  func.return %m : tensor<10x13xf32>
}

// CHECK-LABEL: func.func @every_field
// CHECK:       linalg.matmul {schedule = #loop.schedule<order = [2, 0, 1], tiles = [4, 5, 3], parallel = [0, 1], unroll = 4, vector = 8, pack = [1, 0]>} ins(
// CHECK:       linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 16, 4], vector = 8, pack = [1], micro = [0, 1, 4, 16]>} ins(

// Only the order (the rest at their defaults), and fields written at their
// default values, which then print as if left out. An empty pack is allowed.
// (Both on a transpose, the generic convert-graph-to-tensor makes of one.)
func.func @defaults(%x: tensor<4x6xf32>, %e: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%e : tensor<6x4xf32>) attrs = {schedule = #loop.schedule<order = [1, 0]>} {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<6x4xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%e : tensor<6x4xf32>) attrs = {schedule = #loop.schedule<order = [0, 1], tiles = [0, 0], parallel = [], unroll = 1, vector = 0, pack = []>} {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<6x4xf32>
  func.return %t, %u : tensor<6x4xf32>, tensor<6x4xf32>
}

// CHECK-LABEL: func.func @defaults
// CHECK:       %t = linalg.generic
// CHECK-SAME:  attrs = {{ *}}{schedule = #loop.schedule<order = [1, 0]>}
// CHECK:       %u = linalg.generic
// CHECK-SAME:  attrs = {{ *}}{schedule = #loop.schedule<order = [0, 1]>}

// A 0-d iteration space has the empty order; the attribute also stands alone
// (here on a func.func, where nothing reads it).
func.func @empty_order(%x: tensor<f32>, %e: tensor<f32>) -> tensor<f32> attributes {note = #loop.schedule<order = []>} {
  %y = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%x : tensor<f32>) outs(%e : tensor<f32>) attrs = {schedule = #loop.schedule<order = []>} {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK-LABEL: func.func @empty_order
// CHECK-SAME:  attributes {note = #loop.schedule<order = []>}
// CHECK:       linalg.generic
// CHECK-SAME:  attrs = {{ *}}{schedule = #loop.schedule<order = []>}
