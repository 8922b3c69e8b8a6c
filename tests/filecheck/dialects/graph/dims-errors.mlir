// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not ember-opt %S/Inputs/dims-parse-errors.mlir --split-input-file 2>&1 | filecheck %s --check-prefix=PARSE

// What the verifier says of symbolic dims: an encoding must list one entry per
// `?` of its type, and a result whose symbols are not the ones its operands
// imply is an error (the same expression in another form is not: the IR holds
// canonical forms).

func.func @count(%x: tensor<?x?xf32, #graph.dims<N>>) -> tensor<?x?xf32> {
  %y = graph.relu %x : (tensor<?x?xf32, #graph.dims<N>>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK:      sym_name = "count"
// CHECK:      Operation does not verify: graph.relu: tensor<?x?xf32, #graph.dims<N>> has 2 '?' dims but its #graph.dims lists 1

// -----

func.func @disagree(%x: tensor<?x4xf32, #graph.dims<N>>) -> tensor<?x4xf32, #graph.dims<M>> {
  %y = graph.relu %x : (tensor<?x4xf32, #graph.dims<N>>) -> tensor<?x4xf32, #graph.dims<M>>
  func.return %y : tensor<?x4xf32, #graph.dims<M>>
}

// CHECK:      sym_name = "disagree"
// CHECK:      Operation does not verify: graph.relu: result #0 has type tensor<?x4xf32, #graph.dims<M>>, but the operands imply tensor<?x4xf32, #graph.dims<N>>

// -----

// A range with no size in it.
func.func @empty_range(%x: tensor<?xf32, #graph.dims<N>>) attributes {graph.symbols = {N = #graph.range<5, 2>}} {
  func.return
}

// RANGE: error: graph.range: the range 5..2 is empty

// The expression syntax: floordiv, ceildiv and mod need a positive constant,
// and an expression must be complete (Inputs/dims-parse-errors.mlir).
// PARSE: dims-parse-errors.mlir:1:66: error: floordiv needs a positive constant
