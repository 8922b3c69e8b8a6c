// RUN: ember-opt %s -p loop-fuse-epilogues --split-input-file | filecheck %s
// RUN: ember-opt %s -p loop-fuse-epilogues,loop-generate --split-input-file | filecheck %s --check-prefix=LOOPS

// Fires: matmul + bias (per column, read as a vector) + Relu (a constant in
// the body, splat once per block). The blocks store max(acc + c, 0) into
// %out; the bias and Relu generics and the buffers %y, %z are gone.
func.func @matmul_bias_relu(%a: memref<6x3xf32>, %b: memref<3x16xf32>, %c: memref<16xf32>, %out: memref<6x16xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<6x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%zero : f32) outs(%y : memref<6x16xf32>)
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<6x3xf32>, memref<3x16xf32>) outs(%y : memref<6x16xf32>)
    %z = memref.alloc() : memref<6x16xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %c : memref<6x16xf32>, memref<16xf32>) outs(%z : memref<6x16xf32>) {
    ^bb0(%0: f32, %1: f32, %2: f32):
      %3 = arith.addf %0, %1 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%z : memref<6x16xf32>) outs(%out : memref<6x16xf32>) {
    ^bb0(%4: f32, %5: f32):
      %6 = arith.constant 0.000000e+00 : f32
      %7 = arith.maximumf %4, %6 : f32
      linalg.yield %7 : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK:         linalg.matmul {{.*}}, loop.epilogue = 2 : i64}

// LOOPS-LABEL: func.func @matmul_bias_relu
// LOOPS-NOT:     memref.alloc
// LOOPS:         scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// LOOPS:         }
// LOOPS-NEXT:    %[[C0:.*]] = vector.load %c[%[[COL:.*]]] : memref<16xf32>, vector<8xf32>
// LOOPS-NEXT:    %[[SUM:.*]] = arith.addf %{{.*}}, %[[C0]] : vector<8xf32>
// LOOPS-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// LOOPS-NEXT:    %[[ZEROS:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<8xf32>
// LOOPS-NEXT:    %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[ZEROS]] : vector<8xf32>
// LOOPS-NEXT:    vector.store %[[RELU]], %out[%{{.*}}, %[[COL]]] : memref<6x16xf32>, vector<8xf32>
// LOOPS:         arith.maximumf %{{.*}}, %[[ZEROS]] : vector<8xf32>
// LOOPS-COUNT-2: vector.store %{{.*}}, %out
// LOOPS-NOT:     linalg.generic
// LOOPS-NOT:     memref.store
// LOOPS:         func.return

// -----

// Fires: an NCHW convolution (m = f, n = ow) + bias per channel (a scalar
// broadcast once per row of the block) + residual add (read as vectors
// at the block's positions) + Relu: loop.epilogue = 3.
func.func @conv_bias_residual_relu(%x: memref<1x4x3x18xf32>, %w: memref<4x4x3x3xf32>, %bias: memref<4xf32>, %skip: memref<1x4x1x16xf32>, %out: memref<1x4x1x16xf32>) {
  loop.kernel "conv" {
    %y = memref.alloc() : memref<1x4x1x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%zero : f32) outs(%y : memref<1x4x1x16xf32>)
    linalg.conv_2d_nchw_fchw {schedule = #loop.schedule<order = [0, 1, 2, 4, 5, 6, 3], parallel = [0, 1, 2, 3], vector = 8, micro = [1, 3, 2, 16]>, strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x4x3x18xf32>, memref<4x4x3x3xf32>) outs(%y : memref<1x4x1x16xf32>)
    %biased = memref.alloc() : memref<1x4x1x16xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %bias : memref<1x4x1x16xf32>, memref<4xf32>) outs(%biased : memref<1x4x1x16xf32>) {
    ^bb0(%0: f32, %1: f32, %2: f32):
      %3 = arith.addf %0, %1 : f32
      linalg.yield %3 : f32
    }
    %sum = memref.alloc() : memref<1x4x1x16xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%biased, %skip : memref<1x4x1x16xf32>, memref<1x4x1x16xf32>) outs(%sum : memref<1x4x1x16xf32>) {
    ^bb0(%4: f32, %5: f32, %6: f32):
      %7 = arith.addf %4, %5 : f32
      linalg.yield %7 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : memref<1x4x1x16xf32>) outs(%out : memref<1x4x1x16xf32>) {
    ^bb0(%8: f32, %9: f32):
      %10 = arith.constant 0.000000e+00 : f32
      %11 = arith.maximumf %8, %10 : f32
      linalg.yield %11 : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @conv_bias_residual_relu
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}}, loop.epilogue = 3 : i64,

