// RUN: ember-opt %s | ember-opt | filecheck %s
// RUN: ember-opt %s --print-op-generic | ember-opt | filecheck %s

// A warp's sum by butterfly shuffles: after the five steps every lane holds
// the sum of the warp's 32 values.

// CHECK:      %[[S16:.*]] = ember_gpu.shuffle_xor %v, 16 : f32
// CHECK-NEXT: %[[A16:.*]] = arith.addf %v, %[[S16]] : f32
// CHECK-NEXT: %[[S8:.*]] = ember_gpu.shuffle_xor %[[A16]], 8 : f32
// CHECK:      ember_gpu.shuffle_xor %{{.*}}, 4 : f32
// CHECK:      ember_gpu.shuffle_xor %{{.*}}, 2 : f32
// CHECK:      ember_gpu.shuffle_xor %{{.*}}, 1 : f32
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (f32) -> (), kernel}> ({
    ^bb0(%v: f32):
      %s16 = ember_gpu.shuffle_xor %v, 16 : f32
      %a16 = arith.addf %v, %s16 : f32
      %s8 = ember_gpu.shuffle_xor %a16, 8 : f32
      %a8 = arith.addf %a16, %s8 : f32
      %s4 = ember_gpu.shuffle_xor %a8, 4 : f32
      %a4 = arith.addf %a8, %s4 : f32
      %s2 = ember_gpu.shuffle_xor %a4, 2 : f32
      %a2 = arith.addf %a4, %s2 : f32
      %s1 = ember_gpu.shuffle_xor %a2, 1 : f32
      %a1 = arith.addf %a2, %s1 : f32
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
