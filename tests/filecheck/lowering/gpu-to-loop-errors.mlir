// RUN: ember-opt %s -p convert-gpu-to-loop --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s -p convert-gpu-to-loop --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST

// Must not lower: kernels convert-gpu-to-loop rejects with a one-line
// diagnostic naming the op (with --verify-diagnostics, per chunk; without,
// the first error on stderr and exit status 1), never a traceback.

// A barrier under a condition that depends on the thread id: only some
// threads of a block would reach it.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%x: memref<64xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c8 = arith.constant 8 : index
      %low = arith.cmpi ult, %tx, %c8 : index
      scf.if %low {
        "gpu.barrier"() : () -> ()
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "divergent"} : () -> ()
  }) : () -> ()
}

// CHECK:      {{^}}convert-gpu-to-loop: gpu.func @divergent: scf.if holds a gpu.barrier, so every thread of a block must take the same path through it, but its condition (%low) depends on the thread id{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// FIRST:      {{^}}{{.*}}gpu-to-loop-errors.mlir: error: convert-gpu-to-loop: gpu.func @divergent: scf.if holds a gpu.barrier, so every thread of a block must take the same path through it, but its condition (%low) depends on the thread id{{$}}
// FIRST-NOT:  {{.}}

// -----

// A barrier in a loop whose trip count each thread reads from memory, nested
// in a loop that is fine: the inner scf.for is the one named.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xindex>) -> (), kernel}> ({
    ^bb0(%counts: memref<64xindex>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      scf.for %i = %c0 to %c4 step %c1 {
        %n = memref.load %counts[%tx] : memref<64xindex>
        scf.for %j = %c0 to %n step %c1 {
          "gpu.barrier"() : () -> ()
        }
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "ragged"} : () -> ()
  }) : () -> ()
}

// CHECK:      {{^}}convert-gpu-to-loop: gpu.func @ragged: scf.for holds a gpu.barrier, so every thread of a block must take the same path through it, but its upper bound (%n) is computed by each thread{{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// A barrier in a loop whose bound depends on the thread id, for the loop's
// lower bound.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      scf.for %j = %tx to %c4 step %c1 {
        "gpu.barrier"() : () -> ()
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "staggered"} : () -> ()
  }) : () -> ()
}

// CHECK:      {{^}}convert-gpu-to-loop: gpu.func @staggered: scf.for holds a gpu.barrier, so every thread of a block must take the same path through it, but its lower bound (%tx) depends on the thread id{{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// A thread's own scratch buffer used on both sides of a barrier: its threads
// run one phase after another, so it cannot be one buffer.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%x: memref<64xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c0 = arith.constant 0 : index
      %scratch = memref.alloca() : memref<4xf32>
      %v = memref.load %x[%tx] : memref<64xf32>
      memref.store %v, %scratch[%c0] : memref<4xf32>
      "gpu.barrier"() : () -> ()
      %w = memref.load %scratch[%c0] : memref<4xf32>
      memref.store %w, %x[%tx] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "private"} : () -> ()
  }) : () -> ()
}

// CHECK:      {{^}}convert-gpu-to-loop: gpu.func @private: %scratch (memref.alloca) of type memref<4xf32> is kept across a gpu.barrier; only scalars can be{{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// A kernel whose name a host function has already.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      "gpu.return"() : () -> ()
    }) {sym_name = "main"} : () -> ()
  }) : () -> ()
  func.func @main() {
    func.return
  }
}

// CHECK:      {{^}}convert-gpu-to-loop: gpu.func @main: a function of that name exists at the top level{{$}}

// -----

// gpu ops the emulation does not run, listed at once with counts.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      %l = "gpu.lane_id"() : () -> index
      %g = "gpu.global_id"() <{dimension = #gpu<dim x>}> : () -> index
      %h = "gpu.global_id"() <{dimension = #gpu<dim y>}> : () -> index
      "gpu.return"() : () -> ()
    }) {sym_name = "lanes"} : () -> ()
  }) : () -> ()
}

// CHECK:      {{^}}convert-gpu-to-loop: gpu.func @lanes: unsupported ops: gpu.global_id (2), gpu.lane_id (1){{$}}