// LOOPS-LABEL: func.func @conv_bias_residual_relu
// LOOPS-NOT:     memref.alloc
// LOOPS:         scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// LOOPS:         %[[B:.*]] = memref.load %bias[%[[F:.*]]] : memref<4xf32>
// LOOPS-NEXT:    %[[BS:.*]] = vector.broadcast %[[B]] : f32 to vector<8xf32>
// LOOPS-NEXT:    %[[Y:.*]] = arith.addf %{{.*}}, %[[BS]] : vector<8xf32>
// LOOPS-NEXT:    %[[S:.*]] = vector.load %skip[%{{.*}}, %[[F]], %{{.*}}, %{{.*}}] : memref<1x4x1x16xf32>, vector<8xf32>
// LOOPS-NEXT:    %[[SUM:.*]] = arith.addf %[[Y]], %[[S]] : vector<8xf32>
// LOOPS:         %[[R:.*]] = arith.maximumf %[[SUM]], %{{.*}} : vector<8xf32>
// LOOPS-NEXT:    vector.store %[[R]], %out[%{{.*}}, %[[F]], %{{.*}}, %{{.*}}] : memref<1x4x1x16xf32>, vector<8xf32>
// The second vector of the row reuses the bias.
// LOOPS-NEXT:    arith.addf %{{.*}}, %[[BS]] : vector<8xf32>
// LOOPS-NOT:     linalg.generic
// LOOPS:         func.return

// -----

// Must not fire: the bias add's result is also read after the Relu, so
// the Relu is not part of the epilogue (the bias add still is: %z
// is written, from the blocks).
func.func @used_elsewhere(%a: memref<4x3xf32>, %b: memref<3x16xf32>, %c: memref<16xf32>, %out: memref<4x16xf32>, %also: memref<4x16xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<4x16xf32>
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32>) outs(%y : memref<4x16xf32>)
    %z = memref.alloc() : memref<4x16xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %c : memref<4x16xf32>, memref<16xf32>) outs(%z : memref<4x16xf32>) {
    ^bb0(%0: f32, %1: f32, %2: f32):
      %3 = arith.addf %0, %1 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%z : memref<4x16xf32>) outs(%out : memref<4x16xf32>) {
    ^bb0(%4: f32, %5: f32):
      %6 = arith.constant 0.000000e+00 : f32
      %7 = arith.maximumf %4, %6 : f32
      linalg.yield %7 : f32
    }
    linalg.copy ins(%z : memref<4x16xf32>) outs(%also : memref<4x16xf32>)
  }
  func.return
}

// CHECK-LABEL: func.func @used_elsewhere
// CHECK:         linalg.matmul {{.*}}, loop.epilogue = 1 : i64}

// -----

// Must not fire: the generic after the matmul is a reduction (a row sum),
// the output of the next one is read through a map that is not the
// identity (a transpose), and the bias read along n is not its last index
// (a broadcast along the vector dim that is not contiguous).
func.func @reduction(%a: memref<4x3xf32>, %b: memref<3x16xf32>, %out: memref<4xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<4x16xf32>
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32>) outs(%y : memref<4x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<4x16xf32>) outs(%out : memref<4xf32>) {
    ^bb0(%0: f32, %1: f32):
      %2 = arith.addf %0, %1 : f32
      linalg.yield %2 : f32
    }
  }
  func.return
}

func.func @transposed(%a: memref<4x3xf32>, %b: memref<3x16xf32>, %out: memref<16x4xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<4x16xf32>
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32>) outs(%y : memref<4x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<4x16xf32>) outs(%out : memref<16x4xf32>) {
    ^bb0(%0: f32, %1: f32):
      linalg.yield %0 : f32
    }
  }
  func.return
}

func.func @strided_bias(%a: memref<4x3xf32>, %b: memref<3x16xf32>, %c: memref<16x2xf32>, %out: memref<4x16xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<4x16xf32>
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32>) outs(%y : memref<4x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %c : memref<4x16xf32>, memref<16x2xf32>) outs(%out : memref<4x16xf32>) {
    ^bb0(%0: f32, %1: f32, %2: f32):
      %3 = arith.addf %0, %1 : f32
      linalg.yield %3 : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @reduction
// CHECK-NOT:     loop.epilogue
// CHECK-LABEL: func.func @transposed
// CHECK-NOT:     loop.epilogue
// CHECK-LABEL: func.func @strided_bias
// CHECK-NOT:     loop.epilogue
// CHECK:         func.return

// -----

// Must not fire: the columns do not fill whole vectors (12 of 8-wide
// vectors: 4 run the scalar body, which accumulates through memory), and
// an exp (not a lane-by-lane op of VECTOR_OPS) in the body.
func.func @scalar_columns(%a: memref<4x3xf32>, %b: memref<3x12xf32>, %out: memref<4x12xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<4x12xf32>
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x12xf32>) outs(%y : memref<4x12xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<4x12xf32>) outs(%out : memref<4x12xf32>) {
    ^bb0(%0: f32, %1: f32):
      %2 = arith.constant 0.000000e+00 : f32
      %3 = arith.maximumf %0, %2 : f32
      linalg.yield %3 : f32
    }
  }
  func.return
}

