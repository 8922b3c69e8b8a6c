// RUN: ember-opt %s -p convert-loop-to-llvm --split-input-file | filecheck %s
// RUN: ember-opt %s -p loop-expand-math,convert-loop-to-llvm --split-input-file | filecheck %s --check-prefix=EXPANDED

// A float op's fastmath flags travel to its LLVM instruction (a reassociable
// row sum, a contractible product); ops without flags get none. Without
// loop-expand-math, exp is the LLVM intrinsic; with it, no call remains.
func.func @flags(%x: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<4xf32>
  %s = arith.addf %a, %a fastmath<reassoc> : f32
  %m = arith.mulf %s, %a fastmath<contract> : f32
  %d = arith.subf %m, %a : f32
  %e = math.exp %d : f32
  memref.store %e, %out[%c0] : memref<4xf32>
  func.return
}

// CHECK-LABEL: llvm.func @flags
// CHECK:         %[[S:.*]] = llvm.fadd %[[A:.*]], %[[A]] {fastmathFlags = #llvm.fastmath<reassoc>} : f32
// CHECK-NEXT:    %[[M:.*]] = llvm.fmul %[[S]], %[[A]] {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT:    %[[D:.*]] = llvm.fsub %[[M]], %[[A]] : f32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.exp.f32"(%[[D]])

// EXPANDED-LABEL: llvm.func @flags
// EXPANDED-NOT:     "llvm.exp.f32"
// EXPANDED:         llvm.call_intrinsic "llvm.maximum.f32"
// EXPANDED:         llvm.fmul {{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// EXPANDED-NOT:     "llvm.exp.f32"
// EXPANDED:         llvm.return
