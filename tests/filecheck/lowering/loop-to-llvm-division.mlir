// RUN: ember-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s

// Integer division never traps (docs/semantics.md): sdiv/udiv/srem/urem
// divide by a safe divisor, 1 where the divisor is 0 or where INT_MIN is
// divided by -1; a quotient by 0 is then selected to 0. So x / 0 = 0,
// x % 0 = 0, INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0.
func.func @divide(%a: memref<4xi32>, %b: memref<4xi32>, %q: memref<4xi32>, %r: memref<4xi32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  scf.for %i = %k0 to %k4 step %k1 {
    %x = memref.load %a[%i] : memref<4xi32>
    %y = memref.load %b[%i] : memref<4xi32>
    %d = arith.divsi %x, %y : i32
    memref.store %d, %q[%i] : memref<4xi32>
    %m = arith.remsi %x, %y : i32
    memref.store %m, %r[%i] : memref<4xi32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @divide(
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG:     %[[MIN:.*]] = llvm.mlir.constant(-2147483648 : i32) : i32
// CHECK-DAG:     %[[MINUS1:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK:         %x = llvm.load
// CHECK:         %y = llvm.load
// CHECK-NEXT:    %[[BY_ZERO:.*]] = llvm.icmp "eq" %y, %[[ZERO]] : i32
// CHECK-NEXT:    %[[IS_MIN:.*]] = llvm.icmp "eq" %x, %[[MIN]] : i32
// CHECK-NEXT:    %[[IS_M1:.*]] = llvm.icmp "eq" %y, %[[MINUS1]] : i32
// CHECK-NEXT:    %[[OVERFLOW:.*]] = llvm.and %[[IS_MIN]], %[[IS_M1]] : i1
// CHECK-NEXT:    %[[UNSAFE:.*]] = llvm.or %[[BY_ZERO]], %[[OVERFLOW]] : i1
// CHECK-NEXT:    %[[SAFE:.*]] = llvm.select %[[UNSAFE]], %[[ONE]], %y : i1, i32
// CHECK-NEXT:    %[[QUOTIENT:.*]] = llvm.sdiv %x, %[[SAFE]] : i32
// CHECK-NEXT:    %d = llvm.select %[[BY_ZERO]], %[[ZERO]], %[[QUOTIENT]] : i1, i32
// CHECK:         llvm.store %d
// The remainder by the safe divisor 1 is already 0: no select after srem.
// CHECK:         %[[SAFE2:.*]] = llvm.select %{{.*}}, %[[ONE]], %y : i1, i32
// CHECK-NEXT:    %m = llvm.srem %x, %[[SAFE2]] : i32
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.store %m

// -----

// Unsigned: only the zero divisor is unsafe.
func.func @divide_unsigned(%a: memref<4xi8>, %b: memref<4xi8>, %q: memref<4xi8>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  scf.for %i = %k0 to %k4 step %k1 {
    %x = memref.load %a[%i] : memref<4xi8>
    %y = memref.load %b[%i] : memref<4xi8>
    %d = arith.divui %x, %y : i8
    memref.store %d, %q[%i] : memref<4xi8>
  }
  func.return
}

// CHECK-LABEL: llvm.func @divide_unsigned(
// CHECK:         %y = llvm.load
// CHECK-NEXT:    %[[UZERO:.*]] = llvm.icmp "eq" %y, %{{.*}} : i8
// CHECK-NEXT:    %[[USAFE:.*]] = llvm.select %[[UZERO]], %{{.*}}, %y : i1, i8
// CHECK-NEXT:    %[[UQ:.*]] = llvm.udiv %x, %[[USAFE]] : i8
// CHECK-NEXT:    %d = llvm.select %[[UZERO]], %{{.*}}, %[[UQ]] : i1, i8
// CHECK-NOT:     llvm.udiv
