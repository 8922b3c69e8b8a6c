// RUN: ember-opt %s -p loop-mark-noalias --split-input-file | filecheck %s
// RUN: ember-opt %s -p loop-mark-noalias,convert-loop-to-llvm --split-input-file | filecheck %s --check-prefix=LLVM

// The entry function's input, output, weights and disjoint arena views are
// apart at the only call: every buffer argument is noalias; the index is not.
func.func @main(%x: memref<4xf32>, %out0: memref<4xf32>, %weights: memref<64xi8> {ember.weights}, %arena: memref<64xi8> {ember.arena}) attributes {ember.packed_buffers} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %w = memref.view %weights[%c0][] : memref<64xi8> to memref<4xf32>
  %t = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  %u = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
  func.call @main_kernel0(%x, %w, %t, %u, %out0, %c0) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, index) -> ()
  func.return
}
func.func private @main_kernel0(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>, %e: memref<4xf32>, %i: index) attributes {ember.kernel} {
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%a: memref<4xf32> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias}, %c: memref<4xf32> {llvm.noalias}, %d: memref<4xf32> {llvm.noalias}, %e: memref<4xf32> {llvm.noalias}, %i: index)

// LLVM-LABEL: llvm.func @main_kernel0
// LLVM-SAME:    (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64)

// -----

// Must not fire: two arena views that the memory plan put in overlapping
// bytes (16..32 and 24..40), and a view and a subview of the same buffer.
// Only the buffer apart from all others (%x) is marked.
func.func @main(%x: memref<4xf32>, %arena: memref<64xi8> {ember.arena}) attributes {ember.packed_buffers} {
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %c48 = arith.constant 48 : index
  %t = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
  %u = memref.view %arena[%c24][] : memref<64xi8> to memref<4xf32>
  %v = memref.view %arena[%c48][] : memref<64xi8> to memref<4xf32>
  %s = memref.subview %v[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  func.call @main_kernel0(%x, %t, %u, %v, %s) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<2xf32, strided<[1], offset: 2>>) -> ()
  func.return
}
func.func private @main_kernel0(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>, %e: memref<2xf32, strided<[1], offset: 2>>) attributes {ember.kernel} {
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%a: memref<4xf32> {llvm.noalias}, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>, %e: memref<2xf32, strided<[1], offset: 2>>)

// -----

