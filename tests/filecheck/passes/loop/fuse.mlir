// RUN: ember-opt %s -p loop-fuse --split-input-file | filecheck %s

// One fusion group: a producer nest and its elementwise consumer merge, the
// consumer reads the stored value straight from the register, and the
// intermediate buffer, now only written, disappears.
func.func @producer_consumer(%a: memref<4x8xf32>, %out0: memref<4x8xf32>) {
  %t = loop.alloc : memref<4x8xf32>
  loop.for %i = 0 to 4 step 1 parallel {
    loop.for %j = 0 to 8 step 1 parallel {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %t[%i, %j] : memref<4x8xf32>
    }
  } {ember.fusion_group = 0 : i64}
  loop.for %k = 0 to 4 step 1 parallel {
    loop.for %l = 0 to 8 step 1 parallel {
      %x = memref.load %t[%k, %l] : memref<4x8xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %out0[%k, %l] : memref<4x8xf32>
    }
  } {ember.fusion_group = 0 : i64}
  func.return
}
// CHECK-LABEL: func.func @producer_consumer
// CHECK-NEXT:    loop.for %i = 0 to 4 step 1 parallel {
// CHECK-NEXT:      loop.for %j = 0 to 8 step 1 parallel {
// CHECK-NEXT:        %x = memref.load %a[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:        %y = arith.addf %x, %x : f32
// CHECK-NEXT:        %y_1 = arith.mulf %y, %y : f32
// CHECK-NEXT:        memref.store %y_1, %out0[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    } {ember.fusion_group = 0 : i64}
// CHECK-NEXT:    func.return

// -----

// A reduction over j followed by an epilogue over the reduced rows: the outer
// loops merge (both index the row buffer with i at position 0); the inner
// loops do not (the epilogue needs the finished row sum, read at 0, not j).
func.func @reduction_epilogue(%a: memref<4x8xf32>, %out0: memref<4x1xf32>) {
  %s = loop.alloc : memref<4x1xf32>
  loop.for %i = 0 to 4 step 1 parallel {
    loop.for %j = 0 to 8 step 1 {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %acc = memref.load %s[%i, %c0] : memref<4x1xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %s[%i, %c0] : memref<4x1xf32>
    }
  } {ember.fusion_group = 3 : i64}
  loop.for %k = 0 to 4 step 1 parallel {
    loop.for %l = 0 to 1 step 1 parallel {
      %x = memref.load %s[%k, %l] : memref<4x1xf32>
      %y = math.sqrt %x : f32
      memref.store %y, %out0[%k, %l] : memref<4x1xf32>
    }
  } {ember.fusion_group = 3 : i64}
  func.return
}
// CHECK-LABEL: func.func @reduction_epilogue
// CHECK-NEXT:    %s = loop.alloc : memref<4x1xf32>
// CHECK-NEXT:    loop.for %i = 0 to 4 step 1 parallel {
// CHECK-NEXT:      loop.for %j = 0 to 8 step 1 {
// CHECK:             memref.store %sum, %s[%i, %c0]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %l = 0 to 1 step 1 parallel {
// CHECK-NEXT:        %x_1 = memref.load %s[%i, %l] : memref<4x1xf32>
// CHECK-NEXT:        %y = math.sqrt %x_1 : f32
// CHECK-NEXT:        memref.store %y, %out0[%i, %l] : memref<4x1xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    } {ember.fusion_group = 3 : i64}
// CHECK-NEXT:    func.return

// -----

// Must not fire: nests of different groups (or of none); a consumer that
// reads a neighbour (index i + 1, written by another iteration), or has other
// bounds; a view of the written buffer. Two nests that share only what they
// read (the t[i + 1] and t[i] readers) do merge.
func.func @keep(%a: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<2x2xf32>, %out2: memref<3xf32>) {
  %t = loop.alloc : memref<4xf32>
  %v = loop.reshape %t : memref<4xf32> -> memref<2x2xf32>
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %t[%i] : memref<4xf32>
  } {ember.fusion_group = 0 : i64}
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %t[%i] : memref<4xf32>
    memref.store %x, %out0[%i] : memref<4xf32>
  } {ember.fusion_group = 1 : i64}
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %t[%i] : memref<4xf32>
    memref.store %x, %out0[%i] : memref<4xf32>
  }
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %t[%i] : memref<4xf32>
  } {ember.fusion_group = 2 : i64}
  loop.for %i = 0 to 3 step 1 parallel {
    %one = arith.constant 1 : index
    %n = arith.addi %i, %one : index
    %x = memref.load %t[%n] : memref<4xf32>
    memref.store %x, %out0[%i] : memref<4xf32>
  } {ember.fusion_group = 2 : i64}
  loop.for %i = 0 to 3 step 1 parallel {
    %x = memref.load %t[%i] : memref<4xf32>
    memref.store %x, %out2[%i] : memref<3xf32>
  } {ember.fusion_group = 2 : i64}
  loop.for %i = 0 to 3 step 1 parallel {
    %x = memref.load %out2[%i] : memref<3xf32>
    memref.store %x, %t[%i] : memref<4xf32>
  } {ember.fusion_group = 4 : i64}
  loop.for %i = 0 to 2 step 1 parallel {
    %c0 = arith.constant 0 : index
    %x = memref.load %v[%i, %c0] : memref<2x2xf32>
    memref.store %x, %out1[%i, %c0] : memref<2x2xf32>
  } {ember.fusion_group = 4 : i64}
  func.return
}
// CHECK-LABEL: func.func @keep
// CHECK:         loop.for %i = 0 to 4
// CHECK:         loop.for %i_1 = 0 to 4
// CHECK:         loop.for %i_2 = 0 to 4
// CHECK:         loop.for %i_3 = 0 to 4
// CHECK:         loop.for %i_4 = 0 to 3
// CHECK:           memref.load %t[%n]
// CHECK:           memref.load %t[%i_4]
// CHECK-NEXT:      memref.store %x_5, %out2[%i_4]
// CHECK-NEXT:    } {ember.fusion_group = 2 : i64}
// CHECK-NEXT:    loop.for %i_5 = 0 to 3
// CHECK:         loop.for %i_6 = 0 to 2
// CHECK-NOT:     loop.for
// CHECK:         func.return

// -----

// A parallel nest merges with a sequential one (the merged loop is not
// parallel); the consumer updates the output in place, so the producer's
// store is overwritten before anything reads it and goes.
func.func @in_place(%a: memref<4xf32>, %out0: memref<4xf32>) {
  loop.for %i = 0 to 4 step 1 parallel {
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %out0[%i] : memref<4xf32>
  } {ember.fusion_group = 0 : i64}
  loop.for %i = 0 to 4 step 1 {
    %x = memref.load %out0[%i] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out0[%i] : memref<4xf32>
  } {ember.fusion_group = 0 : i64}
  func.return
}
// CHECK-LABEL: func.func @in_place
// CHECK-NEXT:    loop.for %i = 0 to 4 step 1 {
// CHECK-NEXT:      %x = memref.load %a[%i] : memref<4xf32>
// CHECK-NEXT:      %y = arith.addf %x, %x : f32
// CHECK-NEXT:      memref.store %y, %out0[%i] : memref<4xf32>
// CHECK-NEXT:    } {ember.fusion_group = 0 : i64}
// CHECK-NEXT:    func.return
