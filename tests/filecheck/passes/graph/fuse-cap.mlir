// RUN: ember-opt %s -p "graph-fuse{max-group-ops=2}" | filecheck %s
// RUN: ember-opt %s -p "graph-fuse{max-group-ops=0}" --verify-diagnostics | filecheck %s --check-prefix=ZERO
// RUN: not ember-opt %s -p "graph-fuse{max-group-ops=0}" 2>&1 | filecheck %s --check-prefix=FIRST

// max-group-ops caps a group's members: a chain of five elementwise ops
// becomes groups of two, two and a lone op (which forms no group). A bad
// value is a one-line diagnostic naming the pass and the option.
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.sin %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = graph.cos %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = graph.exp %b : (tensor<4xf32>) -> tensor<4xf32>
  %d = graph.neg %c : (tensor<4xf32>) -> tensor<4xf32>
  %e = graph.abs %d : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %b = graph.fused "elementwise" (%x)
// CHECK-NEXT:    ^bb0(%x_1: tensor<4xf32>):
// CHECK-NEXT:      %a = graph.sin %x_1
// CHECK-NEXT:      %b_1 = graph.cos %a
// CHECK-NEXT:      graph.yield %b_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %d = graph.fused "elementwise" (%b)
// CHECK-NEXT:    ^bb0(%b_1: tensor<4xf32>):
// CHECK-NEXT:      %c = graph.exp %b_1
// CHECK-NEXT:      %d_1 = graph.neg %c
// CHECK-NEXT:      graph.yield %d_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %e = graph.abs %d
// CHECK-NEXT:    func.return %e

// ZERO:       {{^}}graph-fuse: option max-group-ops must be positive, got 0{{$}}
// ZERO-NOT:   {{.}}
// FIRST:      {{^}}{{.*}}fuse-cap.mlir: error: graph-fuse: option max-group-ops must be positive, got 0{{$}}
// FIRST-NOT:  {{.}}
