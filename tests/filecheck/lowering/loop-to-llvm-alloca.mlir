// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// A loop's scratch (`memref.alloca`, as buffer contraction places it in a
// loop body) is one `llvm.alloca` of its elements in the entry block, with
// its alignment, so the loop around it does not grow the stack; loads and
// stores address it like any buffer.
func.func @scratch(%a: memref<4x16xf32>, %b: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloca() {alignment = 64 : i64} : memref<2x16xf32>
    %x = vector.load %a[%i, %c0] : memref<4x16xf32>, vector<16xf32>
    vector.store %x, %t[%c1, %c0] : memref<2x16xf32>, vector<16xf32>
    %y = vector.load %t[%c1, %c0] : memref<2x16xf32>, vector<16xf32>
    vector.store %y, %b[%i, %c0] : memref<4x16xf32>, vector<16xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @scratch
// CHECK:         %[[N:.*]] = llvm.mlir.constant(32) : i64
// CHECK:         %[[T:.*]] = llvm.alloca %[[N]] x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[P:t]] = llvm.bitcast %[[T]] : !llvm.ptr to !llvm.ptr
// CHECK-NEXT:    llvm.br
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[A:.*]] = llvm.getelementptr inbounds %[[P]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %{{.*}}, %[[A]] {{.*}}: vector<16xf32>, !llvm.ptr
// CHECK-NOT:     llvm.alloca