func.func @exp(%a: memref<4x3xf32>, %b: memref<3x16xf32>, %out: memref<4x16xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<4x16xf32>
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32>) outs(%y : memref<4x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<4x16xf32>) outs(%out : memref<4x16xf32>) {
    ^bb0(%0: f32, %1: f32):
      %2 = math.exp %0 : f32
      linalg.yield %2 : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @scalar_columns
// CHECK-NOT:     loop.epilogue
// CHECK-LABEL: func.func @exp
// CHECK-NOT:     loop.epilogue
// CHECK:         func.return

// -----

// Must not fire: the residual add writes in place into the residual it
// reads: a block computed twice (the overlapping last block, 5 rows in
// blocks of 2) would find it changed.
func.func @in_place(%a: memref<5x3xf32>, %b: memref<3x16xf32>, %skip: memref<5x16xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<5x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%zero : f32) outs(%y : memref<5x16xf32>)
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<5x3xf32>, memref<3x16xf32>) outs(%y : memref<5x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %skip : memref<5x16xf32>, memref<5x16xf32>) outs(%skip : memref<5x16xf32>) {
    ^bb0(%0: f32, %1: f32, %2: f32):
      %3 = arith.addf %0, %1 : f32
      linalg.yield %3 : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @in_place
// CHECK-NOT:     loop.epilogue
// CHECK:         func.return

// -----

// Fires through a view: a grouped convolution's bias reaches its generic as
// a reinterpret_cast (split into groups) that bufferization placed after
// the contraction. The view takes only a value from before the contraction,
// so it moves before the fill, and the bias add runs in the blocks.
func.func @bias_through_a_view(%a: memref<6x3xf32>, %b: memref<3x16xf32>, %c: memref<2x8xf32>, %out: memref<6x16xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<6x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%zero : f32) outs(%y : memref<6x16xf32>)
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<6x3xf32>, memref<3x16xf32>) outs(%y : memref<6x16xf32>)
    %bias = memref.reinterpret_cast %c to offset: [0], sizes: [16], strides: [1] : memref<2x8xf32> to memref<16xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %bias : memref<6x16xf32>, memref<16xf32>) outs(%out : memref<6x16xf32>) {
    ^bb0(%0: f32, %1: f32, %2: f32):
      %3 = arith.addf %0, %1 : f32
      linalg.yield %3 : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @bias_through_a_view
// CHECK:         %bias = memref.reinterpret_cast %c
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    linalg.matmul {{.*}}, loop.epilogue = 1 : i64}

// LOOPS-LABEL: func.func @bias_through_a_view
// LOOPS:         scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// LOOPS:         vector.load %bias
// LOOPS-NOT:     linalg.generic
// LOOPS:         func.return

// -----

// Must not fire, and nothing moves: the generic after the contraction reads
// its output through a view (%flat), not the buffer the contraction wrote,
// so there is no epilogue, and the view, moved while looking for one, goes
// back where it stood.
func.func @view_of_the_output(%a: memref<6x3xf32>, %b: memref<3x16xf32>, %out: memref<96xf32>) {
  loop.kernel "matmul" {
    %y = memref.alloc() : memref<6x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%zero : f32) outs(%y : memref<6x16xf32>)
    linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>} ins(%a, %b : memref<6x3xf32>, memref<3x16xf32>) outs(%y : memref<6x16xf32>)
    %flat = memref.reinterpret_cast %y to offset: [0], sizes: [96], strides: [1] : memref<6x16xf32> to memref<96xf32>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%flat : memref<96xf32>) outs(%out : memref<96xf32>) {
    ^bb0(%0: f32, %1: f32):
      %2 = arith.negf %0 : f32
      linalg.yield %2 : f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @view_of_the_output
// CHECK:         linalg.fill
// CHECK-NEXT:    linalg.matmul
// CHECK-NOT:     loop.epilogue
// CHECK-NEXT:    %flat = memref.reinterpret_cast %y
