// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// Dynamic dims: a memref<?x?xf32> argument is its data pointer followed by
// one i64 per `?` (rows, then columns); memref.dim reads them, loop bounds
// are those SSA sizes, and the row stride of a[i, j] is the column count.
// A strided subview (row %r from column %c0 on) composes its offset and
// strides with the source's: rowsum[i] = sum over j of a[i, j], plus
// 2 * a[i, j] into out. tests/lowering/test_loop_to_llvm.py runs this file.
func.func @scale_and_sum(%a: memref<?x?xf32>, %out: memref<?x?xf32>, %rowsum: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32>
  %cols = memref.dim %a, %c1 : memref<?x?xf32>
  %two = arith.constant 2.000000e+00 : f32
  %zero = arith.constant 0.000000e+00 : f32
  scf.for %i = %c0 to %rows step %c1 {
    %row = memref.subview %a[%i, 0] [1, %cols] [1, 1] : memref<?x?xf32> to memref<1x?xf32, strided<[?, 1], offset: ?>>
    memref.store %zero, %rowsum[%i] : memref<?xf32>
    scf.for %j = %c0 to %cols step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %out[%i, %j] : memref<?x?xf32>
      %v = memref.load %row[%c0, %j] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %acc = memref.load %rowsum[%i] : memref<?xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %rowsum[%i] : memref<?xf32>
    }
  }
  func.return
}

// CHECK-LABEL: llvm.func @scale_and_sum(%a: !llvm.ptr, %a_size0: i64, %a_size1: i64, %out: !llvm.ptr, %out_size0: i64, %out_size1: i64, %rowsum: !llvm.ptr, %rowsum_size0: i64) {
// CHECK:         llvm.br ^[[I_HEAD:bb[0-9]+]](%[[C0:.*]] : i64)
// CHECK-NEXT:  ^[[I_HEAD]](%i: i64):
// CHECK-NEXT:    %{{.*}} = llvm.icmp "slt" %i, %a_size0 : i64

// The subview's offset is i * (the source's row stride, a_size1).
// CHECK:         %[[ROW_OFFSET:.*]] = llvm.mul %i, %a_size1 : i64
// CHECK:         ^[[J_HEAD:bb[0-9]+]](%j: i64):
// CHECK-NEXT:    %{{.*}} = llvm.icmp "slt" %j, %a_size1 : i64

// a[i, j] is a[i * a_size1 + j]; out[i, j] uses out's own column count.
// CHECK:         %[[AI:.*]] = llvm.mul %i, %a_size1 : i64
// CHECK-NEXT:    %[[AIJ:.*]] = llvm.add %[[AI]], %j : i64
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %a[%[[AIJ]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %x = llvm.load %[[PA]] : !llvm.ptr -> f32
// CHECK-NEXT:    %y = llvm.fmul %x, %{{.*}} : f32
// CHECK-NEXT:    %[[OI:.*]] = llvm.mul %i, %out_size1 : i64
// CHECK-NEXT:    %[[OIJ:.*]] = llvm.add %[[OI]], %j : i64
// CHECK-NEXT:    %[[PO:.*]] = llvm.getelementptr inbounds %out[%[[OIJ]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %y, %[[PO]] : f32, !llvm.ptr

// row[0, j] is a[row offset + 0 * a_size1 + j].
// CHECK:         %[[RJ:.*]] = llvm.add %[[ROW_OFFSET]], %{{.*}} : i64
// CHECK:         llvm.getelementptr inbounds %a[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
