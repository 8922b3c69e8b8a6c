// RUN: ember-opt %s -p convert-tensor-to-loop --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s -p convert-tensor-to-loop --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST

// Must not lower: inputs convert-tensor-to-loop rejects with a diagnostic,
// never a traceback.
//
// - prefix CHECK, with --verify-diagnostics every chunk reports its message
//   (one line, and no IR after it);
// - prefix FIRST, without it the first error stops ember-opt with a one-line
//   `file: error: message` on stderr, exit status 1 and no IR on stdout.

// A graph op left over (graph ops are lowered to tensor ops first).
func.func @unsupported(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:      {{^}}convert-tensor-to-loop: cannot bufferize 'graph.relu'{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// FIRST:      {{^}}{{.*}}tensor-to-loop-errors.mlir: error: convert-tensor-to-loop: cannot bufferize 'graph.relu'{{$}}
// FIRST-NOT:  {{.}}

// -----

// A scalar op at the top level (where fill values and reshape shapes live)
// used inside a generic body: a body may only use its own arguments and the
// values it defines.
func.func @capture(%x: tensor<4xf32>) -> tensor<4xf32> {
  %k = arith.constant 2.000000e+00 : f32
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.mulf %p, %k : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:      {{^}}convert-tensor-to-loop: the body of a linalg.generic uses %k, defined outside it{{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// A fill whose value is computed, not a constant (nor an unsigned view of
// one's bits).
func.func @fill_of_a_computed_value() -> tensor<4xf32> {
  %c = arith.constant 1 : i32
  %v = arith.bitcast %c : i32 to f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%v : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}

// CHECK:      {{^}}convert-tensor-to-loop: the value of linalg.fill must be a scalar arith.constant{{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// Slices must stay inside their tensor (generated code never leaves a
// buffer); xDSL's verifier leaves that to bufferization.
func.func @slice_past_the_end(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %x[3, 0] [2, 3] [1, 1] : tensor<4x8xf32> to tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK:      {{^}}convert-tensor-to-loop: tensor.extract_slice [3, 0] [2, 3] [1, 1] leaves (4, 8){{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

func.func @insert_past_the_end(%x: tensor<2x3xf32>, %d: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = tensor.insert_slice %x into %d[0, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x4xf32>
  func.return %s : tensor<4x4xf32>
}

// CHECK:      {{^}}convert-tensor-to-loop: tensor.insert_slice [0, 2] [2, 3] [1, 1] leaves (4, 4){{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// An upstream op the tensor level does not use.
func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:      {{^}}convert-tensor-to-loop: cannot bufferize 'linalg.exp'{{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// An scf.for whose body yields one carried value in another's place: each
// carried value has one buffer, so the swap would read what it overwrote.
func.func @swapped(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %x, %y = scf.for %i = %lo to %hi step %one iter_args(%p = %a, %q = %b) -> (tensor<4xf32>, tensor<4xf32>) {
    scf.yield %q, %p : tensor<4xf32>, tensor<4xf32>
  }
  func.return %x : tensor<4xf32>
}

// CHECK:      {{^}}convert-tensor-to-loop: scf.for yields one carried value in another's place{{$}}
// CHECK-NOT:  {{.}}
