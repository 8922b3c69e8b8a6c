// RUN: ember-opt %s -p convert-tensor-to-loop,loop-generate,loop-plan-memory | filecheck %s

// The memory planner on the buffers convert-tensor-to-loop creates (allocs
// are emitted right before the nest that first writes them). %a is dead
// once %b is computed, so %c reuses its memory; %c is then only read through
// the reshape view %r (by the last nest), so it stays live and %d, computed
// before that nest, must not take offset 0 although %c's own last use (the
// memref.reinterpret_cast) is behind it. The last value is written straight into %out0.
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

// CHECK-LABEL: func.func @chain(%x: memref<16xf32>, %out0: memref<4x4xf32>, %arena: memref<192xi8> {ember.arena}) attributes {loop.arena_bytes = 192 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-DAG:     %[[AT0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[AT64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[AT128:.*]] = arith.constant 128 : index
// CHECK:         %a = memref.view %arena[%[[AT0]]][] : memref<192xi8> to memref<16xf32>
// CHECK:         %b = memref.view %arena[%[[AT64]]][] : memref<192xi8> to memref<16xf32>
// CHECK:         %c = memref.view %arena[%[[AT0]]][] : memref<192xi8> to memref<16xf32>
// CHECK:         %[[VIEW:.*]] = memref.reinterpret_cast %c to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<16xf32> to memref<4x4xf32>
// CHECK-NEXT:    %d = memref.view %arena[%[[AT128]]][] : memref<192xi8> to memref<16xf32>
// CHECK:             memref.load %[[VIEW]][
// CHECK:             memref.load %d[
// CHECK:             memref.store %{{.*}}, %out0[
// CHECK-NOT:     memref.alloc
