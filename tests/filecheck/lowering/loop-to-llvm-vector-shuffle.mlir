// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// vector.shuffle, as a micro-kernel's stride-2 read emits it: the even
// elements of x[0:15] from two overlapping loads (x[0:8] and x[7:15]), one
// shufflevector with the same mask. tests/lowering/test_loop_to_llvm.py runs
// this file.
func.func @even_lanes(%x: memref<15xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %low = vector.load %x[%c0] : memref<15xf32>, vector<8xf32>
  %high = vector.load %x[%c7] : memref<15xf32>, vector<8xf32>
  %even = vector.shuffle %low, %high [0, 2, 4, 6, 9, 11, 13, 15] : vector<8xf32>, vector<8xf32>
  vector.store %even, %y[%c0] : memref<8xf32>, vector<8xf32>
  func.return
}

// CHECK-LABEL: llvm.func @even_lanes
// CHECK:         %[[LOW:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK:         %[[HIGH:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    %[[EVEN:.*]] = llvm.shufflevector %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 9, 11, 13, 15] : vector<8xf32>
// CHECK:         llvm.store %[[EVEN]], %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
