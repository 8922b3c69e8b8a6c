// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// maxnumf and minnumf on scalars (ReduceMax's and MaxPool's NaN-skipping
// step) become a compare and a select: b wins where it is greater (less)
// or where a is NaN, so a NaN operand loses and two NaNs give NaN. Not the
// llvm.maxnum intrinsic, whose reductions LLVM 22 vectorises wrongly for
// AVX-512. On vectors (a micro-kernel's epilogue) the intrinsic stays.
func.func @skip_nan(%in: memref<2xf32>, %out: memref<2xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %a = memref.load %in[%k0] : memref<2xf32>
  %b = memref.load %in[%k1] : memref<2xf32>
  %max = arith.maxnumf %a, %b : f32
  %min = arith.minnumf %a, %b : f32
  memref.store %max, %out[%k0] : memref<2xf32>
  memref.store %min, %out[%k1] : memref<2xf32>
  func.return
}

// CHECK-LABEL: llvm.func @skip_nan(
// CHECK:         %[[A:.*]] = llvm.load
// CHECK:         %[[B:.*]] = llvm.load
// CHECK-NEXT:    %[[GT:.*]] = llvm.fcmp "ogt" %[[B]], %[[A]] : f32
// CHECK-NEXT:    %[[ANAN:.*]] = llvm.fcmp "uno" %[[A]], %[[A]] : f32
// CHECK-NEXT:    %[[TAKE:.*]] = llvm.or %[[GT]], %[[ANAN]] : i1
// CHECK-NEXT:    %[[MAX:.*]] = llvm.select %[[TAKE]], %[[B]], %[[A]] : i1, f32
// CHECK-NEXT:    %[[LT:.*]] = llvm.fcmp "olt" %[[B]], %[[A]] : f32
// CHECK-NEXT:    %[[ANAN2:.*]] = llvm.fcmp "uno" %[[A]], %[[A]] : f32
// CHECK-NEXT:    %[[TAKE2:.*]] = llvm.or %[[LT]], %[[ANAN2]] : i1
// CHECK-NEXT:    %[[MIN:.*]] = llvm.select %[[TAKE2]], %[[B]], %[[A]] : i1, f32
// CHECK-NOT:     llvm.intr.maxnum
// CHECK-NOT:     "llvm.maxnum
