// RUN: ember-opt %s -p loop-outline-kernels --split-input-file | filecheck %s

// Nests outside any kernel become kernels of their own first. Two that
// compute the same thing on other buffers share one kernel function; a
// different nest gets its own. Buffer ops stay in the entry function; the
// bounds' constants are copied into each kernel (and go from the entry
// function, which no longer uses them).
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
  }) : (index, index, index) -> ()
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %x = memref.load %b[%j] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out0[%j] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%k: index):
    %x = memref.load %t[%k] : memref<4xf32>
    %y = memref.load %out0[%k] : memref<4xf32>
    %z = arith.mulf %x, %y : f32
    memref.store %z, %out0[%k] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK-NEXT:    %t = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    func.call @main_kernel0(%a, %t) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @main_kernel0(%b, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @main_kernel1(%t, %out0) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @main_kernel0(%0: memref<4xf32>, %1: memref<4xf32>) attributes {ember.kernel} {
// CHECK-NEXT:    %2 = arith.constant 0 : index
// CHECK-NEXT:    %3 = arith.constant 4 : index
// CHECK-NEXT:    %4 = arith.constant 1 : index
// CHECK-NEXT:    "scf.parallel"(%2, %3, %4) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%5: index):
// CHECK-NEXT:      %6 = memref.load %0[%5] : memref<4xf32>
// CHECK-NEXT:      %7 = arith.addf %6, %6 : f32
// CHECK-NEXT:      memref.store %7, %1[%5] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @main_kernel1(
// CHECK-NOT:   func.func

// -----

// A loop.kernel (a fused group) is one kernel function, called in its
// place: its nests, and what lies between them (the store filling a 0-d
// buffer), run inside it in order. The values it captured (buffers, the
// view %s) are the arguments; a constant it captured is copied in. The
// second kernel is the same computation on other buffers and shares the
// function.
func.func @group(%a: memref<4xf32>, %b: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<4xf32>, %arena: memref<64xi8>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  %s = memref.view %arena[%k0][] : memref<64xi8> to memref<f32>
  loop.kernel "reduction" {
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %a[%i] : memref<4xf32>
      memref.store %x, %out0[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %s[] : memref<f32>
    scf.for %i = %k0 to %k4 step %k1 {
      %x = memref.load %out0[%i] : memref<4xf32>
      %acc = memref.load %s[] : memref<f32>
      %y = arith.addf %acc, %x : f32
      memref.store %y, %s[] : memref<f32>
    }
  }
  loop.kernel "reduction" {
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %b[%i] : memref<4xf32>
      memref.store %x, %out1[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %s[] : memref<f32>
    scf.for %i = %k0 to %k4 step %k1 {
      %x = memref.load %out1[%i] : memref<4xf32>
      %acc = memref.load %s[] : memref<f32>
      %y = arith.addf %acc, %x : f32
      memref.store %y, %s[] : memref<f32>
    }
  }
  func.return
}
// CHECK-LABEL: func.func @group
// CHECK-NEXT:    %k0 = arith.constant 0 : index
// CHECK-NEXT:    %s = memref.view %arena[%k0][] : memref<64xi8> to memref<f32>
// CHECK-NEXT:    func.call @group_kernel0(%a, %out0, %s) : (memref<4xf32>, memref<4xf32>, memref<f32>) -> ()
// CHECK-NEXT:    func.call @group_kernel0(%b, %out1, %s) : (memref<4xf32>, memref<4xf32>, memref<f32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @group_kernel0(%0: memref<4xf32>, %1: memref<4xf32>, %2: memref<f32>) attributes {ember.kernel} {
// CHECK-NEXT:    %3 = arith.constant 0 : index
// CHECK-NEXT:    %4 = arith.constant 4 : index
// CHECK-NEXT:    %5 = arith.constant 1 : index
// CHECK-NEXT:    "scf.parallel"(%3, %4, %5)
// CHECK:         }) : (index, index, index) -> ()
// CHECK-NEXT:    %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    memref.store %{{.*}}, %2[] : memref<f32>
// CHECK-NEXT:    scf.for
// CHECK:         func.return
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

// -----

// Before loop generation (the CPU pipeline's first run) a group is
// structured ops. Two groups that differ only in their buffers share a
// function; a slot of a buffer they captured (a subview at an offset, the
// only view of its buffer they use) is passed with a run-time offset, and
// the group's own buffer (%t) stays inside, for loop-plan-memory. A group
// that reads a weight where another reads an activation gets a function of
// its own (a weight argument is packed at compile time only where every
// call passes a weight); a subview of a weight is copied in (its source
// becomes the argument).
func.func @early(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %out0: memref<2x8xf32>, %out1: memref<2x8xf32>, %out2: memref<2x8xf32>) {
  %w = loop.weight dense<1.0> : tensor<4x8xf32> -> memref<4x8xf32>
  %va = memref.subview %a[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  %vb = memref.subview %b[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  %vw = memref.subview %w[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  loop.kernel "elementwise" {
    %t = memref.alloc() : memref<2x8xf32>
    linalg.copy ins(%va : memref<2x8xf32, strided<[8, 1], offset: 16>>) outs(%t : memref<2x8xf32>)
    linalg.copy ins(%t : memref<2x8xf32>) outs(%out0 : memref<2x8xf32>)
  }
  loop.kernel "elementwise" {
    %t = memref.alloc() : memref<2x8xf32>
    linalg.copy ins(%vb : memref<2x8xf32, strided<[8, 1], offset: 16>>) outs(%t : memref<2x8xf32>)
    linalg.copy ins(%t : memref<2x8xf32>) outs(%out1 : memref<2x8xf32>)
  }
  loop.kernel "elementwise" {
    %t = memref.alloc() : memref<2x8xf32>
    linalg.copy ins(%vw : memref<2x8xf32, strided<[8, 1], offset: 16>>) outs(%t : memref<2x8xf32>)
    linalg.copy ins(%t : memref<2x8xf32>) outs(%out2 : memref<2x8xf32>)
  }
  func.return
}
// CHECK-LABEL: func.func @early
// CHECK-NEXT:    %w = loop.weight
// CHECK-NEXT:    %0 = arith.constant 2 : index
// CHECK-NEXT:    %1 = arith.constant 0 : index
// CHECK-NEXT:    %2 = memref.subview %a[%0, %1] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT:    func.call @early_kernel0(%2, %out0) : (memref<2x8xf32, strided<[8, 1], offset: ?>>, memref<2x8xf32>) -> ()
// CHECK:         %5 = memref.subview %b[%3, %4] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT:    func.call @early_kernel0(%5, %out1) : (memref<2x8xf32, strided<[8, 1], offset: ?>>, memref<2x8xf32>) -> ()
// CHECK-NEXT:    func.call @early_kernel1(%w, %out2) : (memref<4x8xf32>, memref<2x8xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @early_kernel0(%0: memref<2x8xf32, strided<[8, 1], offset: ?>>, %1: memref<2x8xf32>) attributes {ember.kernel} {
// CHECK-NEXT:    %2 = memref.alloc() : memref<2x8xf32>
// CHECK-NEXT:    linalg.copy ins(%0 : memref<2x8xf32, strided<[8, 1], offset: ?>>) outs(%2 : memref<2x8xf32>)
// CHECK-NEXT:    linalg.copy ins(%2 : memref<2x8xf32>) outs(%1 : memref<2x8xf32>)
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @early_kernel1(%0: memref<4x8xf32>, %1: memref<2x8xf32>) attributes {ember.kernel} {
// CHECK-NEXT:    %2 = memref.subview %0[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
// CHECK-NOT:   func.func

// -----

// A slot is passed only where it is the one view of its buffer the kernel
// uses (two views of %a: both copied in, %a the argument, so the kernel
// sees the buffer whole), where it does not start at the buffer's start
// (%b's first rows: copied in), and where its chain of subviews has unit
// steps (%c's every other row: copied in). A chain of subviews passes one
// subview of its start, at the sum of their offsets (%d).
func.func @slots(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>, %d: memref<8x8xf32>, %out0: memref<2x8xf32>, %out1: memref<2x8xf32>, %out2: memref<2x8xf32>, %out3: memref<2x8xf32>) {
  %a0 = memref.subview %a[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  %a1 = memref.subview %a[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  %b0 = memref.subview %b[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  %c1 = memref.subview %c[1, 0] [2, 8] [2, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[16, 1], offset: 8>>
  %d1 = memref.subview %d[4, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  %d2 = memref.subview %d1[1, 0] [2, 8] [1, 1] : memref<4x8xf32, strided<[8, 1], offset: 32>> to memref<2x8xf32, strided<[8, 1], offset: 40>>
  loop.kernel "elementwise" {
    linalg.add ins(%a0, %a1 : memref<2x8xf32, strided<[8, 1]>>, memref<2x8xf32, strided<[8, 1], offset: 16>>) outs(%out0 : memref<2x8xf32>)
  }
  loop.kernel "elementwise" {
    linalg.copy ins(%b0 : memref<2x8xf32, strided<[8, 1]>>) outs(%out1 : memref<2x8xf32>)
  }
  loop.kernel "elementwise" {
    linalg.copy ins(%c1 : memref<2x8xf32, strided<[16, 1], offset: 8>>) outs(%out2 : memref<2x8xf32>)
  }
  loop.kernel "elementwise" {
    linalg.copy ins(%d2 : memref<2x8xf32, strided<[8, 1], offset: 40>>) outs(%out3 : memref<2x8xf32>)
  }
  func.return
}
// CHECK-LABEL: func.func @slots
// CHECK-NEXT:    func.call @slots_kernel0(%a, %out0)
// CHECK-NEXT:    func.call @slots_kernel1(%b, %out1)
// CHECK-NEXT:    func.call @slots_kernel2(%c, %out2)
// CHECK-NEXT:    %0 = arith.constant 5 : index
// CHECK-NEXT:    %1 = arith.constant 0 : index
// CHECK-NEXT:    %2 = memref.subview %d[%0, %1] [2, 8] [1, 1] : memref<8x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT:    func.call @slots_kernel3(%2, %out3)
// CHECK-NEXT:    func.return
