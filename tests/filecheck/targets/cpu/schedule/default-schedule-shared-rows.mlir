// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver4}" | filecheck %s

// A micro-kernel's m is a parallel output dim that no operand read as
// vectors depends on; where every one is read so, one that some vector
// operand does not depend on (its reads are shared by the rows), the dim
// that the fewest depend on.

// Depthwise NHWC (n, oh, ow, g, kh, kw): the input and the weights both
// depend on g (n); the weights do not depend on ow or oh: m = ow (d2), the
// innermost of the two.
func.func @depthwise_nhwc(%x: tensor<1x10x10x64xf32>, %w: tensor<3x3x64xf32>, %o: tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x10x10x64xf32>, tensor<3x3x64xf32>) outs(%o : tensor<1x8x8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x64xf32>
  func.return %y : tensor<1x8x8x64xf32>
}

// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK:         micro = [2, 3, 4, 64]

// No operand depends on n (the sums broadcast along it): every parallel
// output dim may be m, as for any contraction, here d0.
func.func @broadcast_columns(%a: tensor<12x8xf32>, %b: tensor<12x8xf32>, %o: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<12x8xf32>, tensor<12x8xf32>) outs(%o : tensor<12x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x32xf32>
  func.return %y : tensor<12x32xf32>
}

// CHECK-LABEL: func.func @broadcast_columns
// CHECK:         micro = [0, 1,

// Must not fire: both operands, read as vectors, depend on every parallel
// output dim (an elementwise product summed over k): no rows could share a
// read, so no micro-kernel.
func.func @no_shared_rows(%a: tensor<12x8x32xf32>, %b: tensor<12x8x32xf32>, %o: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<12x8x32xf32>, tensor<12x8x32xf32>) outs(%o : tensor<12x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x32xf32>
  func.return %y : tensor<12x32xf32>
}

// CHECK-LABEL: func.func @no_shared_rows
// CHECK-NOT:     micro
// CHECK:         func.return
