// RUN: ember-opt %s -p convert-graph-to-tensor --split-input-file --verify-diagnostics | filecheck %s

// Symbolic dims get their sizes at run time: each symbol is read once, at
// the top of the function, from an input that has it as a dim
// (`tensor.dim`, marked with the symbol's name); an expression over symbols
// is arith on those values. Tensor types keep their #graph.dims encoding.
func.func @rows(%x: tensor<?x16xf32, #graph.dims<N>>, %w: tensor<16x8xf32>) -> tensor<?x8xf32, #graph.dims<N>> attributes {graph.symbols = {N = #graph.range<1, ?>}} {
  %y = graph.matmul %x, %w : (tensor<?x16xf32, #graph.dims<N>>, tensor<16x8xf32>) -> tensor<?x8xf32, #graph.dims<N>>
  %z = graph.relu %y : (tensor<?x8xf32, #graph.dims<N>>) -> tensor<?x8xf32, #graph.dims<N>>
  func.return %z : tensor<?x8xf32, #graph.dims<N>>
}

// CHECK-LABEL: func.func @rows
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %N = tensor.dim {ember.symbol = "N"} %x, %[[ZERO]] : tensor<?x16xf32, #graph.dims<N>>
// CHECK:         %[[E:.*]] = tensor.empty(%N) : tensor<?x8xf32, #graph.dims<N>>
// CHECK:         linalg.matmul {{.*}} -> tensor<?x8xf32, #graph.dims<N>>
// CHECK:         tensor.empty(%N) : tensor<?x8xf32, #graph.dims<N>>
// CHECK-NOT:     tensor.dim

// -----

// A reshape that regroups symbolic dims is a tensor.collapse_shape of the
// source's dims into groups and a tensor.expand_shape of each group, its
// sizes computed from the symbols.
func.func @heads(%x: tensor<1x?x64xf32, #graph.dims<S>>) -> tensor<?x16xf32, #graph.dims<4 * S>> attributes {graph.symbols = {S = #graph.range<1, 4096>}} {
  %shape = graph.constant dense<[1, -1, 4, 16]> : tensor<4xi64>
  %h = graph.reshape %x, %shape : (tensor<1x?x64xf32, #graph.dims<S>>, tensor<4xi64>) -> tensor<1x?x4x16xf32, #graph.dims<S>>
  %t = graph.transpose %h {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x?x4x16xf32, #graph.dims<S>>) -> tensor<1x4x?x16xf32, #graph.dims<S>>
  %rows = graph.constant dense<[-1, 16]> : tensor<2xi64>
  %m = graph.reshape %t, %rows : (tensor<1x4x?x16xf32, #graph.dims<S>>, tensor<2xi64>) -> tensor<?x16xf32, #graph.dims<4 * S>>
  func.return %m : tensor<?x16xf32, #graph.dims<4 * S>>
}

// CHECK-LABEL: func.func @heads
// CHECK:         %S = tensor.dim {ember.symbol = "S"} %x, %{{.*}}
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %x {{\[}}[0 : i64, 1 : i64], [2 : i64]] : tensor<1x?x64xf32, #graph.dims<S>> into tensor<?x64xf32, #graph.dims<S>>
// CHECK:         tensor.expand_shape %[[ROWS]] {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [1, %S, 4, 16] : tensor<?x64xf32, #graph.dims<S>> into tensor<1x?x4x16xf32, #graph.dims<S>>
// CHECK:         linalg.generic
// CHECK:         tensor.collapse_shape %t {{\[}}[0 : i64, 1 : i64, 2 : i64], [3 : i64]] : tensor<1x4x?x16xf32, #graph.dims<S>> into tensor<?x16xf32, #graph.dims<4 * S>>

// -----

// Sizes that do not regroup (a symbol split across dims) are an error.
func.func @split(%x: tensor<1x4x?x16xf32, #graph.dims<S>>) -> tensor<1x?x256xf32, #graph.dims<S floordiv 4>> attributes {graph.symbols = {S = #graph.range<4, 4096>}} {
  %shape = graph.constant dense<[1, -1, 256]> : tensor<3xi64>
  // expected-error @+1 {{convert-graph-to-tensor: cannot lower 1 op: graph.reshape ([1, 4, S, 16] does not regroup as [1, S floordiv 4, 256])}}
  %m = graph.reshape %x, %shape : (tensor<1x4x?x16xf32, #graph.dims<S>>, tensor<3xi64>) -> tensor<1x?x256xf32, #graph.dims<S floordiv 4>>
  func.return %m : tensor<1x?x256xf32, #graph.dims<S floordiv 4>>
}

// -----

// Windows take a symbolic batch; symbolic image sizes are reported.
func.func @conv(%x: tensor<?x3x?x8xf32, #graph.dims<N, H>>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x?x6xf32, #graph.dims<N, H - 2>> attributes {graph.symbols = {H = #graph.range<3, ?>, N = #graph.range<1, ?>}} {
  // expected-error @+1 {{convert-graph-to-tensor: cannot lower 1 op: graph.conv (symbolic sizes (H) past the batch dim not lowered yet)}}
  %y = graph.conv %x, %w : (tensor<?x3x?x8xf32, #graph.dims<N, H>>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x6xf32, #graph.dims<N, H - 2>>
  func.return %y : tensor<?x4x?x6xf32, #graph.dims<N, H - 2>>
}

// -----

// A Concat along a static axis takes symbolic dims elsewhere; along a
// symbolic one the slabs' offsets are run-time values (the bufferized
// copies' subviews take them).
func.func @concat(%x: tensor<?x2xf32, #graph.dims<N>>, %y: tensor<?x3xf32, #graph.dims<N>>) -> tensor<?x5xf32, #graph.dims<N>> attributes {graph.symbols = {N = #graph.range<1, ?>}} {
  %z = graph.concat %x, %y {axis = 1 : i64} : (tensor<?x2xf32, #graph.dims<N>>, tensor<?x3xf32, #graph.dims<N>>) -> tensor<?x5xf32, #graph.dims<N>>
  func.return %z : tensor<?x5xf32, #graph.dims<N>>
}
// CHECK-LABEL: func.func @concat
// CHECK:         tensor.concat dim(1) %x, %y : (tensor<?x2xf32, #graph.dims<N>>, tensor<?x3xf32, #graph.dims<N>>) -> tensor<?x5xf32, #graph.dims<N>>

// -----

func.func @concat_along(%x: tensor<?x2xf32, #graph.dims<N>>, %y: tensor<4x2xf32>) -> tensor<?x2xf32, #graph.dims<N + 4>> attributes {graph.symbols = {N = #graph.range<1, ?>}} {
  %z = graph.concat %x, %y {axis = 0 : i64} : (tensor<?x2xf32, #graph.dims<N>>, tensor<4x2xf32>) -> tensor<?x2xf32, #graph.dims<N + 4>>
  func.return %z : tensor<?x2xf32, #graph.dims<N + 4>>
}
// CHECK-LABEL: func.func @concat_along
// CHECK:         tensor.concat dim(0) %x, %y : (tensor<?x2xf32, #graph.dims<N>>, tensor<4x2xf32>) -> tensor<?x2xf32, #graph.dims<N + 4>>

// -----

// A Slice whose ends are computed from a symbolic shape (the position ids
// of a transformer, sliced to the sequence length) reads its sizes from its
// result type: a tensor.extract_slice of run-time size S. The shape
// arithmetic behind the ends is not lowered; it is dead once the Slice is.
func.func @positions(%ids: tensor<?x?xi64, #graph.dims<N, S>>, %table: tensor<64x16xf32>) -> tensor<?x16xf32, #graph.dims<S>> attributes {graph.symbols = {N = #graph.range<1, ?>, S = #graph.range<1, 64>}} {
  %zero = graph.constant dense<0> : tensor<1xi64>
  %one = graph.constant dense<1> : tensor<1xi64>
  %shape = graph.shape %ids : (tensor<?x?xi64, #graph.dims<N, S>>) -> tensor<2xi64>
  %seq = graph.gather %shape, %one {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %p = graph.slice %table, %zero, %seq, axes %zero : (tensor<64x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x16xf32, #graph.dims<S>>
  func.return %p : tensor<?x16xf32, #graph.dims<S>>
}
// CHECK-LABEL: func.func @positions
// CHECK:         %S = tensor.dim {ember.symbol = "S"} %ids, %{{.*}}
// CHECK-NOT:     graph.{{shape|gather|slice}}
// CHECK:         tensor.extract_slice %table[0, 0] [%S, 16] [1, 1] : tensor<64x16xf32> to tensor<?x16xf32, #graph.dims<S>>
// CHECK-NOT:     graph.{{shape|gather|slice}}

// -----

// A Gather with symbolic indices (an embedding lookup) reads them at run
// time, as do constant indices along a symbolic axis.
func.func @embed(%table: tensor<100x16xf32>, %ids: tensor<?x?xi64, #graph.dims<N, S>>, %x: tensor<?x4xf32, #graph.dims<N>>) -> (tensor<?x?x16xf32, #graph.dims<N, S>>, tensor<1x4xf32>) attributes {graph.symbols = {N = #graph.range<1, ?>, S = #graph.range<1, ?>}} {
  %e = graph.gather %table, %ids : (tensor<100x16xf32>, tensor<?x?xi64, #graph.dims<N, S>>) -> tensor<?x?x16xf32, #graph.dims<N, S>>
  %last = graph.constant dense<-1> : tensor<1xi64>
  %l = graph.gather %x, %last : (tensor<?x4xf32, #graph.dims<N>>, tensor<1xi64>) -> tensor<1x4xf32>
  func.return %e, %l : tensor<?x?x16xf32, #graph.dims<N, S>>, tensor<1x4xf32>
}
// CHECK-LABEL: func.func @embed
// CHECK:         ember_linalg.gather {{.*}} -> tensor<?x?x16xf32, #graph.dims<N, S>>
// CHECK:         ember_linalg.gather {{.*}} -> tensor<1x4xf32>

// -----

// A start that depends on a symbolic size (the last row of N, `x[-1:]`) is
// an offset computed from the symbol.
func.func @tail(%x: tensor<?x4xf32, #graph.dims<N>>) -> tensor<1x4xf32> attributes {graph.symbols = {N = #graph.range<1, ?>}} {
  %start = graph.constant dense<-1> : tensor<1xi64>
  %end = graph.constant dense<9223372036854775807> : tensor<1xi64>
  %axis = graph.constant dense<0> : tensor<1xi64>
  %t = graph.slice %x, %start, %end, axes %axis : (tensor<?x4xf32, #graph.dims<N>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4xf32>
  func.return %t : tensor<1x4xf32>
}
// CHECK-LABEL: func.func @tail
// CHECK:         %[[MINUS:.*]] = arith.constant -1 : index
// CHECK:         %N = tensor.dim {ember.symbol = "N"} %x
// CHECK-NEXT:    %[[LAST:.*]] = arith.addi %[[MINUS]], %N : index
// CHECK-NEXT:    tensor.extract_slice %x[%[[LAST]], 0] [1, 4] [1, 1] : tensor<?x4xf32, #graph.dims<N>> to tensor<1x4xf32>

// -----

// A negative step along a symbolic axis is reported.
func.func @reverse(%x: tensor<?x4xf32, #graph.dims<N>>) -> tensor<?x4xf32, #graph.dims<N>> attributes {graph.symbols = {N = #graph.range<1, ?>}} {
  %start = graph.constant dense<-1> : tensor<1xi64>
  %end = graph.constant dense<-9223372036854775807> : tensor<1xi64>
  %axis = graph.constant dense<0> : tensor<1xi64>
  %step = graph.constant dense<-1> : tensor<1xi64>
  // expected-error @+1 {{convert-graph-to-tensor: cannot lower 1 op: graph.slice (a negative step along the symbolic axis of size N)}}
  %t = graph.slice %x, %start, %end, axes %axis, steps %step : (tensor<?x4xf32, #graph.dims<N>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32, #graph.dims<N>>
  func.return %t : tensor<?x4xf32, #graph.dims<N>>
}

// -----

// Shape values used as data: a Shape of symbolic dims is a tensor.from_elements
// of their sizes; a Range to a computed limit (position ids) a generic on
// linalg.index, its size the result type's; a ConstantOfShape of symbolic
// sizes a fill. The shape arithmetic between them (Gather, Concat) only
// feeds operands that are not read, and is not lowered.
func.func @shape_values(%x: tensor<?x?xi1, #graph.dims<B, S>>) -> (tensor<2xi64>, tensor<?xi64, #graph.dims<S>>, tensor<?x?xf32, #graph.dims<S, S>>) attributes {graph.symbols = {B = #graph.range<1, ?>, S = #graph.range<1, ?>}} {
  %shape = graph.shape %x : (tensor<?x?xi1, #graph.dims<B, S>>) -> tensor<2xi64>
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %s = graph.gather %shape, %one {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %positions = graph.range %zero, %s, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #graph.dims<S>>
  %square = graph.shape %x {start = 1 : i64} : (tensor<?x?xi1, #graph.dims<B, S>>) -> tensor<1xi64>
  %twice = graph.concat %square, %square {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %ones = graph.constant_of_shape %twice {value = dense<1.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32, #graph.dims<S, S>>
  func.return %shape, %positions, %ones : tensor<2xi64>, tensor<?xi64, #graph.dims<S>>, tensor<?x?xf32, #graph.dims<S, S>>
}

// CHECK-LABEL: func.func @shape_values
// CHECK:         %B = tensor.dim {ember.symbol = "B"} %x
// CHECK:         %S = tensor.dim {ember.symbol = "S"} %x
// CHECK-NEXT:    %[[B64:.*]] = arith.index_cast %B : index to i64
// CHECK-NEXT:    %[[S64:.*]] = arith.index_cast %S : index to i64
// CHECK-NEXT:    %shape = tensor.from_elements %[[B64]], %[[S64]] : tensor<2xi64>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%S) : tensor<?xi64, #graph.dims<S>>
// CHECK-NEXT:    %positions = linalg.generic {{.*}} outs(%[[E]] : tensor<?xi64, #graph.dims<S>>)
// CHECK:           %[[P:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK-NEXT:      linalg.yield %[[I]] : i64
// CHECK-NOT:     = graph.
// CHECK:         %ones = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x?xf32, #graph.dims<S, S>>)

// -----

// A Range to a computed limit writes start + i * delta, without the add of a
// start of 0 or the mul by a delta of 1.
func.func @range_steps(%x: tensor<?xi1, #graph.dims<S>>) -> (tensor<?xi64, #graph.dims<S>>, tensor<?xi64, #graph.dims<S>>) attributes {graph.symbols = {S = #graph.range<1, ?>}} {
  %shape = graph.shape %x : (tensor<?xi1, #graph.dims<S>>) -> tensor<1xi64>
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %two = graph.constant dense<2> : tensor<i64>
  %three = graph.constant dense<3> : tensor<i64>
  %s = graph.gather %shape, %zero {axis = 0 : i64} : (tensor<1xi64>, tensor<i64>) -> tensor<i64>
  %s_plus_3 = graph.add %s, %three : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %twice_s = graph.mul %s, %two : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %shifted = graph.range %three, %s_plus_3, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #graph.dims<S>>
  %evens = graph.range %zero, %twice_s, %two : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #graph.dims<S>>
  func.return %shifted, %evens : tensor<?xi64, #graph.dims<S>>, tensor<?xi64, #graph.dims<S>>
}

// CHECK-LABEL: func.func @range_steps
// CHECK:         %shifted = linalg.generic
// CHECK:           %[[P:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK-NEXT:      %[[START:.*]] = arith.constant 3 : i64
// CHECK-NEXT:      %[[V:.*]] = arith.addi %[[START]], %[[I]] : i64
// CHECK-NEXT:      linalg.yield %[[V]] : i64
// CHECK:         %evens = linalg.generic
// CHECK:           %[[P2:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I2:.*]] = arith.index_cast %[[P2]] : index to i64
// CHECK-NEXT:      %[[DELTA:.*]] = arith.constant 2 : i64
// CHECK-NEXT:      %[[V2:.*]] = arith.muli %[[I2]], %[[DELTA]] : i64
// CHECK-NEXT:      linalg.yield %[[V2]] : i64

// -----

// A size shape inference could not decide from the symbols' ranges (an
// exporter's Slice to `S` of a 512-row table has min(S, 512) rows) is `?`;
// the error says that a narrower range may decide it.
func.func @undecided(%ids: tensor<1x?xi64, #graph.dims<S>>, %rows: tensor<1x?xi64>) -> tensor<1x?xi64> attributes {graph.symbols = {S = #graph.range<1, ?>}} {
  %y = graph.neg %rows : (tensor<1x?xi64>) -> tensor<1x?xi64>
  func.return %y : tensor<1x?xi64>
}

// CHECK: {{^}}convert-graph-to-tensor: graph.neg has dynamic shape tensor<1x?xi64>; the CPU pipeline needs static shapes (shape inference could not decide this size from the symbols' ranges, S=1..: a narrower range, e.g. --dim NAME=1..512 or dims={NAME: (1, 512)}, may decide it){{$}}
