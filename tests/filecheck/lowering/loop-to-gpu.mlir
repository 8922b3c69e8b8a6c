// RUN: ember-opt %s --split-input-file -p convert-loop-to-gpu | filecheck %s

// A parallel band: one thread per point (8 x 32 = 256 points, 2 blocks of
// 128), the view of the arena recomputed in the kernel, the arena passed.

func.func @band(%x: memref<8x32xf32>, %arena: memref<1024xi8> {ember.arena}) {
  %off = arith.constant 0 : index
  %y = memref.view %arena[%off][] : memref<1024xi8> to memref<8x32xf32>
  loop.kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      "scf.parallel"(%c0, %c32, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%j: index):
        %v = memref.load %x[%i, %j] : memref<8x32xf32>
        memref.store %v, %y[%i, %j] : memref<8x32xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}

// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK:        func.func @band(%x: memref<8x32xf32>, %arena: memref<1024xi8> {ember.arena}) {
// CHECK-NOT:      memref.view
// CHECK:          "gpu.launch_func"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %x, %arena) <{kernel = @ember_kernels::@band_kernel0
// CHECK-NEXT:     func.return
// CHECK:        "gpu.module"() <{sym_name = "ember_kernels"}> ({
// CHECK:          "gpu.func"() <{function_type = (memref<8x32xf32>, memref<1024xi8>) -> (), kernel}> ({
// CHECK:            memref.view %{{.*}}[%{{.*}}][] : memref<1024xi8> to memref<8x32xf32>
// CHECK:            %[[T:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK:            %[[B:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK:            %[[D:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}>
// CHECK:            %[[F:.*]] = arith.muli %[[B]], %[[D]] : index
// CHECK:            %[[P:.*]] = arith.addi %[[F]], %[[T]] : index
// CHECK:            %[[N:.*]] = arith.constant 256 : index
// CHECK:            %[[IN:.*]] = arith.cmpi ult, %[[P]], %[[N]] : index
// CHECK:            scf.if %[[IN]] {
// CHECK:              arith.remui %[[P]]
// CHECK:              memref.load
// CHECK:              memref.store
// CHECK:          }) {sym_name = "band_kernel0"}

// -----

// A contraction with a block-tiled schedule: the fill before it is its
// accumulators' start; two shared tiles, two barriers, a 2 x 2 register
// tile a thread; grid (ceil(80/64), ceil(70/64), 1), block (32, 32, 1).

func.func @tiled(%a: memref<70x96xf32>, %b: memref<96x80xf32>, %c: memref<70x80xf32>) {
  loop.kernel {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<70x80xf32>)
    linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [32, 32], k_tile = 32>} ins(%a, %b : memref<70x96xf32>, memref<96x80xf32>) outs(%c : memref<70x80xf32>)
  }
  func.return
}

// CHECK-LABEL: func.func @tiled
// CHECK-DAG:     %[[GX:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[TX:.*]] = arith.constant 32 : index
// CHECK:         "gpu.launch_func"(%[[GX]], %{{.*}}, %{{.*}}, %[[TX]], %{{.*}}, %{{.*}}, %a, %b, %c)
// CHECK-NOT:     "gpu.launch_func"
// CHECK:         func.return
// CHECK:         "gpu.func"
// CHECK:           ember_gpu.shared : memref<64x32xf32, 3 : i64>
// CHECK:           ember_gpu.shared : memref<32x64xf32, 3 : i64>
// CHECK:           scf.for
// CHECK:             "gpu.barrier"() : () -> ()
// CHECK:             scf.for
// CHECK-COUNT-4:       math.fma
// CHECK:             "gpu.barrier"() : () -> ()
// CHECK-NOT:       arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:           memref.store

// -----

// A sequential nest runs as a kernel of one thread; a kernel function
// (ember.kernel) is left alone.

func.func @serial(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %one, %x[%i] : memref<4xf32>
  }
  func.return
}

func.func @already_a_kernel(%x: memref<4xf32>) attributes {ember.kernel} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %x[%c0] : memref<4xf32>
  func.return
}

