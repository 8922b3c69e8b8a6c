// RUN: ember-opt %s -p loop-instrument-kernels --split-input-file | filecheck %s
// RUN: ember-opt %s -p 'loop-instrument-kernels{trace=true}' --split-input-file | filecheck %s --check-prefix=TRACE

// Each kernel call is bracketed by two loop.timestamp readings; the calls
// and cycles go to one counter row per kernel function (in the order of
// their first call), so the two calls of @k_add share row 0. The counters
// lie at the end of the arena, which grows from 64 bytes to 64 + 2*16.
// The function records where they are and each kernel's static cost: @k_add
// adds 4 floats (4 flops, two 16-byte buffers); @k_mm is a 2x3x4 matmul,
// 2*2*3*4 = 48 flops. Each row names the model's nodes its calls run, from
// the kernel function's `ember.source_names` (its first call site's, and
// how many more share it); @k_mm has none.
func.func @main(%a: memref<4xf32>, %b: memref<2x4xf32>, %c: memref<4x3xf32>, %out: memref<2x3xf32>, %arena: memref<64xi8> {ember.arena}) attributes {loop.arena_bytes = 64 : i64} {
  %o = arith.constant 0 : index
  %t = memref.view %arena[%o][] : memref<64xi8> to memref<4xf32>
  func.call @k_add(%a, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @k_mm(%b, %c, %out) : (memref<2x4xf32>, memref<4x3xf32>, memref<2x3xf32>) -> ()
  func.call @k_add(%t, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @k_add(%x: memref<4xf32>, %y: memref<4xf32>) attributes {ember.kernel, ember.source_names = [["conv1", "relu1"], ["conv2"]]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %y[%i] : memref<4xf32>
  }
  func.return
}
func.func private @k_mm(%x: memref<2x4xf32>, %y: memref<4x3xf32>, %z: memref<2x3xf32>) attributes {ember.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      memref.store %zero, %z[%i, %j] : memref<2x3xf32>
      scf.for %k = %c0 to %c4 step %c1 {
        %p = memref.load %x[%i, %k] : memref<2x4xf32>
        %q = memref.load %y[%k, %j] : memref<4x3xf32>
        %acc = memref.load %z[%i, %j] : memref<2x3xf32>
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        memref.store %s, %z[%i, %j] : memref<2x3xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %arena: memref<96xi8> {ember.arena})
// CHECK-SAME:    loop.arena_bytes = 96 : i64
// CHECK-SAME:    ember.profile_offset = 64 : i64
// CHECK-SAME:    ember.profile = [{name = "k_add", label = "addf, 1 loops -> 4", flops = 4 : i64, bytes = 32 : i64, source = "conv1 + relu1 and 1 more"}, {name = "k_mm", label = "matmul, 3 loops -> 2x3", flops = 48 : i64, bytes = 104 : i64, source = ""}]
// CHECK:         %[[OFFSET:.*]] = arith.constant 64 : index
// CHECK:         %[[COUNTERS:.*]] = memref.view %arena[%[[OFFSET]]][] : memref<96xi8> to memref<2x2xi64>
// CHECK:         %[[T0:.*]] = loop.timestamp : i64
// CHECK-NEXT:    func.call @k_add(
// CHECK-NEXT:    %[[T1:.*]] = loop.timestamp : i64
// CHECK-NEXT:    %[[CYCLES:.*]] = arith.subi %[[T1]], %[[T0]] : i64
// CHECK-NEXT:    %[[CALLS:.*]] = memref.load %[[COUNTERS]][%[[ROW0:.*]], %[[COL0:.*]]] : memref<2x2xi64>
// CHECK-NEXT:    %[[CALLS1:.*]] = arith.addi %[[CALLS]], %{{.*}} : i64
// CHECK-NEXT:    memref.store %[[CALLS1]], %[[COUNTERS]][%[[ROW0]], %[[COL0]]] : memref<2x2xi64>
// CHECK-NEXT:    %[[TICKS:.*]] = memref.load %[[COUNTERS]][%[[ROW0]], %[[COL1:.*]]] : memref<2x2xi64>
// CHECK-NEXT:    %[[TICKS1:.*]] = arith.addi %[[TICKS]], %[[CYCLES]] : i64
// CHECK-NEXT:    memref.store %[[TICKS1]], %[[COUNTERS]][%[[ROW0]], %[[COL1]]] : memref<2x2xi64>
// CHECK-NEXT:    loop.timestamp
// CHECK-NEXT:    func.call @k_mm(
// CHECK-NEXT:    loop.timestamp
// CHECK-NEXT:    arith.subi
// CHECK-NEXT:    memref.load %[[COUNTERS]][%[[ROW1:.*]], %[[COL0]]]
// CHECK:         loop.timestamp
// CHECK-NEXT:    func.call @k_add(
// CHECK-NEXT:    loop.timestamp
// CHECK-NEXT:    arith.subi
// CHECK-NEXT:    memref.load %[[COUNTERS]][%[[ROW0]], %[[COL0]]]
// CHECK:         func.return
// CHECK:       func.func private @k_add(

// With trace=true each call is also appended to the run-time trace: a
// loop.trace of its two readings and its row in ember.profile, after the
// counters are updated. Without it there is none.
// CHECK-NOT:     loop.trace
// TRACE-LABEL: func.func @main(
// TRACE:         %[[T0:.*]] = loop.timestamp : i64
// TRACE-NEXT:    func.call @k_add(
// TRACE-NEXT:    %[[T1:.*]] = loop.timestamp : i64
// TRACE:         memref.store
// TRACE:         memref.store
// TRACE-NEXT:    loop.trace 0, %[[T0]], %[[T1]]
// TRACE-NEXT:    %[[T2:.*]] = loop.timestamp : i64
// TRACE-NEXT:    func.call @k_mm(
// TRACE-NEXT:    %[[T3:.*]] = loop.timestamp : i64
// TRACE:         loop.trace 1, %[[T2]], %[[T3]]
// TRACE:         func.call @k_add(
// TRACE:         loop.trace 0,
// CHECK-NOT:     loop.timestamp
// CHECK:       func.func private @k_mm(
// CHECK-NOT:     loop.timestamp
// CHECK:         func.return

// -----

// Without an arena (no intermediates), the pass adds one for the counters.
// A kernel with a bound that is not a constant has unknown flops (-1).
func.func @main(%a: memref<?xf32>, %n: index) {
  func.call @k(%a, %n) : (memref<?xf32>, index) -> ()
  func.return
}
func.func private @k(%x: memref<?xf32>, %n: index) attributes {ember.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %s = arith.mulf %v, %v : f32
    memref.store %s, %x[%i] : memref<?xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @main(%a: memref<?xf32>, %n: index, %arena: memref<16xi8> {ember.arena})
// CHECK-SAME:    loop.arena_bytes = 16 : i64
// CHECK-SAME:    ember.profile_offset = 0 : i64
// CHECK-SAME:    ember.profile = [{name = "k", label = "mulf, 1 loops -> ?", flops = -1 : i64, bytes = 0 : i64, source = ""}]
// CHECK:         loop.timestamp
// CHECK-NEXT:    func.call @k(

// -----

// An arena whose size is a formula over the symbols (a generic version's)
// has no end known at compile time: the counters go first, every view of
// the arena moves up by their (aligned) bytes, and the formula grows by as
// much.
func.func @main(%a: memref<?xf32>, %n: index, %arena: memref<?xi8> {ember.arena}) attributes {loop.arena_bytes = "4 * N"} {
  %c0 = arith.constant 0 : index
  %t = memref.view %arena[%c0][%n] : memref<?xi8> to memref<?xf32>
  func.call @k(%t, %n) : (memref<?xf32>, index) -> ()
  func.return
}
func.func private @k(%x: memref<?xf32>, %n: index) attributes {ember.kernel} {
  func.return
}

// CHECK-LABEL: func.func @main(%a: memref<?xf32>, %n: index, %arena: memref<?xi8> {ember.arena})
// CHECK-SAME:    loop.arena_bytes = "4 * N + 64"
// CHECK-SAME:    ember.profile_offset = 0 : i64
// CHECK:         memref.view %arena[%{{.*}}][] : memref<?xi8> to memref<1x2xi64>
// CHECK:         %c0 = arith.constant 0 : index
// CHECK-NEXT:    %[[SHIFT:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[MOVED:.*]] = arith.addi %c0, %[[SHIFT]] : index
// CHECK-NEXT:    memref.view %arena[%[[MOVED]]][%n] : memref<?xi8> to memref<?xf32>

// -----

// Must not fire: a function that calls no kernel (here a plain function
// call) is left as it is, arena included.
func.func @main(%a: memref<4xf32>, %arena: memref<64xi8> {ember.arena}) {
  func.call @helper(%a) : (memref<4xf32>) -> ()
  func.return
}
func.func private @helper(%x: memref<4xf32>) {
  func.return
}

// CHECK-LABEL: func.func @main(%a: memref<4xf32>, %arena: memref<64xi8> {ember.arena}) {
// CHECK-NEXT:    func.call @helper(%a) : (memref<4xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NOT:   loop.timestamp
// CHECK-NOT:   ember.profile

// -----

// Vector ops count once per lane and an FMA twice: 4 iterations of a
// vector<8xf32> fma are 4*8*2 = 64 flops; the loads and the broadcast move
// lanes and count nothing.
func.func @main(%a: memref<32xf32>, %b: memref<32xf32>) {
  func.call @k(%a, %b) : (memref<32xf32>, memref<32xf32>) -> ()
  func.return
}
func.func private @k(%x: memref<32xf32>, %y: memref<32xf32>) attributes {ember.kernel} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %two = arith.constant 2.0 : f32
  %s = vector.broadcast %two : f32 to vector<8xf32>
  scf.for %i = %c0 to %c32 step %c8 {
    %v = vector.load %x[%i] : memref<32xf32>, vector<8xf32>
    %r = vector.fma %v, %s, %v : vector<8xf32>
    vector.store %r, %y[%i] : memref<32xf32>, vector<8xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    ember.profile = [{name = "k", label = "matmul, 1 loops -> 32", flops = 64 : i64, bytes = 256 : i64, source = ""}]
