// RUN: ember-opt %s -p 'graph-bind-symbols{sizes="N=8"}' | filecheck %s
// RUN: ember-opt %s -p 'graph-bind-symbols{sizes="N=8,H=224"}' | filecheck %s --check-prefix=ALL
// RUN: not ember-opt %s -p 'graph-bind-symbols{sizes="N=100"}' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not ember-opt %s -p 'graph-bind-symbols{sizes="S=3"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ember-opt %s -p 'graph-bind-symbols{sizes="N"}' 2>&1 | filecheck %s --check-prefix=SYNTAX

func.func @conv(%x: tensor<?x3x?x?xf32, #graph.dims<N, H, H>>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32, #graph.dims<N, (H + 1) floordiv 2, (H + 1) floordiv 2>> attributes {graph.symbols = {H = #graph.range<3, ?>, N = #graph.range<1, 64>}} {
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf32, #graph.dims<N, H, H>>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32, #graph.dims<N, (H + 1) floordiv 2, (H + 1) floordiv 2>>
  func.return %y : tensor<?x8x?x?xf32, #graph.dims<N, (H + 1) floordiv 2, (H + 1) floordiv 2>>
}

// Binding N leaves H symbolic, in graph.symbols.
// CHECK:      func.func @conv(%x: tensor<8x3x?x?xf32, #graph.dims<H, H>>, %w: tensor<8x3x3x3xf32>) -> tensor<8x8x?x?xf32, #graph.dims<(H + 1) floordiv 2, (H + 1) floordiv 2>> attributes {graph.symbols = {H = #graph.range<3, ?>}} {
// CHECK-NEXT:   %y = graph.conv {{.*}} -> tensor<8x8x?x?xf32, #graph.dims<(H + 1) floordiv 2, (H + 1) floordiv 2>>

// Binding every symbol makes every type static and drops graph.symbols.
// ALL:        func.func @conv(%x: tensor<8x3x224x224xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<8x8x112x112xf32> {
// ALL-NEXT:     %y = graph.conv {{.*}} -> tensor<8x8x112x112xf32>

// RANGE:      error: graph-bind-symbols: N = 100 is outside its range 1..64
// UNKNOWN:    error: graph-bind-symbols: conv has no symbol S (its symbols: H, N)
// SYNTAX:     error: graph-bind-symbols: sizes must read NAME=SIZE,..., got 'N'
