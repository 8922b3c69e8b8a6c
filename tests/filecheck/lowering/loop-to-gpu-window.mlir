// RUN: ember-opt %s --split-input-file -p convert-loop-to-gpu | filecheck %s

// A depthwise 3 x 3 convolution of 2 channels, 6 x 6 outputs, on tiles of
// 4 x 8 outputs: a grid of ceil(6 / 8) x ceil(6 / 4) x 2 channels, blocks of
// 4 x 2 threads with 2 x 2 outputs each. The block stages the window its
// tile reads, (4 - 1) + (3 - 1) + 1 = 6 rows by (8 - 1) + (3 - 1) + 1 = 10
// columns, once (threads t, t + 8, ...; zero past the input's 8 x 8), waits
// at one barrier, then each thread reads the 9 weights once each and fuses
// 4 products per weight from shared memory. The fill before it is the
// accumulators' start, and the outputs inside 6 x 6 are stored.

func.func @depthwise(%x: memref<1x2x8x8xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x6x6xf32>) {
  loop.kernel {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%y : memref<1x2x6x6xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<1x2x8x8xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x6x6xf32>) attrs = {schedule = #ember_gpu.window<tile = [4, 8], threads = [4, 2]>} {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @depthwise
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         "gpu.launch_func"(%[[ONE]], %[[TWO]], %[[TWO]], %[[FOUR]], %[[TWO]], %[[ONE]], %x, %w, %y)
// CHECK-NOT:     "gpu.launch_func"
// CHECK:         "gpu.func"
// CHECK:           %[[WINDOW:.*]] = ember_gpu.shared : memref<6x10xf32, 3 : i64>
// CHECK:           "gpu.block_id"() <{dimension = #gpu<dim z>}>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             scf.if %{{.*}} -> (f32) {
// CHECK:               memref.load %{{.*}} : memref<1x2x8x8xf32>
// CHECK:             memref.store %{{.*}}, %[[WINDOW]][%{{.*}}, %{{.*}}] : memref<6x10xf32, 3 : i64>
// CHECK:           "gpu.barrier"() : () -> ()
// CHECK-NOT:       "gpu.barrier"
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK:             memref.load %{{.*}} : memref<2x3x3xf32>
// CHECK-COUNT-4:     math.fma
// CHECK-NOT:         memref.load %{{.*}} : memref<1x2x8x8xf32>
// CHECK:           }
// CHECK-COUNT-4:   memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x2x6x6xf32>
// CHECK:           "gpu.return"

// -----

// A padded input (fills of 0 and a copy of x, marked #ember_gpu.padding):
// the staging reads x at the window's place less the copy's offset (1, 1),
// where that is inside x (unsigned checks: below 1 wraps past 6), else 0;
// the fills and the copy run no kernel, so the convolution is one launch.

func.func @padded(%x: memref<1x2x6x6xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x6x6xf32>, %p: memref<1x2x8x8xf32>) {
  loop.kernel {
    %zero = arith.constant 0.0 : f32
    %top = memref.subview %p[0, 0, 0, 0] [1, 2, 1, 8] [1, 1, 1, 1] : memref<1x2x8x8xf32> to memref<1x2x1x8xf32, strided<[128, 64, 8, 1]>>
    linalg.fill {schedule = #ember_gpu.padding} ins(%zero : f32) outs(%top : memref<1x2x1x8xf32, strided<[128, 64, 8, 1]>>)
    %inner = memref.subview %p[0, 0, 1, 1] [1, 2, 6, 6] [1, 1, 1, 1] : memref<1x2x8x8xf32> to memref<1x2x6x6xf32, strided<[128, 64, 8, 1], offset: 9>>
    linalg.fill ins(%zero : f32) outs(%y : memref<1x2x6x6xf32>)
    linalg.copy {schedule = #ember_gpu.padding} ins(%x : memref<1x2x6x6xf32>) outs(%inner : memref<1x2x6x6xf32, strided<[128, 64, 8, 1], offset: 9>>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : memref<1x2x8x8xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x6x6xf32>) attrs = {schedule = #ember_gpu.window<tile = [4, 8], threads = [4, 2]>} {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @padded
// CHECK:         "gpu.launch_func"({{.*}})
// CHECK-NOT:     "gpu.launch_func"
// CHECK:         "gpu.func"
// CHECK:           ember_gpu.shared : memref<6x10xf32, 3 : i64>
// CHECK:           scf.if %{{.*}} -> (f32) {
// CHECK:             %[[H:.*]] = arith.subi %{{.*}}, %[[ONE:.*]] : index
// CHECK:             %[[W:.*]] = arith.subi %{{.*}}, %[[ONE]] : index
// CHECK:             scf.if %{{.*}} -> (f32) {
// CHECK-NEXT:          memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[H]], %[[W]]] : memref<1x2x6x6xf32>
// CHECK:           "gpu.barrier"() : () -> ()
// CHECK-NOT:       memref<1x2x8x8xf32>
// CHECK:           "gpu.return"
