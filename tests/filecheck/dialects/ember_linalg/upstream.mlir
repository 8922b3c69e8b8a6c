// RUN: ember-opt %s | ember-opt | filecheck %s

// The tensor level is xDSL's own `tensor` and `linalg` ops: Ember's dialects
// shadow none of them, so they parse and print in ember-opt as in xdsl-opt,
// discardable attributes included where the op prints them.
func.func @upstream(%x: tensor<4x4xf32>) -> (tensor<3x2xf32>, tensor<2x2xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<3x2xf32>
  %s = tensor.extract_slice %x[1, 0] [2, 2] [1, 2] : tensor<4x4xf32> to tensor<2x2xf32>
  %o = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%o : tensor<4x4xf32>) attrs = {ember.note = 0 : i64} {
  ^bb0(%a: f32, %b: f32):
    %i = linalg.index 0 : index
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  func.return %e, %s, %g : tensor<3x2xf32>, tensor<2x2xf32>, tensor<4x4xf32>
}

// CHECK:      %e = tensor.empty() : tensor<3x2xf32>
// CHECK-NEXT: %s = tensor.extract_slice %x[1, 0] [2, 2] [1, 2] : tensor<4x4xf32> to tensor<2x2xf32>
// CHECK-NEXT: %o = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%o : tensor<4x4xf32>) attrs = {{ *}}{ember.note = 0 : i64} {
// CHECK-NEXT: ^bb0(%a: f32, %b: f32):
// CHECK-NEXT:   %i = linalg.index 0 : index
// CHECK-NEXT:   linalg.yield %a : f32
// CHECK-NEXT: } -> tensor<4x4xf32>
