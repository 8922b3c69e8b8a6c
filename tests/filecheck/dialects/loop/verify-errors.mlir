// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case is one loop.weight that breaks a rule of its verifier (the rest
// of the loop level is upstream scf/memref, verified upstream). With
// --verify-diagnostics, ember-opt prints each chunk's diagnostic next to the
// (generic) IR and goes on with the next chunk; every case checks that its
// function is the one reported, and the exact message.

// weight: a static buffer (the blob needs its size).
func.func @weight_dynamic() {
  %w = loop.weight dense<1.000000e+00> : tensor<4xf32> -> memref<?xf32>
  func.return
}

// CHECK:      sym_name = "weight_dynamic"
// CHECK:      Operation does not verify: loop.weight: result must be a static memref, got memref<?xf32>

// -----

// weight: the value and the buffer have one shape (4 vs 2x2).
func.func @weight_shape() {
  %w = loop.weight dense<1.000000e+00> : tensor<4xf32> -> memref<2x2xf32>
  func.return
}

// CHECK:      sym_name = "weight_shape"
// CHECK:      Operation does not verify: loop.weight: the value and the buffer must have one type

// -----

// weight: ... and one element type (f32 vs f16).
func.func @weight_element_type() {
  %w = loop.weight dense<1.000000e+00> : tensor<4xf32> -> memref<4xf16>
  func.return
}

// CHECK:      sym_name = "weight_element_type"
// CHECK:      Operation does not verify: loop.weight: the value and the buffer must have one type
