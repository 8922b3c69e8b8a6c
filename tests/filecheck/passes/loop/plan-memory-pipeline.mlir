// RUN: ember-opt %s -p convert-tensor-to-loop,loop-plan-memory | filecheck %s

// The memory planner on the buffers convert-tensor-to-loop creates (allocs
// are emitted right before the nest that first writes them). %a is dead
// once %b is computed, so %c reuses its memory; %c is then only read through
// the reshape view %r (by the last nest), so it stays live and %d, computed
// before that nest, must not take offset 0 although %c's own last use (the
// loop.reshape) is behind it. The last value is written straight into %out0.
func.func @chain(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.mulf %p, %p : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.addf %p, %p : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %r_shape = arith.constant dense<[4, 4]> : tensor<2xi64>
  %r = tensor.reshape %c(%r_shape) : (tensor<16xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.subf %p, %p : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 * 4 + d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r, %d : tensor<4x4xf32>, tensor<16xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %n = arith.addf %p, %q : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @chain(%x: memref<16xf32>, %out0: memref<4x4xf32>) attributes {loop.arena_bytes = 192 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-NEXT:    %a = loop.alloc {offset = 0 : i64} : memref<16xf32>
// CHECK:         %b = loop.alloc {offset = 64 : i64} : memref<16xf32>
// CHECK:         %c = loop.alloc {offset = 0 : i64} : memref<16xf32>
// CHECK:         %[[VIEW:.*]] = loop.reshape %c : memref<16xf32> -> memref<4x4xf32>
// CHECK-NEXT:    %d = loop.alloc {offset = 128 : i64} : memref<16xf32>
// CHECK:           memref.load %[[VIEW]][
// CHECK:           memref.load %d[
// CHECK:           memref.store %{{.*}}, %out0[
// CHECK-NOT:     loop.alloc
