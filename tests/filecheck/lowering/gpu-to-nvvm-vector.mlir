// RUN: ember-opt %s -p convert-gpu-to-nvvm | filecheck %s

// A tiled contraction's staging loads: vector.load of 4 f32 from global
// memory and vector.store into shared memory are LLVM vector accesses
// aligned to the whole 16 bytes (ld.global.v4, st.shared.v4 in PTX), and
// the zeros past an edge a broadcast. (The CPU's vector accesses stay
// aligned to the element: loop-to-llvm-vector.mlir.) Loads of 2 promise 8.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<64x64xf32>, memref<64x64xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<64x64xf32>, %b: memref<64x64xf32>):
      %tile = ember_gpu.shared : memref<2x16x64xf32, 3 : i64>
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      %zeros = vector.broadcast %zero : f32 to vector<4xf32>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %col = arith.muli %tx, %c4 : index
      %inside = arith.cmpi ult, %col, %c4 : index
      %v = scf.if %inside -> (vector<4xf32>) {
        %l = vector.load %a[%c0, %col] : memref<64x64xf32>, vector<4xf32>
        scf.yield %l : vector<4xf32>
      } else {
        scf.yield %zeros : vector<4xf32>
      }
      vector.store %v, %tile[%c0, %c0, %col] : memref<2x16x64xf32, 3 : i64>, vector<4xf32>
      %pair = vector.load %b[%c0, %col] : memref<64x64xf32>, vector<2xf32>
      vector.store %pair, %b[%c4, %col] : memref<64x64xf32>, vector<2xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "stage"} : () -> ()
  }) : () -> ()
}

// CHECK:       llvm.func @stage(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>) attributes {nvvm.kernel}
// CHECK:         %[[UNDEF:.*]] = llvm.mlir.undef : vector<4xf32>
// CHECK:         llvm.shufflevector
// CHECK:         llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK:         llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
