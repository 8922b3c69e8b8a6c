// RUN: ember-opt %s --split-input-file -p convert-gpu-to-loop | filecheck %s
// RUN: ember-opt %s --split-input-file -p convert-gpu-to-loop,convert-loop-to-llvm | filecheck %s --check-prefix=LLVM

// convert-gpu-to-loop: each kernel becomes a func.func taking its arguments,
// then the grid and block sizes, that loops over every block (z, y, x) and,
// within a block, runs each barrier-free phase in its own nest of thread
// loops; each launch becomes a call of it. The gpu.module and
// gpu.container_module go; the result lowers to LLVM like any loop-level code.

// A kernel without barriers: one nest of thread loops inside the block loops,
// thread ids the thread loops' counters, nothing kept per thread; the bounds
// check stays inside the thread loop.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>, memref<?xf32>, index) -> (), kernel}> ({
    ^bb0(%x: memref<?xf32>, %y: memref<?xf32>, %n: index):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %dx = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %base = arith.muli %bx, %dx : index
      %i = arith.addi %base, %tx : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %v = memref.load %x[%i] : memref<?xf32>
        %w = arith.addf %v, %v : f32
        memref.store %w, %y[%i] : memref<?xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "double"} : () -> ()
  }) : () -> ()
  func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %n: index, %blocks: index) {
    %one = arith.constant 1 : index
    %threads = arith.constant 64 : index
    "gpu.launch_func"(%blocks, %one, %one, %threads, %one, %one, %x, %y, %n) <{kernel = @ember_kernels::@double, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}> : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    func.return
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @double(%x: memref<?xf32>, %y: memref<?xf32>, %n: index, %grid_x: index, %grid_y: index, %grid_z: index, %block_x: index, %block_y: index, %block_z: index) {
// CHECK-NOT:    memref.alloca
// CHECK:          scf.if
// CHECK-NEXT:       scf.for %{{.*}} = %{{.*}} to %grid_z
// CHECK-NEXT:         scf.for %{{.*}} = %{{.*}} to %grid_y
// CHECK-NEXT:           scf.for %[[BX:.*]] = %{{.*}} to %grid_x
// CHECK-NEXT:             %base = arith.muli %[[BX]], %block_x : index
// CHECK-NEXT:             scf.for %{{.*}} = %{{.*}} to %block_z
// CHECK-NEXT:               scf.for %{{.*}} = %{{.*}} to %block_y
// CHECK-NEXT:                 scf.for %[[TX:.*]] = %{{.*}} to %block_x
// CHECK-NEXT:                   %i = arith.addi %base, %[[TX]] : index
// CHECK-NEXT:                   %inside = arith.cmpi ult, %i, %n : index
// CHECK-NEXT:                   scf.if %inside {
// CHECK-NEXT:                     %v = memref.load %x[%i] : memref<?xf32>
// CHECK:                          memref.store %w, %y[%i] : memref<?xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @main(
// CHECK:          func.call @double(%x, %y, %n, %blocks, %one, %one, %threads, %one, %one) : (memref<?xf32>, memref<?xf32>, index, index, index, index, index, index, index) -> ()
// CHECK-NOT:    gpu.
// CHECK-NOT:    "gpu.

// LLVM:     llvm.func @double(
// LLVM:     llvm.func @main(
// LLVM:       llvm.call @double(

// -----

// A barrier at the top level: two phases, each in its own thread loops. The
// value each thread loaded before the barrier and uses after it is kept in
// per-thread storage (one element per thread, at the linear thread id); the
// shared buffer is one alloca in the function's entry, in the default memory
// space.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>, memref<64xf32>) -> (), kernel}> ({
    ^bb0(%x: memref<64xf32>, %y: memref<64xf32>):
      %s = ember_gpu.shared : memref<32xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %base = arith.muli %bx, %c32 : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %x[%i] : memref<64xf32>
      memref.store %v, %s[%tx] : memref<32xf32, 3 : i64>
      "gpu.barrier"() : () -> ()
      %next = arith.addi %tx, %c1 : index
      %j = arith.remui %next, %c32 : index
      %u = memref.load %s[%j] : memref<32xf32, 3 : i64>
      %d = arith.subf %u, %v : f32
      memref.store %d, %y[%i] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "neighbour"} : () -> ()
  }) : () -> ()
  func.func @main(%x: memref<64xf32>, %y: memref<64xf32>) {
    %one = arith.constant 1 : index
    %two = arith.constant 2 : index
    %threads = arith.constant 32 : index
    "gpu.launch_func"(%two, %one, %one, %threads, %one, %one, %x, %y) <{kernel = @ember_kernels::@neighbour, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<64xf32>, memref<64xf32>) -> ()
    func.return
  }
}

