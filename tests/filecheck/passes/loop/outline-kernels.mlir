// RUN: ember-opt %s -p loop-outline-kernels --split-input-file | filecheck %s

// Two nests that compute the same thing on other buffers share one kernel;
// a different nest gets its own. Buffer ops stay in the entry function.
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %out0: memref<4xf32>) {
  %t = loop.alloc {offset = 0 : i64} : memref<4xf32>
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %t[%i] : memref<4xf32>
  }
  loop.for %j = 0 to 4 step 1 parallel {
    %x = memref.load %b[%j] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out0[%j] : memref<4xf32>
  }
  loop.for %k = 0 to 4 step 1 parallel {
    %x = memref.load %t[%k] : memref<4xf32>
    %y = memref.load %out0[%k] : memref<4xf32>
    %z = arith.mulf %x, %y : f32
    memref.store %z, %out0[%k] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK-NEXT:    %t = loop.alloc {offset = 0 : i64} : memref<4xf32>
// CHECK-NEXT:    func.call @main_kernel0(%a, %t) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @main_kernel0(%b, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @main_kernel1(%t, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @main_kernel0(%0: memref<4xf32>, %1: memref<4xf32>) attributes {ember.kernel} {
// CHECK-NEXT:    loop.for %2 = 0 to 4 step 1 parallel {
// CHECK-NEXT:      %3 = memref.load %0[%2] : memref<4xf32>
// CHECK-NEXT:      %4 = arith.addf %3, %3 : f32
// CHECK-NEXT:      memref.store %4, %1[%2] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @main_kernel1(
// CHECK-NOT:   func.func

// -----

// Consecutive nests of one fusion group are one kernel, called where the last
// of them was; a store between nests (filling a 0-d buffer that may share
// arena memory with what the earlier nests use) ends the unit, so it still
// runs after them.
func.func @group(%a: memref<4xf32>, %out0: memref<4xf32>) {
  %s = loop.alloc {offset = 0 : i64} : memref<f32>
  %t = loop.alloc {offset = 64 : i64} : memref<4xf32>
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %t[%i] : memref<4xf32>
  } {ember.fusion_group = 0 : i64}
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %t[%i] : memref<4xf32>
    memref.store %x, %out0[%i] : memref<4xf32>
  } {ember.fusion_group = 0 : i64}
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %s[] : memref<f32>
  loop.for %i = 0 to 4 step 1 {
    %x = memref.load %out0[%i] : memref<4xf32>
    %acc = memref.load %s[] : memref<f32>
    %y = arith.addf %acc, %x : f32
    memref.store %y, %s[] : memref<f32>
  } {ember.fusion_group = 0 : i64}
  func.return
}
// CHECK-LABEL: func.func @group
// CHECK:         func.call @group_kernel{{[0-9]+}}(%a, %t, %out0)
// CHECK-NEXT:    %zero = arith.constant
// CHECK-NEXT:    memref.store %zero, %s[]
// CHECK-NEXT:    func.call @group_kernel{{[0-9]+}}(%out0, %s)
// CHECK-NEXT:    func.return
// CHECK:       func.func private @group_kernel
// CHECK-NEXT:    loop.for
// CHECK:         loop.for
// CHECK:         func.return
