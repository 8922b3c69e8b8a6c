// RUN: ember-opt %s -p convert-loop-to-llvm --split-input-file | filecheck %s

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

// -----

// loop.trace appends a traced call to the runtime's trace: a call of
// ember_trace_record(kernel, begin, end), declared once.
func.func @traced(%out: memref<1xi64>) {
  %t0 = loop.timestamp : i64
  %t1 = loop.timestamp : i64
  loop.trace 3, %t0, %t1
  loop.trace 4, %t0, %t1
  func.return
}

// CHECK:       llvm.func @ember_trace_record(i64, i64, i64)
// CHECK-NOT:   llvm.func @ember_trace_record
// CHECK-LABEL: llvm.func @traced(
// CHECK:         %[[T0:.*]] = llvm.call_intrinsic "llvm.readcyclecounter"() : () -> i64
// CHECK-NEXT:    %[[T1:.*]] = llvm.call_intrinsic "llvm.readcyclecounter"() : () -> i64
// CHECK-NEXT:    %[[K:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    llvm.call @ember_trace_record(%[[K]], %[[T0]], %[[T1]]) : (i64, i64, i64) -> ()
// CHECK-NEXT:    llvm.mlir.constant(4) : i64
// CHECK-NEXT:    llvm.call @ember_trace_record(
