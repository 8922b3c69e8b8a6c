// RUN: ember-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// RUN: not ember-opt %s 2>&1 | filecheck %s --check-prefix=FIRST

// Parse errors of the graph assembly format. With --parsing-diagnostics each
// chunk's error is printed (location, the source line, the message) and the
// next chunk is parsed; every case checks the line:column and the message.
// Without it, ember-opt stops at the first error with a one-line
// `file:line:col: error: message` on stderr and exit status 1 (FIRST).

// Two positional operands are required; one is given.
func.func @missing_operand(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.add %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// FIRST: parse-errors.mlir:[[# @LINE - 4]]:18: error: graph.add expects 2 positional operand(s), got 1
// FIRST-NOT: error:

// CHECK:      parse-errors.mlir:[[# @LINE - 7]]:18{{$}}
// CHECK:      graph.add expects 2 positional operand(s), got 1

// -----

// A unary op given two positional operands.
func.func @extra_operand(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.relu %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:19{{$}}
// CHECK:      graph.relu expects 1 positional operand(s), got 2

// -----

// An optional operand keyword that is not one of the op's ONNX names.
// (The column is not pinned: it points at the ":" after the operand, not at "lower".)
func.func @unknown_keyword(%x: tensor<2xf32>, %l: tensor<f32>) -> tensor<2xf32> {
  %y = graph.clip %x, lower %l : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+$}}
// CHECK:      'lower' is not an optional operand of graph.clip

// -----

// A required operand cannot be written with its name.
// (The column is not pinned: it points at the ":" after the operand, not at "B".)
func.func @required_keyword(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %y = graph.gemm %x, B %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+$}}
// CHECK:      'B' is not an optional operand of graph.gemm

// -----

// The same optional operand given twice.
// (The column is not pinned: it points at the ":", not at the second "min".)
func.func @keyword_twice(%x: tensor<2xf32>, %l: tensor<f32>) -> tensor<2xf32> {
  %y = graph.clip %x, min %l, min %l : (tensor<2xf32>, tensor<f32>, tensor<f32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+$}}
// CHECK:      optional operand 'min' given twice

// -----

// An optional operand keyword without its operand.
func.func @keyword_no_operand(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.clip %x, min : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:27{{$}}
// CHECK:      operand expected

// -----

// Two operands but one operand type.
func.func @type_count(%x: tensor<2xf32>, %z: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.add %x, %z : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:18{{$}}
// CHECK:      graph.add has 2 operands but the type lists 1

// -----

// One operand but two operand types.
func.func @type_count_more(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.relu %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:19{{$}}
// CHECK:      graph.relu has 1 operands but the type lists 2

// -----

// The operand type in the function type differs from the value's type.
func.func @type_mismatch(%x: tensor<2xf32>) -> tensor<3xf32> {
  %y = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:19{{$}}
// CHECK:      operand is used with type tensor<3xf32>, but has been previously used or defined with type tensor<2xf32>

// -----

// A single-result op with two result types.
func.func @two_results(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.relu %x : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:19{{$}}
// CHECK:      graph.relu has 1 result(s), the type lists 2

// -----

// A single-result op with no result type.
func.func @no_result(%x: tensor<2xf32>) {
  graph.relu %x : (tensor<2xf32>) -> ()
  func.return
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:14{{$}}
// CHECK:      graph.relu has 1 result(s), the type lists 0

// -----

// More result types than the single and the optional results.
func.func @too_many_optional(%x: tensor<1x2xf32>, %s: tensor<2xf32>) -> tensor<1x2xf32> {
  %y, %m, %v, %w = graph.batch_normalization %x, %s, %s, %s, %s {training_mode = 1 : i64} : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %y : tensor<1x2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:46{{$}}
// CHECK:      graph.batch_normalization has 1 result(s) and 2 optional one(s), the type lists 4

// -----

// Two SSA names bound to a one-result op.
func.func @names_vs_results(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a, %b = graph.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %a : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:3{{$}}
// CHECK:      Operation has 1 results, but was given 2 to bind.

// -----

// The trailing function type is required; the error is at the next token,
// on the following line.
func.func @missing_type(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.relu %x
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 3]]:3{{$}}
// CHECK:      Expected ':'

// -----

// graph.constant takes a tensor literal, not a scalar attribute.
// (The location is not pinned: it points at the next line, not at the literal.)
func.func @constant_literal() -> tensor<i64> {
  %c = graph.constant 1 : i64
  func.return %c : tensor<i64>
}

// CHECK:      parse-errors.mlir:{{[0-9]+:[0-9]+$}}
// CHECK:      graph.constant expects a dense tensor literal with its type

// -----

// An op the graph dialect does not have.
func.func @unknown_op(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.frobnicate %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      parse-errors.mlir:[[# @LINE - 4]]:25{{$}}
// CHECK:      Operation graph.frobnicate is not registered
