// RUN: ember-opt %s -p convert-loop-to-llvm --split-input-file --verify-diagnostics | filecheck %s

// `ember.packed_buffers`: the function takes one array of pointers to its
// inputs and outputs, which it loads where used, then its weights and arena
// arguments as plain pointers; the kernels it calls keep one pointer per
// buffer and get only the buffers they use (here a view of the arena).
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>, %weights: memref<0xi8> {ember.weights}, %arena: memref<64xi8> {ember.arena}) attributes {ember.packed_buffers} {
  %k0 = arith.constant 0 : index
  %t = memref.view %arena[%k0][] : memref<64xi8> to memref<4xf32>
  func.call @add(%a, %b, %t) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.call @add(%t, %b, %out) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
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
// CHECK-NEXT:   llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %t = llvm.getelementptr inbounds %arena[0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   %[[S0:.*]] = llvm.getelementptr inbounds %buffers[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %a = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[S1:.*]] = llvm.getelementptr inbounds %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %b = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   llvm.call @add(%a, %b, %t) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:   %[[S1B:.*]] = llvm.getelementptr inbounds %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %b_1 = llvm.load %[[S1B]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[S2:.*]] = llvm.getelementptr inbounds %buffers[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %out = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   llvm.call @add(%t, %b_1, %out) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:   llvm.return
// CHECK:      llvm.func @add(%x: !llvm.ptr, %y: !llvm.ptr, %z: !llvm.ptr) attributes {ember.kernel} {

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
