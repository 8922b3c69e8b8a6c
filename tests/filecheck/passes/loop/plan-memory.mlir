// RUN: ember-opt %s -p loop-plan-memory --split-input-file | filecheck %s

// loop-plan-memory places every memref.alloc in one arena: a buffer is live
// from its alloc to the last top-level op that uses it (directly, inside a
// loop nest, or through a memref.reinterpret_cast view); buffers live at the same time
// never overlap, the others may share memory. Offsets are 64-byte aligned,
// buffers are placed largest first at the lowest offset that fits, and the
// function gets loop.arena_bytes (the arena) and loop.naive_bytes (the sum
// of the aligned buffers, i.e. no reuse).

// A chain a -> b -> c -> d of 64-byte buffers: each one is read only by the
// next nest, so a and c share offset 0, b and d offset 64, and the arena is
// half the naive size.
func.func @chain(%x: memref<16xf32>, %out0: memref<16xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k16 = arith.constant 16 : index
  %a = memref.alloc() : memref<16xf32>
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<16xf32>
    memref.store %v, %a[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %b = memref.alloc() : memref<16xf32>
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %a[%i] : memref<16xf32>
    memref.store %v, %b[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %c = memref.alloc() : memref<16xf32>
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %b[%i] : memref<16xf32>
    memref.store %v, %c[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %d = memref.alloc() : memref<16xf32>
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %c[%i] : memref<16xf32>
    memref.store %v, %d[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %d[%i] : memref<16xf32>
    memref.store %v, %out0[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @chain(%x: memref<16xf32>, %out0: memref<16xf32>, %arena: memref<128xi8> {ember.arena}) attributes {loop.arena_bytes = 128 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-DAG:     %[[AT0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[AT64:.*]] = arith.constant 64 : index
// CHECK:         %a = memref.view %arena[%[[AT0]]][] : memref<128xi8> to memref<16xf32>
// CHECK:         %b = memref.view %arena[%[[AT64]]][] : memref<128xi8> to memref<16xf32>
// CHECK:         %c = memref.view %arena[%[[AT0]]][] : memref<128xi8> to memref<16xf32>
// CHECK:         %d = memref.view %arena[%[[AT64]]][] : memref<128xi8> to memref<16xf32>
// CHECK-NOT:     memref.alloc

// -----

// A buffer kept alive by a view: %a's own last use is the reinterpret_cast view, but
// the view %v is read by the nest that writes %c, so %c must not take %a's
// memory (nor %b's, read by the same nest). After that nest, %d may reuse
// offset 0.
func.func @view(%x: memref<16xf32>, %out0: memref<16xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  %k16 = arith.constant 16 : index
  %a = memref.alloc() : memref<4x4xf32>
  "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      %k = arith.constant 1.000000e+00 : f32
      memref.store %k, %a[%i, %j] : memref<4x4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  %v = memref.reinterpret_cast %a to offset: [0], sizes: [16], strides: [1] : memref<4x4xf32> to memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %t = memref.load %x[%i] : memref<16xf32>
    memref.store %t, %b[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %c = memref.alloc() : memref<16xf32>
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %p = memref.load %v[%i] : memref<16xf32>
    %q = memref.load %b[%i] : memref<16xf32>
    %s = arith.addf %p, %q : f32
    memref.store %s, %c[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %d = memref.alloc() : memref<16xf32>
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %p = memref.load %c[%i] : memref<16xf32>
    memref.store %p, %d[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%k0, %k16, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %p = memref.load %d[%i] : memref<16xf32>
    memref.store %p, %out0[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @view(%x: memref<16xf32>, %out0: memref<16xf32>, %arena: memref<192xi8> {ember.arena}) attributes {loop.arena_bytes = 192 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-DAG:     %[[AT0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[AT64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[AT128:.*]] = arith.constant 128 : index
// CHECK:         %a = memref.view %arena[%[[AT0]]][] : memref<192xi8> to memref<4x4xf32>
// CHECK:         %v = memref.reinterpret_cast %a to offset: [0], sizes: [16], strides: [1] : memref<4x4xf32> to memref<16xf32>
// CHECK-NEXT:    %b = memref.view %arena[%[[AT64]]][] : memref<192xi8> to memref<16xf32>
// CHECK:         %c = memref.view %arena[%[[AT128]]][] : memref<192xi8> to memref<16xf32>
// CHECK:         %d = memref.view %arena[%[[AT0]]][] : memref<192xi8> to memref<16xf32>

// -----

// Alignment: three buffers live together (40, 3 and 80 bytes). The largest
// goes first at 0; the 40-byte one starts at 128 (80 rounded up to 64s), the
// 3-byte one at 192, and the arena is rounded up to 256 too.
func.func @align(%out0: memref<i8>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %a = memref.alloc() : memref<10xf32>
  %b = memref.alloc() : memref<3xi8>
  %c = memref.alloc() : memref<20xf32>
  scf.for %i = %k0 to %k1 step %k1 {
    %p = memref.load %a[%i] : memref<10xf32>
    %q = memref.load %b[%i] : memref<3xi8>
    %r = memref.load %c[%i] : memref<20xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @align(%out0: memref<i8>, %arena: memref<256xi8> {ember.arena}) attributes {loop.arena_bytes = 256 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-DAG:     %[[AT128:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[AT192:.*]] = arith.constant 192 : index
// CHECK-DAG:     %[[AT0:.*]] = arith.constant 0 : index
// CHECK:         %a = memref.view %arena[%[[AT128]]][] : memref<256xi8> to memref<10xf32>
// CHECK-NEXT:    %b = memref.view %arena[%[[AT192]]][] : memref<256xi8> to memref<3xi8>
// CHECK-NEXT:    %c = memref.view %arena[%[[AT0]]][] : memref<256xi8> to memref<20xf32>

// -----

// First fit: %b dies after the first nest; %d (live with %a at 0 and %c at
// 256, both read in a nested loop) fits in the 128-byte gap %b leaves.
func.func @gap(%out0: memref<i8>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<32xf32>
  %c = memref.alloc() : memref<32xf32>
  scf.for %i = %k0 to %k1 step %k1 {
    %p = memref.load %b[%i] : memref<32xf32>
    %q = memref.load %a[%i] : memref<32xf32>
    %r = memref.load %c[%i] : memref<32xf32>
  }
  %d = memref.alloc() : memref<16xf32>
  scf.for %i = %k0 to %k1 step %k1 {
    scf.for %j = %k0 to %k1 step %k1 {
      %p = memref.load %a[%i] : memref<32xf32>
      %q = memref.load %c[%j] : memref<32xf32>
      %r = memref.load %d[%j] : memref<16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gap(%out0: memref<i8>, %arena: memref<384xi8> {ember.arena}) attributes {loop.arena_bytes = 384 : i64, loop.naive_bytes = 448 : i64} {
// CHECK-DAG:     %[[AT0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[AT128:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[AT256:.*]] = arith.constant 256 : index
// CHECK:         %a = memref.view %arena[%[[AT0]]][] : memref<384xi8> to memref<32xf32>
// CHECK-NEXT:    %b = memref.view %arena[%[[AT128]]][] : memref<384xi8> to memref<32xf32>
// CHECK-NEXT:    %c = memref.view %arena[%[[AT256]]][] : memref<384xi8> to memref<32xf32>
// CHECK:         %d = memref.view %arena[%[[AT128]]][] : memref<384xi8> to memref<16xf32>

// -----

// A buffer is live from its first use, not from its alloc: %late, allocated
// first but used only by the second nest, shares memory with %early.
func.func @first_use(%out0: memref<i8>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %late = memref.alloc() : memref<32xf32>
  %early = memref.alloc() : memref<32xf32>
  scf.for %i = %k0 to %k1 step %k1 {
    %p = memref.load %early[%i] : memref<32xf32>
  }
  scf.for %i = %k0 to %k1 step %k1 {
    %p = memref.load %late[%i] : memref<32xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @first_use(%out0: memref<i8>, %arena: memref<128xi8> {ember.arena}) attributes {loop.arena_bytes = 128 : i64, loop.naive_bytes = 256 : i64} {
// CHECK:         %late = memref.view %arena[%{{.*}}][] : memref<128xi8> to memref<32xf32>
// CHECK-NEXT:    %early = memref.view %arena[%{{.*}}][] : memref<128xi8> to memref<32xf32>

// -----

// Allocs inside a loop.kernel are placed too, in the one arena: each
// becomes a view in front of its kernel (which captures it), and time inside
// the kernel is its ops, so %s, dead after the kernel's first nest, shares
// memory with %u; the kernel's result %r, allocated in front of it, is live
// from the nest that writes it, with %u.
func.func @kernel(%x: memref<32xf32>, %out0: memref<32xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %r = memref.alloc() : memref<32xf32>
  loop.kernel "elementwise" {
    %s = memref.alloc() : memref<32xf32>
    scf.for %i = %k0 to %k1 step %k1 {
      %p = memref.load %x[%i] : memref<32xf32>
      memref.store %p, %s[%i] : memref<32xf32>
    }
    %u = memref.alloc() : memref<32xf32>
    scf.for %i = %k0 to %k1 step %k1 {
      %p = memref.load %s[%i] : memref<32xf32>
      memref.store %p, %u[%i] : memref<32xf32>
    }
    scf.for %i = %k0 to %k1 step %k1 {
      %p = memref.load %u[%i] : memref<32xf32>
      memref.store %p, %r[%i] : memref<32xf32>
    }
  }
  scf.for %i = %k0 to %k1 step %k1 {
    %p = memref.load %r[%i] : memref<32xf32>
    memref.store %p, %out0[%i] : memref<32xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @kernel(%x: memref<32xf32>, %out0: memref<32xf32>, %arena: memref<256xi8> {ember.arena}) attributes {loop.arena_bytes = 256 : i64, loop.naive_bytes = 384 : i64} {
// CHECK-DAG:     %[[AT0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[AT128:.*]] = arith.constant 128 : index
// CHECK:         %r = memref.view %arena[%[[AT0]]][] : memref<256xi8> to memref<32xf32>
// CHECK-NEXT:    %s = memref.view %arena[%[[AT0]]][] : memref<256xi8> to memref<32xf32>
// CHECK-NEXT:    %u = memref.view %arena[%[[AT128]]][] : memref<256xi8> to memref<32xf32>
// CHECK-NEXT:    loop.kernel "elementwise" {
// CHECK-NOT:       memref.alloc
// CHECK:           memref.store %{{.*}}, %s[%{{.*}}]
// CHECK:         }
// CHECK-NEXT:    scf.for

// -----

// No buffers: an empty arena.
func.func @none(%x: memref<4xf32>) {
  func.return
}

// CHECK-LABEL: func.func @none(%x: memref<4xf32>, %arena: memref<0xi8> {ember.arena}) attributes {loop.arena_bytes = 0 : i64, loop.naive_bytes = 0 : i64} {

// -----

// A kernel function (outlined before its loops were made) keeps its own
// buffers until here: each becomes an argument that every call allocates
// in front of itself, planned in the caller's arena. Within a call, time
// runs over the kernel's top-level ops, so the kernel's %s (live in its
// first nest) and %t (live in its second) share offset 64 in the first
// call; %mid, written by the first call's nests and read by the second
// call's first, is dead by the second call's second nest, whose %t_1 takes
// its place.
func.func @calls(%x: memref<16xf32>, %out0: memref<16xf32>) {
  %mid = memref.alloc() : memref<16xf32>
  func.call @k(%x, %mid) : (memref<16xf32>, memref<16xf32>) -> ()
  func.call @k(%mid, %out0) : (memref<16xf32>, memref<16xf32>) -> ()
  func.return
}
func.func private @k(%in: memref<16xf32>, %out: memref<16xf32>) attributes {ember.kernel} {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k16 = arith.constant 16 : index
  %s = memref.alloc() : memref<16xf32>
  %t = memref.alloc() : memref<16xf32>
  scf.for %i = %k0 to %k16 step %k1 {
    %v = memref.load %in[%i] : memref<16xf32>
    memref.store %v, %s[%i] : memref<16xf32>
    %w = memref.load %s[%i] : memref<16xf32>
    memref.store %w, %out[%i] : memref<16xf32>
  }
  scf.for %i = %k0 to %k16 step %k1 {
    %v = memref.load %out[%i] : memref<16xf32>
    memref.store %v, %t[%i] : memref<16xf32>
    %w = memref.load %t[%i] : memref<16xf32>
    memref.store %w, %out[%i] : memref<16xf32>
  }
  func.return
}
// CHECK-LABEL: func.func @calls(%x: memref<16xf32>, %out0: memref<16xf32>, %arena: memref<128xi8> {ember.arena})
// CHECK-SAME:    attributes {loop.arena_bytes = 128 : i64, loop.naive_bytes = 320 : i64}
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = arith.constant 64 : index
// CHECK-NEXT:    %mid = memref.view %arena[%0][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT:    %s = memref.view %arena[%1][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT:    %t = memref.view %arena[%1][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT:    func.call @k(%x, %mid, %s, %t)
// CHECK-NEXT:    %s_1 = memref.view %arena[%1][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT:    %t_1 = memref.view %arena[%0][] : memref<128xi8> to memref<16xf32>
// CHECK-NEXT:    func.call @k(%mid, %out0, %s_1, %t_1)
// CHECK:       func.func private @k(%in: memref<16xf32>, %out: memref<16xf32>, %s: memref<16xf32>, %t: memref<16xf32>) attributes {ember.kernel}
// CHECK-NOT:     memref.alloc
