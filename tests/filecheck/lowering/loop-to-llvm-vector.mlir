// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// Vector code and loop-carried values, as a contraction's micro-kernel has
// them: c[i, 0:8] += sum over k of a[i, k] * b[k, 0:8], the accumulator
// carried through the k loop in a register (iter_args), a[i, k] broadcast,
// b's row loaded as one vector; and a scalar sum carried the same way.
// tests/lowering/test_loop_to_llvm.py runs this file.
func.func @row_times_panel(%a: memref<2x5xf32>, %b: memref<5x8xf32>, %c: memref<2x8xf32>, %total: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.000000e+00 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    %init = vector.load %c[%i, %c0] : memref<2x8xf32>, vector<8xf32>
    %acc = scf.for %k = %c0 to %c5 step %c1 iter_args(%sum = %init) -> (vector<8xf32>) {
      %x = memref.load %a[%i, %k] : memref<2x5xf32>
      %xs = vector.broadcast %x : f32 to vector<8xf32>
      %row = vector.load %b[%k, %c0] : memref<5x8xf32>, vector<8xf32>
      %next = vector.fma %xs, %row, %sum : vector<8xf32>
      scf.yield %next : vector<8xf32>
    }
    vector.store %acc, %c[%i, %c0] : memref<2x8xf32>, vector<8xf32>
  }
  %s = scf.for %k = %c0 to %c5 step %c1 iter_args(%partial = %zero) -> (f32) {
    %x = memref.load %a[%c0, %k] : memref<2x5xf32>
    %y = arith.addf %partial, %x : f32
    scf.yield %y : f32
  }
  memref.store %s, %total[%c0] : memref<1xf32>
  func.return
}

// CHECK-LABEL: llvm.func @row_times_panel
// CHECK:         %[[INIT:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    llvm.br ^[[HEADER:.*]](%{{.*}}, %[[INIT]] : i64, vector<8xf32>)
// CHECK:       ^[[HEADER]](%[[K:.*]]: i64, %[[SUM:.*]]: vector<8xf32>):
// CHECK:         llvm.cond_br %{{.*}}, ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK:       ^[[BODY]]:
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         %[[LANE0:.*]] = llvm.insertelement %[[X]], %[[UNDEF:.*]][%{{.*}} : i32] : vector<8xf32>
// CHECK-NEXT:    %[[SPLAT:.*]] = llvm.shufflevector %[[LANE0]], %[[UNDEF]] [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xf32>
// CHECK:         %[[ROW:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.intr.fma(%[[SPLAT]], %[[ROW]], %[[SUM]]) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    %[[STEP:.*]] = llvm.add %[[K]], %{{.*}} : i64
// CHECK-NEXT:    llvm.br ^[[HEADER]](%[[STEP]], %[[NEXT]] : i64, vector<8xf32>)
// CHECK:       ^[[EXIT]]:
// CHECK:         llvm.store %[[SUM]], %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK:       ^{{.*}}(%{{.*}}: i64, %[[PARTIAL:.*]]: f32):
// CHECK:         llvm.fadd %[[PARTIAL]], %{{.*}} : f32
