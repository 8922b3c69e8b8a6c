// RUN: ember-opt %s | ember-opt | filecheck %s

// A 16x16-tiled matrix product C = A B (M=N=K=32): each block stages a tile
// of A and of B in shared memory, the threads synchronise, and each thread
// accumulates one element of C.

// CHECK:      %{{.*}} = ember_gpu.shared : memref<16x16xf32, 3 : i64>
// CHECK-NEXT: %{{.*}} = ember_gpu.shared : memref<16x16xf32, 3 : i64>
// CHECK:      "gpu.barrier"() : () -> ()
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<32x32xf32>, memref<32x32xf32>, memref<32x32xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %c: memref<32x32xf32>):
      %ta = ember_gpu.shared : memref<16x16xf32, 3 : i64>
      %tb = ember_gpu.shared : memref<16x16xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %row0 = arith.muli %by, %c16 : index
      %col0 = arith.muli %bx, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col = arith.addi %col0, %tx : index
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%acc = %zero) -> (f32) {
        %ak = arith.addi %k0, %tx : index
        %av = memref.load %a[%row, %ak] : memref<32x32xf32>
        memref.store %av, %ta[%ty, %tx] : memref<16x16xf32, 3 : i64>
        %bk = arith.addi %k0, %ty : index
        %bv = memref.load %b[%bk, %col] : memref<32x32xf32>
        memref.store %bv, %tb[%ty, %tx] : memref<16x16xf32, 3 : i64>
        "gpu.barrier"() : () -> ()
        %c1 = arith.constant 1 : index
        %part = scf.for %k = %c0 to %c16 step %c1 iter_args(%p = %acc) -> (f32) {
          %x = memref.load %ta[%ty, %k] : memref<16x16xf32, 3 : i64>
          %y = memref.load %tb[%k, %tx] : memref<16x16xf32, 3 : i64>
          %xy = arith.mulf %x, %y : f32
          %next = arith.addf %p, %xy : f32
          scf.yield %next : f32
        }
        "gpu.barrier"() : () -> ()
        scf.yield %part : f32
      }
      memref.store %sum, %c[%row, %col] : memref<32x32xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "matmul"} : () -> ()
  }) : () -> ()
}
