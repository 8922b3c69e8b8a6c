// RUN: ember-opt %s -p loop-fuse --split-input-file | filecheck %s

// A Winograd-like pair of nests: the first writes t[h, i, c] for each i, the
// second reads it back over another loop (a reduction over i for each a).
// They merge over h, and t, indexed by h at position 0 in every access,
// becomes each iteration's own scratch, without that dim.
func.func @tile_scratch(%a: memref<2x3x16xf32>, %out0: memref<2x3x16xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k2 = arith.constant 2 : index
  %k3 = arith.constant 3 : index
  loop.kernel "transforms" {
    %t = memref.alloc() : memref<2x3x16xf32>
    "scf.parallel"(%k0, %k2, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%h: index):
      scf.for %i = %k0 to %k3 step %k1 {
        %x = vector.load %a[%h, %i, %k0] : memref<2x3x16xf32>, vector<16xf32>
        %y = vector.fma %x, %x, %x : vector<16xf32>
        vector.store %y, %t[%h, %i, %k0] : memref<2x3x16xf32>, vector<16xf32>
      }
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%k0, %k2, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%g: index):
      scf.for %b = %k0 to %k3 step %k1 {
        %z = vector.load %t[%g, %k2, %k0] : memref<2x3x16xf32>, vector<16xf32>
        %w = vector.load %t[%g, %b, %k0] : memref<2x3x16xf32>, vector<16xf32>
        %s = arith.addf %z, %w : vector<16xf32>
        vector.store %s, %out0[%g, %b, %k0] : memref<2x3x16xf32>, vector<16xf32>
      }
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}
// CHECK-LABEL: func.func @tile_scratch
// CHECK:         loop.kernel "transforms" {
// CHECK-NEXT:      "scf.parallel"(%k0, %k2, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%h: index):
// CHECK-NEXT:        %t = memref.alloca() {alignment = 64 : i64} : memref<3x16xf32>
// CHECK-NEXT:        scf.for %i = %k0 to %k3 step %k1 {
// CHECK:               vector.store %y, %t[%i, %k0] : memref<3x16xf32>, vector<16xf32>
// CHECK:             scf.for %b = %k0 to %k3 step %k1 {
// CHECK-NEXT:          %z = vector.load %t[%k2, %k0] : memref<3x16xf32>, vector<16xf32>
// CHECK-NEXT:          %w = vector.load %t[%b, %k0] : memref<3x16xf32>, vector<16xf32>
// CHECK-NOT:       memref.alloc()

// -----

// Must not fire: an outer loop (%h) that indexes no dim of the buffer could
// carry values from one of its iterations to the next through it, so
// contraction stops there (t stays whole even though %w indexes its dim).
func.func @carried(%a: memref<4xf32>, %out0: memref<2x4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k2 = arith.constant 2 : index
  %k4 = arith.constant 4 : index
  loop.kernel "carried" {
    %t = memref.alloc() : memref<4xf32>
    "scf.parallel"(%k0, %k2, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%h: index):
      "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%w: index):
        %x = memref.load %a[%w] : memref<4xf32>
        memref.store %x, %t[%w] : memref<4xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%v: index):
        %y = memref.load %t[%v] : memref<4xf32>
        %z = arith.addf %y, %y : f32
        memref.store %z, %out0[%h, %v] : memref<2x4xf32>
        memref.store %z, %t[%v] : memref<4xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}
// CHECK-LABEL: func.func @carried
// CHECK:         %t = memref.alloc() : memref<4xf32>
// CHECK-NOT:     memref.alloca

// -----

// Must not fire: a view of the buffer (its accesses could not be rewritten),
// and a per-iteration slice larger than MAX_SCRATCH_BYTES (2 x 40000 floats:
// 160,000 bytes a slice, more than a thread's stack should hold).
func.func @kept(%a: memref<2x40000xf32>, %out0: memref<2x40000xf32>, %out1: memref<4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k2 = arith.constant 2 : index
  %k40000 = arith.constant 40000 : index
  loop.kernel "big" {
    %big = memref.alloc() : memref<2x40000xf32>
    "scf.parallel"(%k0, %k2, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      scf.for %j = %k0 to %k40000 step %k1 {
        %x = memref.load %a[%i, %j] : memref<2x40000xf32>
        memref.store %x, %big[%i, %j] : memref<2x40000xf32>
      }
      scf.for %l = %k0 to %k40000 step %k1 {
        %y = memref.load %big[%i, %l] : memref<2x40000xf32>
        memref.store %y, %out0[%i, %l] : memref<2x40000xf32>
      }
      scf.reduce
    }) : (index, index, index) -> ()
  }
  loop.kernel "viewed" {
    %t = memref.alloc() : memref<2x2xf32>
    %v = memref.reinterpret_cast %t to offset: [0], sizes: [4], strides: [1] : memref<2x2xf32> to memref<4xf32>
    "scf.parallel"(%k0, %k2, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %a[%i, %k0] : memref<2x40000xf32>
      memref.store %x, %t[%i, %k0] : memref<2x2xf32>
      %y = memref.load %t[%i, %k0] : memref<2x2xf32>
      memref.store %y, %t[%i, %k1] : memref<2x2xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    %z = memref.load %v[%k1] : memref<4xf32>
    memref.store %z, %out1[%k0] : memref<4xf32>
  }
  func.return
}
// CHECK-LABEL: func.func @kept
// CHECK:         %big = memref.alloc() : memref<2x40000xf32>
// CHECK:         %t = memref.alloc() : memref<2x2xf32>
// CHECK-NOT:     memref.alloca
