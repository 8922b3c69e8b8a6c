// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// A call marked by loop-parallelize becomes a launch: the body's arguments
// but the range go into a context of 8-byte slots (allocated once, in the
// entry block; a pointer as an integer, a memref's dynamic size after its
// pointer, a scalar in its own type), then the range's start;
// ember_parallel_for gets the task, the context, the range's length and
// the thread count. The task reads the slots back and calls the body on
// its sub-range, shifted by the start.
func.func @main(%a: memref<?x8xf32>, %s: f32, %n: index) {
  %c0 = arith.constant 0 : index
  func.call @main_parallel0(%a, %s, %c0, %n) {ember.parallel_threads = 3 : i64} : (memref<?x8xf32>, f32, index, index) -> ()
  func.call @plain(%a, %s) : (memref<?x8xf32>, f32) -> ()
  func.return
}
func.func private @main_parallel0(%a: memref<?x8xf32>, %s: f32, %begin: index, %end: index) attributes {ember.kernel, ember.parallel_body} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  scf.for %i = %begin to %end step %c1 {
    memref.store %s, %a[%i, %c0] : memref<?x8xf32>
  }
  func.return
}
func.func private @plain(%a: memref<?x8xf32>, %s: f32) attributes {ember.kernel} {
  func.return
}

// CHECK:      llvm.func @ember_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-NEXT: llvm.func @main(%a: !llvm.ptr, %a_size0: i64, %s: f32, %n: i64) {
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %[[SLOTS:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:   %[[THREADS:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:   %[[CTX:.*]] = llvm.alloca %[[SLOTS]] x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:   %[[A:.*]] = llvm.ptrtoint %a : !llvm.ptr to i64
// CHECK-NEXT:   %[[S0:.*]] = llvm.getelementptr inbounds %[[CTX]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   llvm.store %[[A]], %[[S0]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[S1:.*]] = llvm.getelementptr inbounds %[[CTX]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   llvm.store %a_size0, %[[S1]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[S2:.*]] = llvm.getelementptr inbounds %[[CTX]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[S2F:.*]] = llvm.getelementptr inbounds %[[S2]][0] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %s, %[[S2F]] : f32, !llvm.ptr
// CHECK-NEXT:   %[[S3:.*]] = llvm.getelementptr inbounds %[[CTX]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   llvm.store %c0, %[[S3]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[COUNT:.*]] = llvm.sub %n, %c0 : i64
// CHECK-NEXT:   %[[TASK:.*]] = llvm.mlir.addressof @main_parallel0_task : !llvm.ptr
// CHECK-NEXT:   llvm.call @ember_parallel_for(%[[TASK]], %[[CTX]], %[[COUNT]], %[[THREADS]]) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT:   llvm.call @plain(%a, %a_size0, %s) : (!llvm.ptr, i64, f32) -> ()
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @main_parallel0(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: f32, %begin: i64, %end: i64) attributes {ember.kernel} {
// CHECK:      llvm.func internal @main_parallel0_task(%ctx: !llvm.ptr, %from: i64, %to: i64) {
// CHECK-NEXT:   %[[T0:.*]] = llvm.getelementptr inbounds %ctx[0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[AI:.*]] = llvm.load %[[T0]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[AP:.*]] = llvm.inttoptr %[[AI]] : i64 to !llvm.ptr
// CHECK-NEXT:   %[[T1:.*]] = llvm.getelementptr inbounds %ctx[1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[SIZE:.*]] = llvm.load %[[T1]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[T2:.*]] = llvm.getelementptr inbounds %ctx[2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[T2F:.*]] = llvm.getelementptr inbounds %[[T2]][0] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:   %[[SV:.*]] = llvm.load %[[T2F]] : !llvm.ptr -> f32
// CHECK-NEXT:   %[[T3:.*]] = llvm.getelementptr inbounds %ctx[3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[START:.*]] = llvm.load %[[T3]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[B:.*]] = llvm.add %[[START]], %from : i64
// CHECK-NEXT:   %[[E:.*]] = llvm.add %[[START]], %to : i64
// CHECK-NEXT:   llvm.call @main_parallel0(%[[AP]], %[[SIZE]], %[[SV]], %[[B]], %[[E]]) : (!llvm.ptr, i64, f32, i64, i64) -> ()
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
