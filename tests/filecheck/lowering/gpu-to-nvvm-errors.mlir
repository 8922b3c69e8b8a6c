// RUN: ember-opt %s -p convert-gpu-to-nvvm --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s -p convert-gpu-to-nvvm 2>&1 | filecheck %s --check-prefix=FIRST

// Must not lower: kernels convert-gpu-to-nvvm rejects with one diagnostic
// listing every unsupported op with its count (with --verify-diagnostics,
// per chunk; without, the first error on stderr and exit status 1), never
// a traceback nor a crash in LLVM's NVPTX code generation.

// Math NVPTX has no instruction for (sin, erf: libm on the CPU), and an
// approximation on f64, in two kernels of one gpu.module: all listed at once.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xf32>, memref<8xf64>) -> (), kernel}> ({
    ^bb0(%x: memref<8xf32>, %d: memref<8xf64>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %x[%tx] : memref<8xf32>
      %s = math.sin %v : f32
      %e = math.erf %s : f32
      %f = math.erf %e : f32
      memref.store %f, %x[%tx] : memref<8xf32>
      %w = memref.load %d[%tx] : memref<8xf64>
      %x64 = math.exp %w : f64
      memref.store %x64, %d[%tx] : memref<8xf64>
      "gpu.return"() : () -> ()
    }) {sym_name = "unsupported_math"} : () -> ()
    "gpu.func"() <{function_type = (memref<8xf32>) -> (), kernel}> ({
    ^bb0(%x: memref<8xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %x[%tx] : memref<8xf32>
      %p = math.powf %v, %v : f32
      memref.store %p, %x[%tx] : memref<8xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "power"} : () -> ()
  }) : () -> ()
}

// CHECK:      {{^}}convert-gpu-to-nvvm: unsupported ops: math.erf (2), math.exp on f64 (1), math.powf (1), math.sin (1){{$}}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// A kernel argument in shared memory (address space 3), an op with no GPU
// lowering (a subgroup id), a device function with a result.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xf32, 3 : i64>) -> (), kernel}> ({
    ^bb0(%x: memref<8xf32, 3 : i64>):
      %id = "gpu.subgroup_id"() : () -> index
      "gpu.return"() : () -> ()
    }) {sym_name = "shared_argument"} : () -> ()
    "gpu.func"() <{function_type = () -> f32}> ({
      %z = arith.constant 0.0 : f32
      "gpu.return"(%z) : (f32) -> ()
    }) {sym_name = "returns_a_value"} : () -> ()
  }) : () -> ()
}

// CHECK:      {{^}}convert-gpu-to-nvvm: unsupported ops: gpu.func with a memref argument in memory space 3 : i64 (1), gpu.func with results (1), gpu.subgroup_id (1){{$}}

// Without --split-input-file both modules are one input: one error lists
// the problems of both.
// FIRST:      {{^}}{{.*}}gpu-to-nvvm-errors.mlir: error: convert-gpu-to-nvvm: unsupported ops: gpu.func with a memref argument in memory space 3 : i64 (1), gpu.func with results (1), gpu.subgroup_id (1), math.erf (2), math.exp on f64 (1), math.powf (1), math.sin (1){{$}}
// FIRST-NOT:  {{.}}
