// RUN: ember-opt %s | ember-opt | filecheck %s

// ember_linalg.gather prints and parses back unchanged.
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<2x5xi64>) -> tensor<2x5x16xf32> {
  %e = ember_linalg.gather %table[%ids] {axis = 0 : i64} : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>
  func.return %e : tensor<2x5x16xf32>
}

// CHECK: %e = ember_linalg.gather %table[%ids] {axis = 0 : i64} : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>
