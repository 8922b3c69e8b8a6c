// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// loop.timestamp reads the CPU's cycle counter: llvm.readcyclecounter, an
// intrinsic with side effects, so it stays between the calls it brackets.
func.func @main(%out: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %t0 = loop.timestamp : i64
  %t1 = loop.timestamp : i64
  %d = arith.subi %t1, %t0 : i64
  memref.store %d, %out[%c0] : memref<1xi64>
  func.return
}

// CHECK-LABEL: llvm.func @main(
// CHECK:         %[[T0:.*]] = llvm.call_intrinsic "llvm.readcyclecounter"() : () -> i64
// CHECK-NEXT:    %[[T1:.*]] = llvm.call_intrinsic "llvm.readcyclecounter"() : () -> i64
// CHECK-NEXT:    llvm.sub %[[T1]], %[[T0]]
