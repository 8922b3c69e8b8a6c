// RUN: ember-opt %s | ember-opt | filecheck %s

// ember_linalg.gather prints and parses back unchanged.
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<2x5xi64>) -> tensor<2x5x16xf32> {
  %e = ember_linalg.gather %table[%ids] {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>], data_map = affine_map<(d0, d1, d2)[s0] -> (s0, d2)>} : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>
  func.return %e : tensor<2x5x16xf32>
}

// CHECK: %e = ember_linalg.gather %table[%ids] {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>], data_map = affine_map<(d0, d1, d2)[s0] -> (s0, d2)>} : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>

// ember_linalg.scatter, with its combine region, too.
func.func @scatter_add(%u: tensor<2x3xf32>, %i: tensor<2x1xi64>, %t: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %s = ember_linalg.scatter %u[%i] into %t {index_maps = [affine_map<(d0, d1) -> (d0, 0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<2x3xf32>, tensor<2x1xi64>, tensor<4x3xf32> -> tensor<4x3xf32> {
  ^bb0(%update: f32, %current: f32):
    %sum = arith.addf %update, %current : f32
    linalg.yield %sum : f32
  }
  func.return %s : tensor<4x3xf32>
}

// CHECK:      %s = ember_linalg.scatter %u[%i] into %t {index_maps = [affine_map<(d0, d1) -> (d0, 0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<2x3xf32>, tensor<2x1xi64>, tensor<4x3xf32> -> tensor<4x3xf32> {
// CHECK-NEXT: ^bb0(%update: f32, %current: f32):
// CHECK-NEXT:   %sum = arith.addf %update, %current : f32
// CHECK-NEXT:   linalg.yield %sum : f32
// CHECK-NEXT: }
