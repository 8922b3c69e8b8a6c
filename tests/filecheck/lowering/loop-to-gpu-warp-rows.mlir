// RUN: ember-opt %s --split-input-file -p convert-loop-to-gpu | filecheck %s

// A warp a row, 8 rows a block: 20 rows of 48 points on a grid of
// ceil(20 / 8) = 3 blocks of 256 threads. Lane (thread mod 32) l folds
// points l, l + 32 of row block * 8 + thread / 32; the last block's warps
// past row 19 fold no point (upper bound 0) and store nothing, but take
// part in the five shuffles. No shared memory, no barrier.

func.func @rowsum(%x: memref<20x48xf32>, %y: memref<20xf32>) {
  loop.kernel {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%y : memref<20xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<20x48xf32>) outs(%y : memref<20xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 32, rows = 8>} {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rowsum
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[GRID:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK:         "gpu.launch_func"(%[[GRID]], %[[ONE]], %[[ONE]], %[[BLOCK]], %[[ONE]], %[[ONE]], %x, %y)
// CHECK:         "gpu.func"
// CHECK-NOT:       ember_gpu.shared
// CHECK:           %[[T:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:      %[[B:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:      %[[WARP:.*]] = arith.divui %[[T]], %[[C32:.*]] : index
// CHECK-NEXT:      %[[LANE:.*]] = arith.remui %[[T]], %[[C32]] : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.addi %[[FIRST]], %[[WARP]] : index
// CHECK-NEXT:      %[[VALID:.*]] = arith.cmpi ult, %[[ROW]], %{{.*}} : index
// CHECK-NEXT:      %[[END:.*]] = arith.select %[[VALID]], %{{.*}}, %{{.*}} : index
// CHECK:           %[[SUM:.*]] = scf.for %[[P:.*]] = %[[LANE]] to %[[END]] step %[[C32]]
// CHECK-NEXT:        memref.load %{{.*}}[%[[ROW]], %[[P]]] : memref<20x48xf32>
// CHECK-COUNT-5:   ember_gpu.shuffle_xor
// CHECK:           %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : index
// CHECK-NEXT:      %[[STORE:.*]] = arith.andi %[[LANE0]], %[[VALID]] : i1
// CHECK-NEXT:      scf.if %[[STORE]] {
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[ROW]]] : memref<20xf32>
// CHECK-NOT:       "gpu.barrier"
// CHECK:           "gpu.return"

// -----

// Must not guard: 16 rows fill two blocks of 8 warps exactly, so every
// warp has a row (no select, lane 0 alone stores). A warp a block (rows
// left out) is the block-per-row kernel of 32 threads.

func.func @even(%x: memref<16x48xf32>, %y: memref<16xf32>) {
  loop.kernel {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x48xf32>) outs(%y : memref<16xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 32, rows = 8>} {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x48xf32>) outs(%y : memref<16xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 32>} {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @even
// CHECK:         "gpu.launch_func"(%[[TWO:.*]], %{{.*}}, %{{.*}}, %[[B256:.*]], %{{.*}}, %{{.*}}, %x, %y) <{kernel = @ember_kernels::@even_kernel0
// CHECK:         "gpu.launch_func"(%[[SIXTEEN:.*]], %{{.*}}, %{{.*}}, %[[B32:.*]], %{{.*}}, %{{.*}}, %x, %y) <{kernel = @ember_kernels::@even_kernel1
// CHECK:         "gpu.func"
// CHECK:           arith.divui
// CHECK-NOT:       arith.select
// CHECK:           %[[LANE0:.*]] = arith.cmpi eq
// CHECK-NEXT:      scf.if %[[LANE0]] {
// CHECK:         "gpu.func"
// CHECK-NOT:       arith.divui
// CHECK:           ember_gpu.shuffle_xor
// CHECK:           "gpu.return"
