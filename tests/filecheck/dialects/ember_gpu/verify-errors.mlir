// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks a rule of ember_gpu.shared's verifier.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      %t = ember_gpu.shared : memref<16xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// CHECK: Operation does not verify: ember_gpu.shared: the buffer must be in memory space 3

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (index) -> (), kernel}> ({
    ^bb0(%n: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        %t = ember_gpu.shared : memref<16xf32, 3 : i64>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// CHECK: Operation does not verify: ember_gpu.shared: must stand in a gpu.func's entry block
