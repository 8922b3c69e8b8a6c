// RUN: ember-opt %s -p loop-fuse --split-input-file | filecheck %s

// One kernel (a fused group): a producer nest and its elementwise consumer
// merge, the consumer reads the stored value straight from the register, and
// the kernel's intermediate buffer, now only written, disappears.
func.func @producer_consumer(%a: memref<4x8xf32>, %out0: memref<4x8xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  %k8 = arith.constant 8 : index
  loop.kernel "elementwise" {
    %t = memref.alloc() : memref<4x8xf32>
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      "scf.parallel"(%k0, %k8, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%j: index):
        %x = memref.load %a[%i, %j] : memref<4x8xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %t[%i, %j] : memref<4x8xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%k: index):
      "scf.parallel"(%k0, %k8, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%l: index):
        %x = memref.load %t[%k, %l] : memref<4x8xf32>
        %y = arith.mulf %x, %x : f32
        memref.store %y, %out0[%k, %l] : memref<4x8xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}
// CHECK-LABEL: func.func @producer_consumer
// CHECK:         loop.kernel "elementwise" {
// CHECK-NEXT:      "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%i: index):
// CHECK-NEXT:        "scf.parallel"(%k0, %k8, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0(%j: index):
// CHECK-NEXT:          %x = memref.load %a[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:          %y = arith.addf %x, %x : f32
// CHECK-NEXT:          %y_1 = arith.mulf %y, %y : f32
// CHECK-NEXT:          memref.store %y_1, %out0[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:          scf.reduce
// CHECK-NEXT:        }) : (index, index, index) -> ()
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// A reduction over j followed by an epilogue over the reduced rows: the outer
// loops merge (both index the row buffer with i at position 0); the inner
// loops do not (the epilogue needs the finished row sum, read at 0, not j).
func.func @reduction_epilogue(%a: memref<4x8xf32>, %out0: memref<4x1xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  %k8 = arith.constant 8 : index
  loop.kernel "reduction" {
    %s = memref.alloc() : memref<4x1xf32>
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      scf.for %j = %k0 to %k8 step %k1 {
        %c0 = arith.constant 0 : index
        %x = memref.load %a[%i, %j] : memref<4x8xf32>
        %acc = memref.load %s[%i, %c0] : memref<4x1xf32>
        %sum = arith.addf %acc, %x : f32
        memref.store %sum, %s[%i, %c0] : memref<4x1xf32>
      }
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%k: index):
      "scf.parallel"(%k0, %k1, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%l: index):
        %x = memref.load %s[%k, %l] : memref<4x1xf32>
        %y = math.sqrt %x : f32
        memref.store %y, %out0[%k, %l] : memref<4x1xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}
// CHECK-LABEL: func.func @reduction_epilogue
// The row of sums each iteration writes and reads back is its own scratch.
// CHECK:         loop.kernel "reduction" {
// CHECK-NEXT:      "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%i: index):
// CHECK-NEXT:        %s = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
// CHECK-NEXT:        scf.for %j = %k0 to %k8 step %k1 {
// CHECK:               memref.store %sum, %s[%c0]
// CHECK-NEXT:        }
// CHECK-NEXT:        "scf.parallel"(%k0, %k1, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0(%l: index):
// CHECK-NEXT:          %x_1 = memref.load %s[%l] : memref<1xf32>
// CHECK-NEXT:          %y = math.sqrt %x_1 : f32
// CHECK-NEXT:          memref.store %y, %out0[%i, %l] : memref<4x1xf32>
// CHECK-NEXT:          scf.reduce
// CHECK-NEXT:        }) : (index, index, index) -> ()
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Must not fire: nests of different kernels, or outside any kernel (the two
// bare nests after the second kernel); a consumer that reads a neighbour
// (index i + 1, written by another iteration), or has other bounds; a view
// of the written buffer. Two nests that share only what they read (the
// t[i + 1] and t[i] readers) do merge.
func.func @keep(%a: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<2x2xf32>, %out2: memref<3xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k2 = arith.constant 2 : index
  %k3 = arith.constant 3 : index
  %k4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  %v = memref.reinterpret_cast %t to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xf32> to memref<2x2xf32>
  loop.kernel {
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %a[%i] : memref<4xf32>
      memref.store %x, %t[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  loop.kernel {
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %t[%i] : memref<4xf32>
      memref.store %x, %out0[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %t[%i] : memref<4xf32>
    memref.store %x, %out0[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %out0[%i] : memref<4xf32>
    memref.store %x, %t[%i] : memref<4xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  loop.kernel {
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %a[%i] : memref<4xf32>
      memref.store %x, %t[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%k0, %k3, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %one = arith.constant 1 : index
      %n = arith.addi %i, %one : index
      %x = memref.load %t[%n] : memref<4xf32>
      memref.store %x, %out0[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%k0, %k3, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %t[%i] : memref<4xf32>
      memref.store %x, %out2[%i] : memref<3xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  loop.kernel {
    "scf.parallel"(%k0, %k3, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %out2[%i] : memref<3xf32>
      memref.store %x, %t[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%k0, %k2, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %c0 = arith.constant 0 : index
      %x = memref.load %v[%i, %c0] : memref<2x2xf32>
      memref.store %x, %out1[%i, %c0] : memref<2x2xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}
// CHECK-LABEL: func.func @keep
// CHECK:         loop.kernel {
// CHECK-NEXT:      "scf.parallel"
// CHECK-NEXT:      ^bb0(%i: index):
// CHECK:         loop.kernel {
// CHECK-NEXT:      "scf.parallel"
// CHECK-NEXT:      ^bb0(%i_1: index):
// CHECK:           }) : (index, index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    "scf.parallel"
// CHECK-NEXT:    ^bb0(%i_2: index):
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^bb0(%i_3: index):
// CHECK:         loop.kernel {
// CHECK-NEXT:      "scf.parallel"
// CHECK-NEXT:      ^bb0(%i_4: index):
// CHECK:           "scf.parallel"
// CHECK-NEXT:      ^bb0(%i_5: index):
// CHECK:             memref.load %t[%n]
// CHECK:             memref.load %t[%i_5]
// CHECK-NEXT:        memref.store %x_6, %out2[%i_5]
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      })
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.kernel {
// CHECK-NEXT:      "scf.parallel"
// CHECK-NEXT:      ^bb0(%i_6: index):
// CHECK:           "scf.parallel"
// CHECK-NEXT:      ^bb0(%i_7: index):
// CHECK-NOT:     scf.parallel
// CHECK:         func.return

// -----

// A parallel nest merges with a sequential one (the merged loop is not
// parallel); the consumer updates the output in place, so the producer's
// store is overwritten before anything reads it and goes.
func.func @in_place(%a: memref<4xf32>, %out0: memref<4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  loop.kernel {
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %a[%i] : memref<4xf32>
      memref.store %x, %out0[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.for %i = %k0 to %k4 step %k1 {
      %x = memref.load %out0[%i] : memref<4xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %out0[%i] : memref<4xf32>
    }
  }
  func.return
}
// CHECK-LABEL: func.func @in_place
// CHECK:         loop.kernel {
// CHECK-NEXT:      scf.for %i = %k0 to %k4 step %k1 {
// CHECK-NEXT:        %x = memref.load %a[%i] : memref<4xf32>
// CHECK-NEXT:        %y = arith.addf %x, %x : f32
// CHECK-NEXT:        memref.store %y, %out0[%i] : memref<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