// CHECK:      func.func @neighbour(
// CHECK-DAG:    %[[KEPT:per_thread]] = memref.alloca() : memref<1024xf32>
// CHECK-DAG:    %s = memref.alloca() : memref<32xf32>
// CHECK:                  scf.for %[[TX:.*]] = %{{.*}} to %block_x
// CHECK:                    %v = memref.load %x[%i] : memref<64xf32>
// CHECK:                    %[[T:.*]] = arith.addi %[[TX]], %{{.*}} : index
// CHECK-NEXT:               memref.store %v, %[[KEPT]][%[[T]]] : memref<1024xf32>
// CHECK-NEXT:               memref.store %v, %s[%[[TX]]] : memref<32xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:         scf.for %{{.*}} = %{{.*}} to %block_z
// CHECK-NEXT:           scf.for %{{.*}} = %{{.*}} to %block_y
// CHECK-NEXT:             scf.for %[[TX2:.*]] = %{{.*}} to %block_x
// CHECK:                    %u = memref.load %s[%j] : memref<32xf32>
// CHECK:                    %[[T2:.*]] = arith.addi %[[TX2]], %{{.*}} : index
// CHECK-NEXT:               %[[V2:.*]] = memref.load %[[KEPT]][%[[T2]]] : memref<1024xf32>
// CHECK-NEXT:               %d = arith.subf %u, %[[V2]] : f32
// CHECK-NOT:  gpu.barrier

// -----

// The tiled matmul of tests/filecheck/dialects/ember_gpu/shared.mlir: its
// barriers stand in an scf.for, which stays outside the thread loops (its
// bounds are the same for every thread) with two phases in its body; the
// accumulator it carries lives in per-thread storage: set before the loop,
// loaded and stored back in the phase that adds to it, loaded after the loop.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
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
  func.func @main(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %c: memref<32x32xf32>) {
    %one = arith.constant 1 : index
    %two = arith.constant 2 : index
    %sixteen = arith.constant 16 : index
    "gpu.launch_func"(%two, %two, %one, %sixteen, %sixteen, %one, %a, %b, %c) <{kernel = @ember_kernels::@matmul, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}> : (index, index, index, index, index, index, memref<32x32xf32>, memref<32x32xf32>, memref<32x32xf32>) -> ()
    func.return
  }
}

