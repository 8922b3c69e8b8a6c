// RUN: ember-opt %s -p loop-outline-kernels | filecheck %s

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