// CHECK-LABEL: func.func @serial
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         "gpu.launch_func"(%[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %x)
// CHECK-LABEL: func.func @already_a_kernel
// CHECK-NEXT:    arith.constant 0 : index
// CHECK-NEXT:    arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    memref.store

// -----

// The generics marked as a tiled contraction's epilogue run on its values
// before the store into the last one's output: one kernel, one launch, the
// bias read at the output's column.

func.func @epilogue(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %bias: memref<64xf32>, %out: memref<64x64xf32>, %c: memref<64x64xf32>) {
  loop.kernel {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
    linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<64x64xf32>, memref<64xf32>) outs(%out : memref<64x64xf32>) attrs = {schedule = #ember_gpu.epilogue} {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.addf %v, %w : f32
      %floor = arith.constant 0.0 : f32
      %r = arith.maximumf %s, %floor : f32
      linalg.yield %r : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @epilogue
// CHECK:         "gpu.launch_func"
// CHECK-NOT:     "gpu.launch_func"
// CHECK:         "gpu.func"
// CHECK:           scf.for
// CHECK:           scf.if
// CHECK-NOT:         memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xf32>
// CHECK:             %[[BIAS:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<64xf32>
// CHECK-NEXT:        %[[SUM:.*]] = arith.addf %{{.*}}, %[[BIAS]] : f32
// CHECK-NEXT:        arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %[[RELU:.*]] = arith.maximumf %[[SUM]], %{{.*}} : f32
// CHECK-NEXT:        memref.store %[[RELU]], %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xf32>

// -----

// Reductions with a #ember_gpu.reduce: one block per row (grid 8, 64 and 32
// threads), each thread folding the points t, t + 64, ... from the
// combiner's identity (-0.0 for addf, NaN for maxnumf), halving steps in
// shared memory down to 32 partials, each after a barrier (64 threads: one
// step, combined by the first warp in registers; 32 threads: no shared
// memory), five shuffles finishing in the warp, and thread 0 combining the
// row's total with the fill before the op (which runs no kernel) or else
// with the output's old value.

func.func @row_sums(%x: memref<8x768xf32>, %s: memref<8xf32>, %m: memref<8xf32>) {
  loop.kernel {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x768xf32>) outs(%s : memref<8xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 64>} {
    ^bb0(%a: f32, %acc: f32):
      %e = math.exp %a : f32
      %r = arith.addf %acc, %e : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x768xf32>) outs(%m : memref<8xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 32>} {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maxnumf %a, %acc : f32
      linalg.yield %r : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @row_sums
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[THREADS:.*]] = arith.constant 64 : index
// CHECK-NEXT:    "gpu.launch_func"(%[[ROWS]], %[[ONE]], %[[ONE]], %[[THREADS]], %[[ONE]], %[[ONE]], %x, %s)
// CHECK:         "gpu.launch_func"
// CHECK-NOT:     "gpu.launch_func"
// CHECK:         "gpu.func"
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SLOTS:.*]] = ember_gpu.shared : memref<64xf32, 3 : i64>
// CHECK:           %[[T:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:      %[[ROW:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:      %[[IDENTITY:.*]] = arith.constant -0.000000e+00 : f32
// CHECK-NEXT:      %[[PARTIAL:.*]] = scf.for %[[P:.*]] = %[[T]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[IDENTITY]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[P]]] : memref<8x768xf32>
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:        %[[SUM:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK-NEXT:        scf.yield %[[SUM]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[PARTIAL]], %[[SLOTS]][%[[T]]]
// CHECK-NEXT:      "gpu.barrier"
// CHECK-NEXT:      %[[WARP:.*]] = arith.cmpi ult, %[[T]], %{{.*}} : index
// CHECK-NEXT:      %[[PAIR:.*]] = scf.if %[[WARP]] -> (f32) {
// CHECK-NEXT:        %[[PARTNER:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT:        %[[MINE:.*]] = memref.load %[[SLOTS]][%[[T]]]
// CHECK-NEXT:        %[[THEIRS:.*]] = memref.load %[[SLOTS]][%[[PARTNER]]]
// CHECK-NEXT:        %[[BOTH:.*]] = arith.addf %[[MINE]], %[[THEIRS]] : f32
// CHECK-NEXT:        scf.yield %[[BOTH]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[IDENTITY]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[S16:.*]] = ember_gpu.shuffle_xor %[[PAIR]], 16 : f32
// CHECK-NEXT:      %[[A16:.*]] = arith.addf %[[PAIR]], %[[S16]] : f32
// CHECK-NEXT:      ember_gpu.shuffle_xor %[[A16]], 8 : f32
// CHECK:           ember_gpu.shuffle_xor %{{.*}}, 4 : f32
// CHECK:           ember_gpu.shuffle_xor %{{.*}}, 2 : f32
// CHECK:           %[[S1:.*]] = ember_gpu.shuffle_xor %[[A2:.*]], 1 : f32
// CHECK-NEXT:      %[[TOTAL:.*]] = arith.addf %[[A2]], %[[S1]] : f32
// CHECK-NEXT:      arith.cmpi eq, %[[T]], %{{.*}} : index
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        %[[RESULT:.*]] = arith.addf %[[ZERO]], %[[TOTAL]] : f32
// CHECK-NEXT:        memref.store %[[RESULT]], %{{.*}}[%[[ROW]]] : memref<8xf32>
// CHECK:           "gpu.return"
// CHECK:         "gpu.func"
// CHECK-NOT:       ember_gpu.shared
// CHECK:           %[[NAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:      %[[MAXIMA:.*]] = scf.for
// CHECK:           }
// CHECK-NEXT:      %[[M16:.*]] = ember_gpu.shuffle_xor %[[MAXIMA]], 16 : f32
// CHECK-NEXT:      arith.maxnumf %[[M16]], %[[MAXIMA]] : f32
// CHECK-COUNT-4:   ember_gpu.shuffle_xor
// CHECK-NOT:       "gpu.barrier"
// CHECK:           %[[MAX:.*]] = arith.maxnumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      arith.cmpi eq
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK-NEXT:        arith.maxnumf %[[MAX]], %[[OLD]] : f32
