// RUN: ember-opt %s -p loop-plan-memory --split-input-file | filecheck %s

// loop-plan-memory places every loop.alloc in one arena: a buffer is live
// from its alloc to the last top-level op that uses it (directly, inside a
// loop nest, or through a loop.reshape view); buffers live at the same time
// never overlap, the others may share memory. Offsets are 64-byte aligned,
// buffers are placed largest first at the lowest offset that fits, and the
// function gets loop.arena_bytes (the arena) and loop.naive_bytes (the sum
// of the aligned buffers, i.e. no reuse).

// A chain a -> b -> c -> d of 64-byte buffers: each one is read only by the
// next nest, so a and c share offset 0, b and d offset 64, and the arena is
// half the naive size.
func.func @chain(%x: memref<16xf32>, %out0: memref<16xf32>) {
  %a = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 16 step 1 parallel {
    %v = memref.load %x[%i] : memref<16xf32>
    memref.store %v, %a[%i] : memref<16xf32>
  }
  %b = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 16 step 1 parallel {
    %v = memref.load %a[%i] : memref<16xf32>
    memref.store %v, %b[%i] : memref<16xf32>
  }
  %c = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 16 step 1 parallel {
    %v = memref.load %b[%i] : memref<16xf32>
    memref.store %v, %c[%i] : memref<16xf32>
  }
  %d = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 16 step 1 parallel {
    %v = memref.load %c[%i] : memref<16xf32>
    memref.store %v, %d[%i] : memref<16xf32>
  }
  loop.for %i = 0 to 16 step 1 parallel {
    %v = memref.load %d[%i] : memref<16xf32>
    memref.store %v, %out0[%i] : memref<16xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @chain(%x: memref<16xf32>, %out0: memref<16xf32>) attributes {loop.arena_bytes = 128 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-NEXT:    %a = loop.alloc {offset = 0 : i64} : memref<16xf32>
// CHECK:         %b = loop.alloc {offset = 64 : i64} : memref<16xf32>
// CHECK:         %c = loop.alloc {offset = 0 : i64} : memref<16xf32>
// CHECK:         %d = loop.alloc {offset = 64 : i64} : memref<16xf32>
// CHECK-NOT:     loop.alloc

// -----

// A buffer kept alive by a view: %a's own last use is the loop.reshape, but
// the view %v is read by the nest that writes %c, so %c must not take %a's
// memory (nor %b's, read by the same nest). After that nest, %d may reuse
// offset 0.
func.func @view(%x: memref<16xf32>, %out0: memref<16xf32>) {
  %a = loop.alloc : memref<4x4xf32>
  loop.for %i = 0 to 4 step 1 parallel {
    loop.for %j = 0 to 4 step 1 parallel {
      %k = arith.constant 1.000000e+00 : f32
      memref.store %k, %a[%i, %j] : memref<4x4xf32>
    }
  }
  %v = loop.reshape %a : memref<4x4xf32> -> memref<16xf32>
  %b = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 16 step 1 parallel {
    %t = memref.load %x[%i] : memref<16xf32>
    memref.store %t, %b[%i] : memref<16xf32>
  }
  %c = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 16 step 1 parallel {
    %p = memref.load %v[%i] : memref<16xf32>
    %q = memref.load %b[%i] : memref<16xf32>
    %s = arith.addf %p, %q : f32
    memref.store %s, %c[%i] : memref<16xf32>
  }
  %d = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 16 step 1 parallel {
    %p = memref.load %c[%i] : memref<16xf32>
    memref.store %p, %d[%i] : memref<16xf32>
  }
  loop.for %i = 0 to 16 step 1 parallel {
    %p = memref.load %d[%i] : memref<16xf32>
    memref.store %p, %out0[%i] : memref<16xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @view(%x: memref<16xf32>, %out0: memref<16xf32>) attributes {loop.arena_bytes = 192 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-NEXT:    %a = loop.alloc {offset = 0 : i64} : memref<4x4xf32>
// CHECK:         %v = loop.reshape %a : memref<4x4xf32> -> memref<16xf32>
// CHECK-NEXT:    %b = loop.alloc {offset = 64 : i64} : memref<16xf32>
// CHECK:         %c = loop.alloc {offset = 128 : i64} : memref<16xf32>
// CHECK:         %d = loop.alloc {offset = 0 : i64} : memref<16xf32>

// -----

// Alignment: three buffers live together (40, 3 and 80 bytes). The largest
// goes first at 0; the 40-byte one starts at 128 (80 rounded up to 64s), the
// 3-byte one at 192, and the arena is rounded up to 256 too.
func.func @align(%out0: memref<i8>) {
  %a = loop.alloc : memref<10xf32>
  %b = loop.alloc : memref<3xi8>
  %c = loop.alloc : memref<20xf32>
  loop.for %i = 0 to 1 step 1 {
    %p = memref.load %a[%i] : memref<10xf32>
    %q = memref.load %b[%i] : memref<3xi8>
    %r = memref.load %c[%i] : memref<20xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @align(%out0: memref<i8>) attributes {loop.arena_bytes = 256 : i64, loop.naive_bytes = 256 : i64} {
// CHECK-NEXT:    %a = loop.alloc {offset = 128 : i64} : memref<10xf32>
// CHECK-NEXT:    %b = loop.alloc {offset = 192 : i64} : memref<3xi8>
// CHECK-NEXT:    %c = loop.alloc {offset = 0 : i64} : memref<20xf32>

// -----

// First fit: %b dies after the first nest; %d (live with %a at 0 and %c at
// 256, both read in a nested loop) fits in the 128-byte gap %b leaves.
func.func @gap(%out0: memref<i8>) {
  %a = loop.alloc : memref<32xf32>
  %b = loop.alloc : memref<32xf32>
  %c = loop.alloc : memref<32xf32>
  loop.for %i = 0 to 1 step 1 {
    %p = memref.load %b[%i] : memref<32xf32>
  }
  %d = loop.alloc : memref<16xf32>
  loop.for %i = 0 to 1 step 1 {
    loop.for %j = 0 to 1 step 1 {
      %p = memref.load %a[%i] : memref<32xf32>
      %q = memref.load %c[%j] : memref<32xf32>
      %r = memref.load %d[%j] : memref<16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gap(%out0: memref<i8>) attributes {loop.arena_bytes = 384 : i64, loop.naive_bytes = 448 : i64} {
// CHECK-NEXT:    %a = loop.alloc {offset = 0 : i64} : memref<32xf32>
// CHECK-NEXT:    %b = loop.alloc {offset = 128 : i64} : memref<32xf32>
// CHECK-NEXT:    %c = loop.alloc {offset = 256 : i64} : memref<32xf32>
// CHECK:         %d = loop.alloc {offset = 128 : i64} : memref<16xf32>

// -----

// No buffers: an empty arena.
func.func @none(%x: memref<4xf32>) {
  func.return
}

// CHECK-LABEL: func.func @none(%x: memref<4xf32>) attributes {loop.arena_bytes = 0 : i64, loop.naive_bytes = 0 : i64} {
