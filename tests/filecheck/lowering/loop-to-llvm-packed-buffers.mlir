// RUN: ember-opt %s -p convert-loop-to-llvm --split-input-file --verify-diagnostics | filecheck %s

// `ember.packed_buffers`: the function takes one array of buffer pointers
// (then the weights and the arena) and loads its memref arguments from it in
// order; the kernels it calls keep one pointer per buffer.
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) attributes {ember.packed_buffers} {
  func.call @add(%a, %b, %out) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @add(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) attributes {ember.kernel} {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  scf.for %i = %k0 to %k4 step %k1 {
    %u = memref.load %x[%i] : memref<4xf32>
    %v = memref.load %y[%i] : memref<4xf32>
    %s = arith.addf %u, %v : f32
    memref.store %s, %z[%i] : memref<4xf32>
  }
  func.return
}

// CHECK:      llvm.func @main(%buffers: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) attributes {ember.packed_buffers} {
// CHECK-NEXT:   %[[S0:.*]] = llvm.getelementptr inbounds %buffers[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %a = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[S1:.*]] = llvm.getelementptr inbounds %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %b = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[S2:.*]] = llvm.getelementptr inbounds %buffers[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %out = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   llvm.call @add(%a, %b, %out, %weights, %arena) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:   llvm.return
// CHECK:      llvm.func @add(%x: !llvm.ptr, %y: !llvm.ptr, %z: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {ember.kernel} {

// -----

// A function without buffers still takes the (empty) array.
func.func @nothing() attributes {ember.packed_buffers} {
  func.return
}

// CHECK:      llvm.func @nothing(%buffers: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) attributes {ember.packed_buffers} {
// CHECK-NEXT:   llvm.return

// -----

// Must not lower: a call passes buffers one by one, which a packed function
// does not take.
func.func @packed(%a: memref<4xf32>) attributes {ember.packed_buffers} {
  func.return
}
func.func @caller(%a: memref<4xf32>) {
  func.call @packed(%a) : (memref<4xf32>) -> ()
  func.return
}

// CHECK: {{^}}convert-loop-to-llvm: @packed takes its buffers packed (ember.packed_buffers), so loop-level code cannot call it{{$}}
