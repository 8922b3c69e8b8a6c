// RUN: ember-opt %s --split-input-file --verify-diagnostics -p convert-graph-to-tensor | filecheck %s
// RUN: not ember-opt %s -p convert-graph-to-tensor 2>&1 | filecheck %s --check-prefix=FIRST

// Constant Gather indices are checked when the op is lowered: a few of them
// become tensor.extract_slice offsets, which nothing checks at run time, and
// compiled code must never read outside a buffer. Indices in [-s, s - 1]
// lower (a negative one counts from the end).
func.func @in_range(%x: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %i = graph.constant dense<[-3, 2]> : tensor<2xi64>
  %y = graph.gather %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @in_range
// CHECK:         tensor.extract_slice %x[0, 0] [1, 4] [1, 1]
// CHECK:         tensor.extract_slice %x[2, 0] [1, 4] [1, 1]

// -----

// One past the end, on axis 1.
func.func @past_the_end(%x: tensor<3x4xf32>) -> tensor<3x1xf32> {
  %i = graph.constant dense<[4]> : tensor<1xi64>
  %y = graph.gather %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}

// CHECK:      {{^}}convert-graph-to-tensor: cannot lower 1 op: graph.gather (constant index 4 of %y is out of range for axis 1 of size 4){{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// Below -s, and more indices than become slices (a run-time ember_linalg.gather
// would clamp them, but a constant one is a mistake in the model).
func.func @before_the_start(%x: tensor<3x4xf32>) -> tensor<100x4xf32> {
  %i = graph.constant dense<-4> : tensor<100xi64>
  %rows = graph.gather %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<100xi64>) -> tensor<100x4xf32>
  func.return %rows : tensor<100x4xf32>
}

// CHECK:      {{^}}convert-graph-to-tensor: cannot lower 1 op: graph.gather (constant index -4 of %rows is out of range for axis 0 of size 3){{$}}

// Without --split-input-file, one message names every bad Gather.
// FIRST:      {{^}}{{.*}}graph-to-tensor-gather.mlir: error: convert-graph-to-tensor: cannot lower 1 op: graph.gather (constant index 4 of %y is out of range for axis 1 of size 4, constant index -4 of %rows is out of range for axis 0 of size 3){{$}}
// FIRST-NOT:  error
// FIRST-NOT:  Traceback
