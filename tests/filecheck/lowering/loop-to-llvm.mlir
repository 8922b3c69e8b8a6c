// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// One pointer per static memref argument, the weights blob and the arena
// included. Views of those are byte offsets into them; loads and stores index
// with a linear i64 index; each scf.for is a header block (induction
// variable as block argument), a body with the increment and the back edge,
// and an exit block.
func.func @main(%a: memref<4x8xf32>, %flags: memref<8xi1>, %out: memref<4x8xf32>, %weights: memref<128xi8> {ember.weights}, %arena: memref<512xi8> {ember.arena}) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k2 = arith.constant 2 : index
  %k4 = arith.constant 4 : index
  %k8 = arith.constant 8 : index
  %k32 = arith.constant 32 : index
  %k64 = arith.constant 64 : index
  %k256 = arith.constant 256 : index
  %w = memref.view %weights[%k64][] : memref<128xi8> to memref<8xf32>
  %t = memref.view %arena[%k256][] : memref<512xi8> to memref<4x8xf32>
  scf.for %i = %k0 to %k4 step %k1 {
    scf.for %j = %k0 to %k8 step %k2 {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %y = memref.load %w[%j] : memref<8xf32>
      %f = memref.load %flags[%j] : memref<8xi1>
      %s = arith.addf %x, %y : f32
      %e = math.erf %s : f32
      %r = arith.select %f, %e, %s : f32
      memref.store %r, %t[%i, %j] : memref<4x8xf32>
    }
  }
  %v = memref.reinterpret_cast %t to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32>
  %o = memref.reinterpret_cast %out to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32>
  scf.for %k = %k0 to %k32 step %k1 {
    %m = memref.load %v[%k] : memref<32xf32>
    %big = arith.maximumf %m, %m : f32
    memref.store %big, %o[%k] : memref<32xf32>
  }
  func.return
}

// Functions without an LLVM intrinsic are libm calls, declared once.
// CHECK:      llvm.func @erff(f32) -> f32

// CHECK-LABEL: llvm.func @main(%a: !llvm.ptr, %flags: !llvm.ptr, %out: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) {
// CHECK-NEXT:    %[[C0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[C1:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[C2:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[C4:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[C8:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %[[C32:.*]] = llvm.mlir.constant(32) : i64
// CHECK-NEXT:    llvm.mlir.constant(64) : i64
// CHECK-NEXT:    llvm.mlir.constant(256) : i64
// CHECK-NEXT:    %w = llvm.getelementptr inbounds %weights[64] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:    %t = llvm.getelementptr inbounds %arena[256] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:    llvm.br ^[[I_HEAD:bb[0-9]+]](%[[C0]] : i64)

// The outer loop: header, then a body that starts the inner loop.
// CHECK-NEXT:  ^[[I_HEAD]](%i: i64):
// CHECK-NEXT:    %[[I_MORE:.*]] = llvm.icmp "slt" %i, %[[C4]] : i64
// CHECK-NEXT:    llvm.cond_br %[[I_MORE]], ^[[I_BODY:bb[0-9]+]], ^[[I_EXIT:bb[0-9]+]]
// CHECK-NEXT:  ^[[I_BODY]]:
// CHECK-NEXT:    llvm.br ^[[J_HEAD:bb[0-9]+]](%[[C0]] : i64)
// CHECK-NEXT:  ^[[J_HEAD]](%j: i64):
// CHECK-NEXT:    %[[J_MORE:.*]] = llvm.icmp "slt" %j, %[[C8]] : i64
// CHECK-NEXT:    llvm.cond_br %[[J_MORE]], ^[[J_BODY:bb[0-9]+]], ^[[J_EXIT:bb[0-9]+]]

// a[i, j] is a[i*8 + j]; a weight or an arena buffer is indexed the same way.
// CHECK-NEXT:  ^[[J_BODY]]:
// CHECK-NEXT:    %[[ROW:.*]] = llvm.mul %i, %[[C8]] : i64
// CHECK-NEXT:    %[[IDX:.*]] = llvm.add %[[ROW]], %j : i64
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %a[%[[IDX]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %x = llvm.load %[[PA]] : !llvm.ptr -> f32
// CHECK-NEXT:    %[[PW:.*]] = llvm.getelementptr inbounds %w[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %y = llvm.load %[[PW]] : !llvm.ptr -> f32

// An i1 element is a byte in memory.
// CHECK-NEXT:    %[[PF:.*]] = llvm.getelementptr inbounds %flags[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[BYTE:.*]] = llvm.load %[[PF]] : !llvm.ptr -> i8
// CHECK-NEXT:    %f = llvm.trunc %[[BYTE]] : i8 to i1
// CHECK-NEXT:    %s = llvm.fadd %x, %y : f32
// CHECK-NEXT:    %e = llvm.call @erff(%s) : (f32) -> f32
// CHECK-NEXT:    %r = llvm.select %f, %e, %s : i1, f32
// CHECK:         llvm.store %r, %{{.*}} : f32, !llvm.ptr

// The increments and back edges, then the exits.
// CHECK-NEXT:    %[[J_NEXT:.*]] = llvm.add %j, %[[C2]] : i64
// CHECK-NEXT:    llvm.br ^[[J_HEAD]](%[[J_NEXT]] : i64)
// CHECK-NEXT:  ^[[J_EXIT]]:
// CHECK-NEXT:    %[[I_NEXT:.*]] = llvm.add %i, %[[C1]] : i64
// CHECK-NEXT:    llvm.br ^[[I_HEAD]](%[[I_NEXT]] : i64)
// CHECK-NEXT:  ^[[I_EXIT]]:
// CHECK-NEXT:    llvm.br ^[[K_HEAD:bb[0-9]+]](%[[C0]] : i64)

// A reinterpret cast is the same pointer.
// CHECK:         %[[PV:.*]] = llvm.getelementptr inbounds %t[%k] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %m = llvm.load %[[PV]] : !llvm.ptr -> f32
// CHECK-NEXT:    %big = llvm.call_intrinsic "llvm.maximum.f32"(%m, %m) : (f32, f32) -> f32
// CHECK-NEXT:    %[[PO:.*]] = llvm.getelementptr inbounds %out[%k] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %big, %[[PO]] : f32, !llvm.ptr
// CHECK:         llvm.return
// CHECK-NEXT:  }
