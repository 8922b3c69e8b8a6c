// RUN: ember-opt %s -p loop-outline-kernels --print-debuginfo | filecheck %s

// Source names (the model's nodes, as locations) never make kernels differ:
// two nests that compute the same thing share one kernel function, whose
// `ember.source_names` lists each call site's names, in call order; each
// call keeps its kernel's location. A new function's symbol ends in its
// first call site's first name, made a C identifier.
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %out0: memref<4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %t[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> () loc("conv1/7x7_s2")
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %x = memref.load %b[%j] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out0[%j] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> () loc(fused["conv2", "relu2"])
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%k: index):
    %x = memref.load %t[%k] : memref<4xf32>
    %y = memref.load %out0[%k] : memref<4xf32>
    %z = arith.mulf %x, %y : f32
    memref.store %z, %out0[%k] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> () loc("mul")
  func.return
}

// CHECK:      func.func @main(
// CHECK:        func.call @main_kernel0_conv1_7x7_s2({{.*}}) : (memref<4xf32>, memref<4xf32>) -> () loc("conv1/7x7_s2")
// CHECK-NEXT:   func.call @main_kernel0_conv1_7x7_s2({{.*}}) : (memref<4xf32>, memref<4xf32>) -> () loc(fused["conv2", "relu2"])
// CHECK-NEXT:   func.call @main_kernel1_mul({{.*}}) loc("mul")
// CHECK:      func.func private @main_kernel0_conv1_7x7_s2({{.*}}) attributes {ember.kernel, ember.source_names = {{\[}}["conv1/7x7_s2"], ["conv2", "relu2"]]}
// CHECK:      func.func private @main_kernel1_mul({{.*}}) attributes {ember.kernel, ember.source_names = {{\[}}["mul"]]}
// Inside a kernel function no op keeps a source name: the body is shared.
// CHECK-NOT:  loc("conv