// Must not fire across calls: a kernel shared by two calls keeps a mark only
// where every call keeps the buffers apart (the second call passes the same
// buffer twice, as %a and %c).
func.func @main(%x: memref<4xf32>, %y: memref<4xf32>, %out0: memref<4xf32>) attributes {ember.packed_buffers} {
  func.call @main_kernel0(%x, %y, %out0) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.call @main_kernel0(%out0, %y, %out0) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @main_kernel0(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) attributes {ember.kernel} {
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%a: memref<4xf32>, %b: memref<4xf32> {llvm.noalias}, %c: memref<4xf32>)

// -----

// Must not fire: a caller that is not the model's entry promises nothing
// about its arguments, so two of them may overlap; an arena view and a
// weights view are apart in any caller. A function that is not a kernel is
// left alone.
func.func @helper(%x: memref<4xf32>, %y: memref<4xf32>, %weights: memref<64xi8> {ember.weights}, %arena: memref<64xi8> {ember.arena}) {
  %c0 = arith.constant 0 : index
  %w = memref.view %weights[%c0][] : memref<64xi8> to memref<4xf32>
  %t = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  func.call @main_kernel0(%x, %y, %w, %t) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.call @main_kernel1(%w, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @other(%w, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @main_kernel0(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func private @main_kernel1(%a: memref<4xf32>, %b: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func private @other(%a: memref<4xf32>, %b: memref<4xf32>) {
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>)
// CHECK-LABEL: func.func private @main_kernel1
// CHECK-SAME:    (%a: memref<4xf32> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @other
// CHECK-SAME:    (%a: memref<4xf32>, %b: memref<4xf32>)

// -----

// A reinterpret_cast that stays within its source's bytes (a reshape) keeps
// its source's footprint: %r (bytes 0..16) and %u (16..32) are apart. One
// that reaches past its source (%wide: 8 floats from a 4-float view) may
// touch anything, so neither it nor what it might overlap is marked. A
// subview counts as all of its source (bytes 32..64 here), apart from %u.
func.func @main(%arena: memref<64xi8> {ember.arena}) attributes {ember.packed_buffers} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  %u = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
  %r = memref.reinterpret_cast %t to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xf32> to memref<2x2xf32>
  func.call @main_kernel0(%r, %u) : (memref<2x2xf32>, memref<4xf32>) -> ()
  %wide = memref.reinterpret_cast %t to offset: [0], sizes: [8], strides: [1] : memref<4xf32> to memref<8xf32>
  func.call @main_kernel1(%wide, %u) : (memref<8xf32>, memref<4xf32>) -> ()
  %bytes = memref.view %arena[%c32][] : memref<64xi8> to memref<32xi8>
  %tail = memref.subview %bytes[16] [16] [1] : memref<32xi8> to memref<16xi8, strided<[1], offset: 16>>
  func.call @main_kernel2(%tail, %u) : (memref<16xi8, strided<[1], offset: 16>>, memref<4xf32>) -> ()
  func.return
}
func.func private @main_kernel0(%a: memref<2x2xf32>, %b: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func private @main_kernel1(%a: memref<8xf32>, %b: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func private @main_kernel2(%a: memref<16xi8, strided<[1], offset: 16>>, %b: memref<4xf32>) attributes {ember.kernel} {
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%a: memref<2x2xf32> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @main_kernel1
// CHECK-SAME:    (%a: memref<8xf32>, %b: memref<4xf32>)
// CHECK-LABEL: func.func private @main_kernel2
// CHECK-SAME:    (%a: memref<16xi8, strided<[1], offset: 16>> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias})

// -----

// A view of a view at constant offsets has an exact range (16..32 of the
// arena inside the view at 0..32), apart from a view at 32..48 but not from
// one at 20..36.
func.func @main(%arena: memref<64xi8> {ember.arena}) attributes {ember.packed_buffers} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  %c32 = arith.constant 32 : index
  %b = memref.view %arena[%c0][] : memref<64xi8> to memref<32xi8>
  %inner = memref.view %b[%c16][] : memref<32xi8> to memref<4xf32>
  %after = memref.view %arena[%c32][] : memref<64xi8> to memref<4xf32>
  %across = memref.view %arena[%c20][] : memref<64xi8> to memref<4xf32>
  func.call @main_kernel0(%inner, %after) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @main_kernel1(%inner, %across) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @main_kernel0(%a: memref<4xf32>, %b: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func private @main_kernel1(%a: memref<4xf32>, %b: memref<4xf32>) attributes {ember.kernel} {
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%a: memref<4xf32> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @main_kernel1
// CHECK-SAME:    (%a: memref<4xf32>, %b: memref<4xf32>)

// -----

// A kernel's parallel bodies (called from the kernel, defined here before
// it): two kernel buffers that the memory plan put in the same bytes are
// not marked in the kernel, but a body that takes one of them with a
// buffer lying apart from it is marked; one that takes both is not. The
// body's arguments follow the kernel's pairs, whatever order the functions
// come in.
func.func @main(%x: memref<4xf32>, %out0: memref<4xf32>, %arena: memref<64xi8> {ember.arena}) attributes {ember.packed_buffers} {
  %c0 = arith.constant 0 : index
  %s = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  %t = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  func.call @main_kernel0(%x, %s, %t, %out0) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @main_kernel0_parallel0(%a: memref<4xf32>, %b: memref<4xf32>, %begin: index, %end: index) attributes {ember.kernel, ember.parallel_body} {
  func.return
}
func.func private @main_kernel0_parallel1(%a: memref<4xf32>, %b: memref<4xf32>, %begin: index, %end: index) attributes {ember.kernel, ember.parallel_body} {
  func.return
}
func.func private @main_kernel0(%x: memref<4xf32>, %s: memref<4xf32>, %t: memref<4xf32>, %out: memref<4xf32>) attributes {ember.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  func.call @main_kernel0_parallel0(%x, %s, %c0, %c4) {ember.parallel_threads = 2 : i64} : (memref<4xf32>, memref<4xf32>, index, index) -> ()
  func.call @main_kernel0_parallel0(%t, %out, %c0, %c4) {ember.parallel_threads = 2 : i64} : (memref<4xf32>, memref<4xf32>, index, index) -> ()
  func.call @main_kernel0_parallel1(%s, %t, %c0, %c4) {ember.parallel_threads = 2 : i64} : (memref<4xf32>, memref<4xf32>, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0_parallel0
// CHECK-SAME:    (%a: memref<4xf32> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias}, %begin: index, %end: index)
// CHECK-LABEL: func.func private @main_kernel0_parallel1
// CHECK-SAME:    (%a: memref<4xf32>, %b: memref<4xf32>, %begin: index, %end: index)
// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%x: memref<4xf32> {llvm.noalias}, %s: memref<4xf32>, %t: memref<4xf32>, %out: memref<4xf32> {llvm.noalias})

// -----

// A buffer the caller allocates (memref.alloca here; memref.alloc alike)
// is a root no other buffer reaches: apart
// from a buffer of any other root, even in a caller that promises nothing
// about its arguments; two views of it are apart where their bytes are.
func.func @helper(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %t = memref.alloca() : memref<4xf32>
  %s = memref.alloca() : memref<64xi8>
  %u = memref.view %s[%c0][] : memref<64xi8> to memref<4xf32>
  %v = memref.view %s[%c16][] : memref<64xi8> to memref<4xf32>
  func.call @main_kernel0(%x, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @main_kernel1(%x, %y, %t) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.call @main_kernel2(%u, %v, %s) : (memref<4xf32>, memref<4xf32>, memref<64xi8>) -> ()
  func.return
}
func.func private @main_kernel0(%a: memref<4xf32>, %b: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func private @main_kernel1(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) attributes {ember.kernel} {
  func.return
}
func.func private @main_kernel2(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<64xi8>) attributes {ember.kernel} {
  func.return
}

// CHECK-LABEL: func.func private @main_kernel0
// CHECK-SAME:    (%a: memref<4xf32> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @main_kernel1
// CHECK-SAME:    (%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @main_kernel2
// CHECK-SAME:    (%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<64xi8>)
