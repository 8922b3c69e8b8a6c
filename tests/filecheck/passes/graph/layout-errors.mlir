// RUN: ember-opt %s -p "graph-layout{layout=NCWH}" --verify-diagnostics | filecheck %s
// RUN: ember-opt %s -p "graph-layout{block=0}" --verify-diagnostics | filecheck %s --check-prefix=BLOCK
// RUN: not ember-opt %s -p "graph-layout{layout=NCWH}" 2>&1 | filecheck %s --check-prefix=FIRST

// A bad option value is a diagnostic that names the pass and the option,
// never a traceback; without --verify-diagnostics it stops ember-opt with a
// one-line `file: error: message` and exit status 1.

func.func @conv(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %y = graph.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}

// CHECK:      {{^}}graph-layout: option layout must be one of NCHWc, NHWC, got 'NCWH'{{$}}
// CHECK-NOT:  {{.}}
// BLOCK:      {{^}}graph-layout: option block must be positive, got 0{{$}}
// BLOCK-NOT:  {{.}}
// FIRST:      {{^}}{{.*}}layout-errors.mlir: error: graph-layout: option layout must be one of NCHWc, NHWC, got 'NCWH'{{$}}
// FIRST-NOT:  {{.}}
