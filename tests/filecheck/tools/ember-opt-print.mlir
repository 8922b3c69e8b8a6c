// --print-between-passes heads the IR after every pass, the last one included,
// on stderr (stdout is the output alone, as with mlir-opt); --elide-large-constants
// elides non-splat constants of more than N elements in every dump and in the
// output, without taking the data from the passes that follow.
// RUN: ember-opt %s -p graph-infer-shapes,graph-fold-constants --print-between-passes --elide-large-constants 2>&1 >/dev/null | filecheck %s
// RUN: ember-opt %s -p graph-infer-shapes,graph-fold-constants --print-between-passes 2>/dev/null | filecheck %s --check-prefix=STDOUT

// CHECK:       IR after graph-infer-shapes:
// CHECK-NEXT:  builtin.module {
// CHECK:         %w = graph.constant dense_resource<__elided__> : tensor<1x32xf32>
// CHECK-NEXT:    %v = graph.constant dense_resource<__elided__> : tensor<1x32xf32>
// CHECK-NEXT:    %s = graph.constant dense<5.000000e-01> : tensor<1x32xf32>
// CHECK-NEXT:    %few = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK:       IR after graph-fold-constants:
// CHECK-NEXT:  builtin.module {
// The fold saw the data: w + v is 33 everywhere, a splat, which is never elided.
// CHECK:         graph.constant dense<3.300000e+01> : tensor<1x32xf32>
// CHECK-NOT:   IR after
// STDOUT-NOT:  IR after
// STDOUT:      builtin.module {
// STDOUT:        graph.constant dense<3.300000e+01> : tensor<1x32xf32>
// STDOUT-NOT:  IR after
// STDOUT-NOT:  builtin.module

// With no limit given, 16 elements; a limit elides anything larger.
// RUN: ember-opt %s --elide-large-constants=1 | filecheck %s --check-prefix=LIMIT
// LIMIT:       %few = graph.constant dense_resource<__elided__> : tensor<2xf32>

// Without the option, the data is printed in full.
// RUN: ember-opt %s | filecheck %s --check-prefix=FULL
// FULL:        %w = graph.constant dense<"0x0000803F{{[0-9A-F]+}}"> : tensor<1x32xf32>

// With -o, the same dumps; the output is the file.
// RUN: ember-opt %s -p graph-infer-shapes --print-between-passes -o %t.out 2>&1 | filecheck %s --check-prefix=TO-FILE
// TO-FILE:       IR after graph-infer-shapes:
// TO-FILE-NEXT:  builtin.module {
// TO-FILE:       func.return

// --time-passes reports on stderr: stdout stays IR that parses again.
// RUN: ember-opt %s -p graph-infer-shapes,graph-fold-constants --time-passes 2>%t.time >%t.ir.mlir
// RUN: filecheck %s --input-file %t.time --check-prefix=TIME
// RUN: ember-opt %t.ir.mlir | filecheck %s --check-prefix=REPARSED
// TIME:      {{^}}Pass graph-infer-shapes took {{[0-9.]+}} seconds{{$}}
// TIME-NEXT: {{^}}Pass graph-fold-constants took {{[0-9.]+}} seconds{{$}}
// REPARSED:  graph.constant dense<3.300000e+01>

// Loop IR: a `loop.weight` prints its elided data in the generic format
// (its custom format cannot hold a resource).
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop --elide-large-constants | filecheck %s --check-prefix=LOOP
// LOOP:      "loop.weight"() <{value = dense_resource<__elided__> : tensor<1x32xf32>}> : () -> memref<1x32xf32>

func.func @main(%x: tensor<1x32xf32>) -> tensor<1x32xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0]]> : tensor<1x32xf32>
  %v = graph.constant dense<[[32.0, 31.0, 30.0, 29.0, 28.0, 27.0, 26.0, 25.0, 24.0, 23.0, 22.0, 21.0, 20.0, 19.0, 18.0, 17.0, 16.0, 15.0, 14.0, 13.0, 12.0, 11.0, 10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]]> : tensor<1x32xf32>
  %s = graph.constant dense<0.5> : tensor<1x32xf32>
  %few = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %wv = graph.add %w, %v : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %a = graph.add %x, %wv : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %b = graph.mul %a, %s : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %c = graph.reduce_sum %few : (tensor<2xf32>) -> tensor<1xf32>
  %d = graph.add %b, %c : (tensor<1x32xf32>, tensor<1xf32>) -> tensor<1x32xf32>
  func.return %d : tensor<1x32xf32>
}