// CHECK:      func.func @matmul(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %c: memref<32x32xf32>, %grid_x: index, %grid_y: index, %grid_z: index, %block_x: index, %block_y: index, %block_z: index) {
// CHECK-DAG:    %[[ACC:per_thread]] = memref.alloca() : memref<1024xf32>
// CHECK-DAG:    %ta = memref.alloca() : memref<16x16xf32>
// CHECK-DAG:    %tb = memref.alloca() : memref<16x16xf32>
// CHECK:        %[[THREADS:.*]] = arith.muli %{{.*}}, %block_z : index
// CHECK-NEXT:   %[[FITS:.*]] = arith.cmpi ule, %[[THREADS]], %{{.*}} : index
// CHECK-NEXT:   scf.if %[[FITS]] {
// CHECK-NEXT:     scf.for %bz = %{{.*}} to %grid_z
// CHECK-NEXT:       scf.for %by = %{{.*}} to %grid_y
// CHECK-NEXT:         scf.for %bx = %{{.*}} to %grid_x
// CHECK:                %row0 = arith.muli %by, %c16 : index
// CHECK-NEXT:           %col0 = arith.muli %bx, %c16 : index
// CHECK-NEXT:           %zero = arith.constant 0.000000e+00 : f32
//                       Phase 0: the accumulator's initial value, per thread.
// CHECK-NEXT:           scf.for %tz = %{{.*}} to %block_z
// CHECK-NEXT:             scf.for %ty = %{{.*}} to %block_y
// CHECK-NEXT:               scf.for %tx = %{{.*}} to %block_x
// CHECK:                      memref.store %zero, %[[ACC]][%{{.*}}] : memref<1024xf32>
//                       The loop holding the barriers, outside the thread loops.
// CHECK:                scf.for %k0 = %c0 to %c32 step %c16 {
// CHECK-NEXT:             scf.for %{{.*}} = %{{.*}} to %block_z
// CHECK-NEXT:               scf.for %{{.*}} = %{{.*}} to %block_y
// CHECK-NEXT:                 scf.for %{{.*}} = %{{.*}} to %block_x
// CHECK:                        memref.store %av, %ta[
// CHECK:                        memref.store %bv, %tb[
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             %c1 = arith.constant 1 : index
// CHECK-NEXT:             scf.for %{{.*}} = %{{.*}} to %block_z
// CHECK-NEXT:               scf.for %{{.*}} = %{{.*}} to %block_y
// CHECK-NEXT:                 scf.for %{{.*}} = %{{.*}} to %block_x
// CHECK:                        %acc = memref.load %[[ACC]][%[[T:.*]]] : memref<1024xf32>
// CHECK-NEXT:                   %part = scf.for %k = %c0 to %c16 step %c1 iter_args(%p = %acc) -> (f32) {
// CHECK:                        memref.store %part, %[[ACC]][%[[T]]] : memref<1024xf32>
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
//                       After the loop: the result, read back per thread.
// CHECK-NEXT:           scf.for %{{.*}} = %{{.*}} to %block_z
// CHECK-NEXT:             scf.for %{{.*}} = %{{.*}} to %block_y
// CHECK-NEXT:               scf.for %{{.*}} = %{{.*}} to %block_x
// CHECK:                      %sum = memref.load %[[ACC]][%{{.*}}] : memref<1024xf32>
// CHECK:                      memref.store %sum, %c[%{{.*}}, %{{.*}}] : memref<32x32xf32>
// CHECK:        func.call @matmul(%a, %b, %c, %two, %two, %one, %sixteen, %sixteen, %one)

// -----

// The same matmul without its second barrier: the k loop's body no longer
// ends with one, so the loop is rotated. The first phase of iteration 0 (the
// staging) joins the phase before the loop, guarded by lb < ub; in the loop,
// the last phase of step %k0 (accumulating from the tiles) and the first of
// step %k0 + 16 (staging the next tiles, guarded by %k0 + 16 < 32) share one
// nest of thread loops: thread t overwrites the tiles before thread t + 1
// reads them, the race a GPU has. (With both barriers, above, the loop is
// cut as it stands.)
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
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
        scf.yield %part : f32
      }
      memref.store %sum, %c[%row, %col] : memref<32x32xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "racing_matmul"} : () -> ()
  }) : () -> ()
}

