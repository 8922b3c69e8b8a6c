// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// convert-loop-to-llvm on the narrow types (docs/types.md): a bf16 is an
// i16 in LLVM and in memory, its bitcast from the i16 of a conversion no
// instruction; an i4 (like an f4E2M1FN or an i1) takes a byte in memory,
// loaded and truncated, stored zero-extended.

func.func @copy(%a: memref<4xbf16>, %b: memref<4xi4>, %c: memref<4xbf16>, %d: memref<4xi4>) {
  %i = arith.constant 1 : index
  %x = memref.load %a[%i] : memref<4xbf16>
  %bits = arith.bitcast %x : bf16 to i16
  %y = arith.bitcast %bits : i16 to bf16
  memref.store %y, %c[%i] : memref<4xbf16>
  %n = memref.load %b[%i] : memref<4xi4>
  memref.store %n, %d[%i] : memref<4xi4>
  func.return
}

// CHECK-LABEL: llvm.func @copy(
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK-NOT:     llvm.bitcast
// CHECK:         llvm.store %[[X]], %{{.*}} : i16, !llvm.ptr
// CHECK:         %[[BYTE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK-NEXT:    %[[N:.*]] = llvm.trunc %[[BYTE]] : i8 to i4
// CHECK:         %[[WIDE:.*]] = llvm.zext %[[N]] : i4 to i8
// CHECK:         llvm.store %[[WIDE]], %{{.*}} : i8, !llvm.ptr
