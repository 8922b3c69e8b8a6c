// RUN: ember-opt %s | ember-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// Einsum is one generic over its subscripts: the result's are parallel, the
// others reductions; a repeated subscript reads a diagonal.
func.func @einsum(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>, %d: tensor<3x5x5xf32>) -> (tensor<5x2x4xf32>, tensor<3x5xf32>) {
  %bmm = graph.einsum %a, %b {equation = "bij, bjk -> bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  %diag = graph.einsum %d {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  func.return %bmm, %diag : tensor<5x2x4xf32>, tensor<3x5xf32>
}

// ROUNDTRIP:      %bmm = graph.einsum %a, %b {equation = "bij, bjk -> bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
// ROUNDTRIP-NEXT: %diag = graph.einsum %d {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>

// CHECK:      %bmm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<5x2x3xf32>, tensor<5x3x4xf32>)
// CHECK:        %[[P:.*]] = arith.mulf
// CHECK-NEXT:   arith.addf %{{.*}}, %[[P]] : f32
// CHECK:      %diag = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<3x5x5xf32>)
