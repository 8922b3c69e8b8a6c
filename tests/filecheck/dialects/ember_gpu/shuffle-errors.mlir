// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks a rule of ember_gpu.shuffle_xor's verifier.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (f32) -> (), kernel}> ({
    ^bb0(%v: f32):
      %r = ember_gpu.shuffle_xor %v, 0 : f32
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// CHECK: Operation does not verify: ember_gpu.shuffle_xor: the mask must be a lane number from 1 to 16, got 0

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (f32) -> (), kernel}> ({
    ^bb0(%v: f32):
      %r = ember_gpu.shuffle_xor %v, 32 : f32
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// CHECK: Operation does not verify: ember_gpu.shuffle_xor: the mask must be a lane number from 1 to 16, got 32

// -----

func.func @host(%v: f32) -> f32 {
  %r = ember_gpu.shuffle_xor %v, 1 : f32
  func.return %r : f32
}

// CHECK: Operation does not verify: ember_gpu.shuffle_xor: must stand in a gpu.func (a kernel's warp)

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (f64) -> (), kernel}> ({
    ^bb0(%v: f64):
      %r = "ember_gpu.shuffle_xor"(%v) <{mask = 1 : i32}> : (f64) -> f64
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// CHECK: Operation does not verify: operand 'value' at position 0 does not verify:
// CHECK-NEXT: Expected attribute f32 but got f64