// CHECK:      func.func @racing_matmul(
// CHECK:                %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:           %[[ANY:any_iteration]] = arith.cmpi slt, %c0, %c32 : index
//                       Before the loop: the accumulator's initial value and
//                       the staging of step 0, in one phase.
// CHECK-NEXT:           scf.for %tz = %{{.*}} to %block_z
// CHECK-NEXT:             scf.for %ty = %{{.*}} to %block_y
// CHECK-NEXT:               scf.for %tx = %{{.*}} to %block_x
// CHECK:                      memref.store %zero, %[[ACC:per_thread]][%{{.*}}] : memref<1024xf32>
// CHECK:                      scf.if %[[ANY]] {
// CHECK-NEXT:                   %{{.*}} = arith.addi %c0, %tx : index
// CHECK:                        memref.store %{{.*}}, %ta[%ty, %tx] : memref<16x16xf32>
// CHECK:                        memref.store %{{.*}}, %tb[%ty, %tx] : memref<16x16xf32>
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
//                       The loop: one phase, step %k0's products, then the
//                       next step's staging.
// CHECK-NEXT:           scf.for %k0 = %c0 to %c32 step %c16 {
// CHECK-NEXT:             %c1 = arith.constant 1 : index
// CHECK-NEXT:             %[[NEXT:next_iteration]] = arith.addi %k0, %c16 : index
// CHECK-NEXT:             %[[MORE:more_iterations]] = arith.cmpi slt, %[[NEXT]], %c32 : index
// CHECK-NEXT:             scf.for %{{.*}} = %{{.*}} to %block_z
// CHECK-NEXT:               scf.for %[[TY:.*]] = %{{.*}} to %block_y
// CHECK-NEXT:                 scf.for %[[TX:.*]] = %{{.*}} to %block_x
// CHECK:                        %acc = memref.load %[[ACC]][%[[T:.*]]] : memref<1024xf32>
// CHECK-NEXT:                   %part = scf.for %k = %c0 to %c16 step %c1 iter_args(%p = %acc) -> (f32) {
// CHECK:                        memref.store %part, %[[ACC]][%[[T]]] : memref<1024xf32>
// CHECK:                        scf.if %[[MORE]] {
// CHECK-NEXT:                     %{{.*}} = arith.addi %[[NEXT]], %[[TX]] : index
// CHECK:                          memref.store %{{.*}}, %ta[%[[TY]], %[[TX]]] : memref<16x16xf32>
// CHECK:                          memref.store %{{.*}}, %tb[%[[TY]], %[[TX]]] : memref<16x16xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           scf.for %{{.*}} = %{{.*}} to %block_z
// CHECK:                      %sum = memref.load %[[ACC]][%{{.*}}] : memref<1024xf32>

// -----

// Shared memory and per-thread storage are sized for the kernel's
// gpu.known_block_size where it has one (here 8 threads); a host function
// without launches is left alone.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xi32>) -> (), kernel}> ({
    ^bb0(%x: memref<8xi32>):
      %s = ember_gpu.shared : memref<8xi32, 3 : i64>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c7 = arith.constant 7 : index
      %v = memref.load %x[%tx] : memref<8xi32>
      memref.store %v, %s[%tx] : memref<8xi32, 3 : i64>
      "gpu.barrier"() : () -> ()
      %r = arith.subi %c7, %tx : index
      %u = memref.load %s[%r] : memref<8xi32, 3 : i64>
      %w = arith.addi %u, %v : i32
      memref.store %w, %x[%tx] : memref<8xi32>
      "gpu.return"() : () -> ()
    }) {sym_name = "mirror", gpu.known_block_size = array<i32: 8, 1, 1>} : () -> ()
  }) : () -> ()
  func.func @untouched(%x: memref<8xi32>) {
    func.return
  }
}

// CHECK:      func.func @mirror(%x: memref<8xi32>, %grid_x: index,
// CHECK-DAG:    %per_thread = memref.alloca() : memref<8xi32>
// CHECK-DAG:    %s = memref.alloca() : memref<8xi32>
// CHECK:        %[[CAPACITY:.*]] = arith.constant 8 : index
// CHECK:        arith.cmpi ule, %{{.*}}, %[[CAPACITY]] : index
// CHECK:      func.func @untouched(%x: memref<8xi32>) {
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
