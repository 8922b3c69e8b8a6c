// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case is one ember_linalg.gather that breaks a rule of its verifier;
// every case checks that its function is the one reported, and the message.

func.func @axis_out_of_range(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<4x2xf32> {
  %g = ember_linalg.gather %t[%i] {axis = 2 : i64} : tensor<4x3xf32>, tensor<2xi64> -> tensor<4x2xf32>
  func.return %g : tensor<4x2xf32>
}

// CHECK:      sym_name = "axis_out_of_range"
// CHECK:      Operation does not verify: ember_linalg.gather: axis 2 is out of range for rank 2

// -----

func.func @float_indices(%t: tensor<4x3xf32>, %i: tensor<2xf32>) -> tensor<2x3xf32> {
  %g = ember_linalg.gather %t[%i] {axis = 0 : i64} : tensor<4x3xf32>, tensor<2xf32> -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// CHECK:      sym_name = "float_indices"
// CHECK:      Operation does not verify: ember_linalg.gather: indices must be integers

// -----

func.func @wrong_shape(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<3x2xf32> {
  %g = ember_linalg.gather %t[%i] {axis = 0 : i64} : tensor<4x3xf32>, tensor<2xi64> -> tensor<3x2xf32>
  func.return %g : tensor<3x2xf32>
}

// CHECK:      sym_name = "wrong_shape"
// CHECK:      Operation does not verify: ember_linalg.gather: result shape (3, 2) should be (2, 3)

// -----

func.func @wrong_element_type(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf16> {
  %g = ember_linalg.gather %t[%i] {axis = 0 : i64} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf16>
  func.return %g : tensor<2x3xf16>
}

// CHECK:      sym_name = "wrong_element_type"
// CHECK:      Operation does not verify: ember_linalg.gather: result and data element types differ
