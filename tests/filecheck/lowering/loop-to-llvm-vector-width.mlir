// RUN: ember-opt %s -p convert-loop-to-llvm --split-input-file | filecheck %s

// A loop's schedule vector width (`loop.vector_width`, from loop-generate)
// stays on the back edge of its innermost loop, where the CPU target makes
// it `!llvm.loop` vectoriser metadata; the entry edge, the loop test and the
// outer loops' back edges carry nothing. An scf.parallel over two dims is
// two loops: only the inner one's back edge is marked.
func.func @marked(%a: memref<4x37xf32>, %b: memref<4x37xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c37 = arith.constant 37 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c37 step %c1 {
      %x = memref.load %a[%i, %j] : memref<4x37xf32>
      memref.store %x, %b[%i, %j] : memref<4x37xf32>
    } {loop.vector_width = 8 : i64}
  }
  "scf.parallel"(%c0, %c0, %c4, %c37, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%p: index, %q: index):
    %y = memref.load %b[%p, %q] : memref<4x37xf32>
    memref.store %y, %a[%p, %q] : memref<4x37xf32>
    scf.reduce
  }) {loop.vector_width = 16 : i64} : (index, index, index, index, index, index) -> ()
  func.return
}

// CHECK-LABEL: llvm.func @marked
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64){{$}}
// CHECK:         llvm.cond_br
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64){{$}}
// CHECK:         llvm.cond_br
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64) {loop.vector_width = 8 : i64}
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64){{$}}
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64){{$}}
// CHECK:         llvm.cond_br
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64){{$}}
// CHECK:         llvm.cond_br
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64) {loop.vector_width = 16 : i64}
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64){{$}}
// CHECK-NOT:     loop.vector_width

// -----

// Must not fire: a loop without a width has no attribute on any branch.
func.func @unmarked(%a: memref<37xf32>, %b: memref<37xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c37 = arith.constant 37 : index
  scf.for %i = %c0 to %c37 step %c1 {
    %x = memref.load %a[%i] : memref<37xf32>
    memref.store %x, %b[%i] : memref<37xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @unmarked
// CHECK-NOT:     loop.vector_width
// CHECK-NOT:     loop.no_unroll

// -----

// A loop's `loop.no_unroll` (loop-generate puts it on a micro-kernel's
// reduction loop) stays on its back edge too, a loop with iter_args
// included; the entry edge and the loop test carry nothing.
func.func @not_unrolled(%a: memref<37xf32>, %b: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c37 = arith.constant 37 : index
  %zero = arith.constant 0.000000e+00 : f32
  %s = scf.for %i = %c0 to %c37 step %c1 iter_args(%partial = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<37xf32>
    %y = arith.addf %partial, %x : f32
    scf.yield %y : f32
  } {loop.no_unroll}
  memref.store %s, %b[%c0] : memref<1xf32>
  scf.for %j = %c0 to %c37 step %c1 {
    memref.store %zero, %a[%j] : memref<37xf32>
  } {loop.no_unroll, loop.vector_width = 8 : i64}
  func.return
}

// CHECK-LABEL: llvm.func @not_unrolled
// CHECK:         llvm.br ^{{.*}}(%{{.*}}, %{{.*}} : i64, f32){{$}}
// CHECK:         llvm.cond_br
// CHECK:         llvm.br ^{{.*}}(%{{.*}}, %{{.*}} : i64, f32) {loop.no_unroll}
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64){{$}}
// CHECK:         llvm.cond_br
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64) {loop.vector_width = 8 : i64, loop.no_unroll}
