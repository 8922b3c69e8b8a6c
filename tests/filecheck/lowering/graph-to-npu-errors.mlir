// RUN: ember-opt %s -p convert-graph-to-npu --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s -p convert-graph-to-npu 2>&1 | filecheck %s --check-prefix=FIRST

// Must not lower: segments convert-graph-to-npu rejects with a one-line
// diagnostic (with --verify-diagnostics, per chunk; without, the first
// error on stderr and exit status 1), never a traceback.

// An op in a segment that graph-partition-npu would not have put there.
func.func @stray(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %y = npu.segment "bad" (%x) : (tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    %e = graph.exp %a : (tensor<2x2xf32>) -> tensor<2x2xf32>
    npu.yield %e : tensor<2x2xf32>
  }
  func.return %y : tensor<2x2xf32>
}

// CHECK:      {{^}}convert-graph-to-npu: npu.segment @bad: graph.exp is not an op the NPU lowering takes{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// FIRST:      {{^}}{{.*}}graph-to-npu-errors.mlir: error: convert-graph-to-npu: npu.segment @bad: graph.exp is not an op the NPU lowering takes{{$}}
// FIRST-NOT:  {{.}}

// -----

// A product the NPU cannot move: rows of 20,000 floats are more than the
// DMA's 16-bit stride.
func.func @wide(%x: tensor<1x20000xf32>, %w: tensor<20000x2xf32>) -> tensor<1x2xf32> {
  %y = npu.segment "wide" (%x, %w) : (tensor<1x20000xf32>, tensor<20000x2xf32>) -> tensor<1x2xf32> {
  ^bb0(%a: tensor<1x20000xf32>, %b: tensor<20000x2xf32>):
    %m = graph.matmul %a, %b : (tensor<1x20000xf32>, tensor<20000x2xf32>) -> tensor<1x2xf32>
    npu.yield %m : tensor<1x2xf32>
  }
  func.return %y : tensor<1x2xf32>
}

// CHECK:      {{^}}convert-graph-to-npu: graph.matmul %m: the NPU cannot run rows of A of 80000 bytes (the DMA strides at most 65535){{$}}

// -----

// A schedule written by hand whose blocks (40 x 40 tiles in two regions)
// the accumulator cannot hold.
func.func @too_big(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %y = npu.segment "too_big" (%x) : (tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    %m = graph.matmul %a, %a {npu.schedule = #npu.schedule<block = 40x40, buffers = 2, regions = 2>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    npu.yield %m : tensor<2x2xf32>
  }
  func.return %y : tensor<2x2xf32>
}

// CHECK:      {{^}}convert-graph-to-npu: graph.matmul %m: blocks of 40x40 tiles, 2 SP buffers, 2 ACC regions overflow the accumulator{{$}}
