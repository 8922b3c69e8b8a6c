// RUN: ember-opt %s -p loop-form-kernels --split-input-file | filecheck %s

// Each loop nest outside a kernel becomes a kernel of its own (no kind);
// a kernel's nests stay as they are, and so do the ops between nests (the
// alloc, the 0-d store) and the nests' bounds, which the new kernels use
// from around them.
func.func @main(%a: memref<4xf32>, %out0: memref<4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  %s = memref.alloc() : memref<f32>
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %t[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %s[] : memref<f32>
  scf.for %i = %k0 to %k4 step %k1 {
    %x = memref.load %t[%i] : memref<4xf32>
    memref.store %x, %out0[%i] : memref<4xf32>
  }
  loop.kernel "elementwise" {
    scf.for %i = %k0 to %k4 step %k1 {
      %x = memref.load %out0[%i] : memref<4xf32>
      memref.store %x, %t[%i] : memref<4xf32>
    }
    scf.for %i = %k0 to %k4 step %k1 {
      %x = memref.load %t[%i] : memref<4xf32>
      memref.store %x, %out0[%i] : memref<4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @main
// CHECK:         %s = memref.alloc() : memref<f32>
// CHECK-NEXT:    loop.kernel {
// CHECK-NEXT:      "scf.parallel"(%k0, %k4, %k1)
// CHECK:           }) : (index, index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    memref.store %zero, %s[] : memref<f32>
// CHECK-NEXT:    loop.kernel {
// CHECK-NEXT:      scf.for %i_1 = %k0 to %k4 step %k1 {
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.kernel "elementwise" {
// CHECK-NEXT:      scf.for
// CHECK:           }
// CHECK-NEXT:      scf.for
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
