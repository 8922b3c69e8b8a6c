// RUN: ember-opt %s --split-input-file -p convert-gpu-to-nvvm | filecheck %s
// RUN: ember-opt %s --split-input-file -p convert-gpu-to-nvvm | ember-opt --split-input-file | filecheck %s

// The kernels of a gpu.module become llvm.funcs in it; the host function
// launching them is left alone. tests/targets/cuda/test_ptx.py takes this
// file on to PTX and ptxas.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({

    // y = max(0, exp(x) + log2(|x| + 1) + tanh(x) + sqrt(|x|)) on a rows x cols
    // matrix of run-time size, one element per thread (x ids from the block
    // and grid dims), threads past the end doing nothing (scf.if), the
    // clamp an scf.if with a result; scale is an index scalar.
    "gpu.func"() <{function_type = (memref<?x?xf32>, memref<?x?xf32>, index) -> (), kernel}> ({
    ^bb0(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %scale: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rows = memref.dim %x, %c0 : memref<?x?xf32>
      %cols = memref.dim %x, %c1 : memref<?x?xf32>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bd = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %gd = "gpu.grid_dim"() <{dimension = #gpu<dim z>}> : () -> index
      %first = arith.muli %bx, %bd : index
      %i = arith.addi %first, %tx : index
      %total = arith.muli %rows, %cols : index
      %inside = arith.cmpi slt, %i, %total : index
      scf.if %inside {
        %r = arith.divui %i, %cols : index
        %c = arith.remui %i, %cols : index
        %v = memref.load %x[%r, %c] : memref<?x?xf32>
        %e = math.exp %v : f32
        %a = math.absf %v : f32
        %one = arith.constant 1.0 : f32
        %a1 = arith.addf %a, %one : f32
        %l = math.log2 %a1 : f32
        %t = math.tanh %v : f32
        %s = math.sqrt %a : f32
        %el = arith.addf %e, %l : f32
        %ts = arith.addf %t, %s : f32
        %sum = arith.addf %el, %ts : f32
        %k = arith.index_cast %scale : index to i64
        %kf = arith.sitofp %k : i64 to f32
        %out = arith.mulf %sum, %kf : f32
        %zero = arith.constant 0.0 : f32
        %negative = arith.cmpf olt, %out, %zero : f32
        %clamped = scf.if %negative -> (f32) {
          scf.yield %zero : f32
        } else {
          scf.yield %out : f32
        }
        memref.store %clamped, %y[%r, %c] : memref<?x?xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "elementwise"} : () -> ()

    // Row sums of a 4 x 16 matrix staged through shared memory: thread tx
    // copies column tx of the block's row block, the threads synchronise,
    // thread 0 sums with a loop-carried value and writes the sum.
    "gpu.func"() <{function_type = (memref<4x16xf32>, memref<4xf32>) -> (), kernel}> ({
    ^bb0(%m: memref<4x16xf32>, %sums: memref<4xf32>):
      %tile = ember_gpu.shared : memref<16xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %row = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %v = memref.load %m[%row, %tx] : memref<4x16xf32>
      memref.store %v, %tile[%tx] : memref<16xf32, 3 : i64>
      "gpu.barrier"() : () -> ()
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %leader = arith.cmpi eq, %tx, %c0 : index
      scf.if %leader {
        %zero = arith.constant 0.0 : f32
        %total = scf.for %j = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
          %w = memref.load %tile[%j] : memref<16xf32, 3 : i64>
          %next = arith.addf %acc, %w : f32
          scf.yield %next : f32
        }
        memref.store %total, %sums[%row] : memref<4xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "row_sums"} : () -> ()

    // Not a kernel: a device function, lowered without the entry mark.
    "gpu.func"() <{function_type = (memref<4xf32>) -> ()}> ({
    ^bb0(%a: memref<4xf32>):
      "gpu.return"() : () -> ()
    }) {sym_name = "helper"} : () -> ()
  }) : () -> ()

  func.func @host(%m: memref<4x16xf32>, %sums: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    "gpu.launch_func"(%c1, %c4, %c1, %c16, %c1, %c1, %m, %sums) <{kernel = @ember_kernels::@row_sums, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<4x16xf32>, memref<4xf32>) -> ()
    func.return
  }
}

// A dynamic memref is its global pointer, then one i64 per `?`; an index
// scalar is an i64. Ids are special-register reads, zero-extended.
// CHECK-LABEL: llvm.func @elementwise(%x: !llvm.ptr<1>, %x_size0: i64, %x_size1: i64, %y: !llvm.ptr<1>, %y_size0: i64, %y_size1: i64, %scale: i64) attributes {nvvm.kernel} {
// CHECK-DAG:     %[[TID:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-DAG:     %tx = llvm.zext %[[TID]] : i32 to i64
// CHECK-DAG:     llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.x"() : () -> i32
// CHECK-DAG:     llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ntid.x"() : () -> i32
// CHECK-DAG:     llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.nctaid.z"() : () -> i32
// The bound check is the dynamic sizes' product; scf.if branches.
// CHECK:         %total = llvm.mul %x_size0, %x_size1 : i64
// CHECK:         %inside = llvm.icmp "slt" %i, %total : i64
// CHECK-NEXT:    llvm.cond_br %inside, ^[[THEN:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK-NEXT:  ^[[THEN]]:
// The row stride of x[r, c] is its run-time column count.
// CHECK:         %[[ROW:.*]] = llvm.mul %r, %x_size1 : i64
// CHECK-NEXT:    %[[AT:.*]] = llvm.add %[[ROW]], %c : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %x[%[[AT]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT:    %v = llvm.load %[[P]] : !llvm.ptr<1> -> f32
// exp(x) = 2^(x log2 e), log2 and tanh approximate, sqrt exact.
// CHECK-NEXT:    %[[XL:.*]] = llvm.fmul %v, %{{.*}} : f32
// CHECK-NEXT:    %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f"(%[[XL]]) : (f32) -> f32
// CHECK:         %l = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%a1) : (f32) -> f32
// CHECK-NEXT:    %t = llvm.call_intrinsic "llvm.nvvm.tanh.approx.f32"(%v) : (f32) -> f32
// CHECK-NEXT:    %s = llvm.call_intrinsic "llvm.sqrt.f32"(%a) : (f32) -> f32
// An scf.if with a result: both branches pass it to the join block.
// CHECK:         llvm.cond_br %negative, ^[[NEG:bb[0-9]+]], ^[[POS:bb[0-9]+]]
// CHECK-NEXT:  ^[[NEG]]:
// CHECK-NEXT:    llvm.br ^[[JOIN:bb[0-9]+]](%zero : f32)
// CHECK-NEXT:  ^[[POS]]:
// CHECK-NEXT:    llvm.br ^[[JOIN]](%out : f32)
// CHECK-NEXT:  ^[[JOIN]](%[[CLAMPED:.*]]: f32):
// CHECK:         llvm.store %[[CLAMPED]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK-NEXT:    llvm.br ^[[EXIT]]
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:    llvm.return

// One internal global in shared memory (address space 3) per buffer, before its kernel.
// CHECK:       llvm.mlir.global internal @row_sums_shared0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16 x f32>
// CHECK-NEXT:  llvm.func @row_sums(%m: !llvm.ptr<1>, %sums: !llvm.ptr<1>) attributes {nvvm.kernel} {
// CHECK:         %tile = llvm.mlir.addressof @row_sums_shared0 : !llvm.ptr<3>
// CHECK:         %[[TX:tx.*]] = llvm.zext %{{.*}} : i32 to i64
// CHECK:         %[[V:v.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.getelementptr inbounds %tile[%[[TX]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK-NEXT:    llvm.store %[[V]], %[[SLOT]] : f32, !llvm.ptr<3>
// CHECK-NEXT:    llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%{{.*}}) : (i32) -> ()
// The loop carries the sum as a header argument next to the induction variable.
// CHECK:         llvm.br ^[[HEAD:bb[0-9]+]](%{{.*}}, %{{zero.*}} : i64, f32)
// CHECK-NEXT:  ^[[HEAD]](%j: i64, %[[ACC:.*]]: f32):
// CHECK-NEXT:    %{{.*}} = llvm.icmp "slt" %j, %c16 : i64
// CHECK:         %w = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NEXT:    %next = llvm.fadd %[[ACC]], %w : f32
// CHECK:         llvm.br ^[[HEAD]](%{{.*}}, %next : i64, f32)
// CHECK:         llvm.store %[[ACC]], %{{.*}} : f32, !llvm.ptr<1>

// Must not fire: no entry mark on a device function; the host is untouched.
// CHECK:       llvm.func @helper(%{{.*}}: !llvm.ptr<1>) {
// CHECK:       func.func @host
// CHECK:       "gpu.launch_func"

// -----

// A warp's sum by butterfly shuffles: each ember_gpu.shuffle_xor is one
// shfl.sync.bfly over all 32 lanes (member mask -1, clamp 31), the lane
// mask its constant. test_ptx.py takes this case through ptxas.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<32xf32>, memref<1xf32>) -> (), kernel}> ({
    ^bb0(%x: memref<32xf32>, %sum: memref<1xf32>):
      %lane = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %x[%lane] : memref<32xf32>
      %s16 = ember_gpu.shuffle_xor %v, 16 : f32
      %a16 = arith.addf %v, %s16 : f32
      %s8 = ember_gpu.shuffle_xor %a16, 8 : f32
      %a8 = arith.addf %a16, %s8 : f32
      %s4 = ember_gpu.shuffle_xor %a8, 4 : f32
      %a4 = arith.addf %a8, %s4 : f32
      %s2 = ember_gpu.shuffle_xor %a4, 2 : f32
      %a2 = arith.addf %a4, %s2 : f32
      %s1 = ember_gpu.shuffle_xor %a2, 1 : f32
      %a1 = arith.addf %a2, %s1 : f32
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        memref.store %a1, %sum[%c0] : memref<1xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "warp_sum"} : () -> ()
  }) : () -> ()
}

// CHECK-LABEL: llvm.func @warp_sum(%x: !llvm.ptr<1>, %sum: !llvm.ptr<1>) attributes {nvvm.kernel} {
// CHECK-DAG:     %[[ALL:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-DAG:     %[[M16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-DAG:     %[[CLAMP:.*]] = llvm.mlir.constant(31 : i32) : i32
// CHECK-DAG:     %[[M1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:         %v = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NEXT:    %s16 = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%[[ALL]], %v, %[[M16]], %[[CLAMP]]) : (i32, f32, i32, i32) -> f32
// CHECK-NEXT:    %a16 = llvm.fadd %v, %s16 : f32
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"
// CHECK:         %s1 = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%[[ALL]], %a2, %[[M1]], %[[CLAMP]]) : (i32, f32, i32, i32) -> f32
// CHECK-NOT:     llvm.nvvm.barrier
// CHECK:         llvm.return
