// RUN: not ember-opt %s -p loop-instrument-kernels 2>&1 | filecheck %s

// The counters go at the end of the arena, which the pass grows; an arena
// passed whole to a call (not only viewed) cannot change its type, so the
// pass says so in one line instead of producing a call of the wrong type.
func.func @main(%a: memref<4xf32>, %arena: memref<64xi8> {ember.arena}) {
  func.call @k(%a, %arena) : (memref<4xf32>, memref<64xi8>) -> ()
  func.return
}
func.func private @k(%x: memref<4xf32>, %scratch: memref<64xi8>) attributes {ember.kernel} {
  func.return
}

// CHECK: error: loop-instrument-kernels: @main: the arena is used by func.call, not only by memref.view; cannot grow it for the counters
// CHECK-NOT: Traceback
