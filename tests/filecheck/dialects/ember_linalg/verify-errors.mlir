// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case is one ember_linalg.gather or ember_linalg.scatter that breaks a
// rule of its verifier; every case checks that its function is the one
// reported, and the message.

func.func @map_rank(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %g = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1, d0)>} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// CHECK:      sym_name = "map_rank"
// CHECK:      Operation does not verify: ember_linalg.gather: data_map (d0, d1)[s0] -> (s0, d1, d0) must take 2 dims and 1 symbols and give the 2 axes of (4, 3)

// -----

func.func @index_map_rank(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %g = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0, d1)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// CHECK:      sym_name = "index_map_rank"
// CHECK:      Operation does not verify: ember_linalg.gather: index map (d0, d1) -> (d0, d1) must take the 2 dims of (2, 3) and give the 1 of the indices

// -----

func.func @symbol_twice(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %g = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, s0)>} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// CHECK:      sym_name = "symbol_twice"
// CHECK:      Operation does not verify: ember_linalg.gather: each symbol of data_map (d0, d1)[s0] -> (s0, s0) must be one whole result, once

// -----

func.func @float_indices(%t: tensor<4x3xf32>, %i: tensor<2xf32>) -> tensor<2x3xf32> {
  %g = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<4x3xf32>, tensor<2xf32> -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// CHECK:      sym_name = "float_indices"
// CHECK:      Operation does not verify: ember_linalg.gather: indices must be integers

// -----

func.func @reads_outside(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x5xf32> {
  %g = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x5xf32>
  func.return %g : tensor<2x5xf32>
}

// CHECK:      sym_name = "reads_outside"
// CHECK:      Operation does not verify: ember_linalg.gather: data_map (d0, d1)[s0] -> (s0, d1) reaches outside (4, 3)

// -----

func.func @wrong_element_type(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf16> {
  %g = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf16>
  func.return %g : tensor<2x3xf16>
}

// CHECK:      sym_name = "wrong_element_type"
// CHECK:      Operation does not verify: ember_linalg.gather: result and data element types differ

// -----

func.func @scatter_block(%u: tensor<2x3xf32>, %i: tensor<2xi64>, %t: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %s = ember_linalg.scatter %u[%i] into %t {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<2x3xf32>, tensor<2xi64>, tensor<4x3xf32> -> tensor<4x3xf32> {
  ^bb0(%a: f32):
    linalg.yield %a : f32
  }
  func.return %s : tensor<4x3xf32>
}

// CHECK:      sym_name = "scatter_block"
// CHECK:      Operation does not verify: ember_linalg.scatter: the combine block must take (update, current) of f32

// -----

func.func @scatter_result(%u: tensor<2x3xf32>, %i: tensor<2xi64>, %t: tensor<4x3xf32>) -> tensor<4x4xf32> {
  %s = ember_linalg.scatter %u[%i] into %t {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<2x3xf32>, tensor<2xi64>, tensor<4x3xf32> -> tensor<4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  func.return %s : tensor<4x4xf32>
}

// CHECK:      sym_name = "scatter_result"
// CHECK:      Operation does not verify: ember_linalg.scatter: the result must have the target's type

// -----

func.func @scatter_on_buffers_with_a_result(%u: memref<2x3xf32>, %i: memref<2xi64>, %t: memref<4x3xf32>) -> tensor<4x3xf32> {
  %s = ember_linalg.scatter %u[%i] into %t {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : memref<2x3xf32>, memref<2xi64>, memref<4x3xf32> -> tensor<4x3xf32> {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  func.return %s : tensor<4x3xf32>
}

// CHECK:      sym_name = "scatter_on_buffers_with_a_result"
// CHECK:      Operation does not verify: ember_linalg.scatter: updates, indices and target must all be tensors (with a result) or all memrefs (updated in place, no result)
