// RUN: ember-opt %s -p loop-generate --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s -p loop-generate --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST

// Must not generate: buffer-level ops loop-generate rejects with a one-line
// diagnostic naming the op (an op on buffers by the buffer it writes),
// never a traceback.

// A hand-written schedule that does not fit its op: a matmul's k (d2) is a
// reduction and cannot run in parallel.
func.func @misfit(%a: memref<4x8xf32>, %b: memref<8x5xf32>, %c: memref<4x5xf32>) {
  linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [2]>} ins(%a, %b : memref<4x8xf32>, memref<8x5xf32>) outs(%c : memref<4x5xf32>)
  func.return
}

// CHECK:      {{^}}linalg.matmul into %c in @misfit: schedule runs d2 in parallel, but d2 is a reduction dim{{$}}
// FIRST:      {{^}}{{.*}}generate-errors.mlir: error: linalg.matmul into %c in @misfit: schedule runs d2 in parallel, but d2 is a reduction dim{{$}}
// FIRST-NOT:  {{.}}

// -----

// A body that uses a value from outside it.
func.func @outside(%x: memref<4xf32>, %y: memref<4xf32>) {
  %k = arith.constant 2.000000e+00 : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %k : f32
    linalg.yield %m : f32
  }
  func.return
}

// CHECK:      {{^}}loop-generate: the body of linalg.generic into %y in @outside uses %k, defined outside it{{$}}

// -----

// A fill whose value is computed.
func.func @computed_fill(%x: f32, %y: memref<4xf32>) {
  %v = arith.negf %x : f32
  linalg.fill ins(%v : f32) outs(%y : memref<4xf32>)
  func.return
}

// CHECK:      {{^}}loop-generate: the value of linalg.fill must be a scalar arith.constant{{$}}
