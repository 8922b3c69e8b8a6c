// RUN: ember-opt %s -p convert-loop-to-gpu --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ember-opt %s -p convert-loop-to-gpu --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST
// RUN: not ember-opt %s -p 'convert-loop-to-gpu{threads=2048}' 2>&1 | filecheck %s --check-prefix=THREADS

// Must not lower: loop-level code convert-loop-to-gpu rejects with a
// one-line diagnostic, never a traceback.

// FIRST: error: convert-loop-to-gpu: memref.load computes a value on the host that later code reads

// THREADS: error: convert-loop-to-gpu: threads must be 1 to 1024, got 2048

// The host cannot compute a value from memory for a kernel to read: kernels
// get arguments, and what pure arithmetic and views make of them.

func.func @host_value(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  loop.kernel {
    memref.store %v, %y[%c0] : memref<4xf32>
  }
  func.return
}

// CHECK: convert-loop-to-gpu: memref.load computes a value on the host that later code reads; the host only launches kernels (and computes sizes and views)

// -----

// A block-tiled schedule on an op that is not a contraction.

func.func @not_a_product(%x: memref<64x64xf32>, %y: memref<64x64xf32>) {
  loop.kernel {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x64xf32>) outs(%y : memref<64x64xf32>) attrs = {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} {
    ^bb0(%a: f32, %b: f32):
      linalg.yield %a : f32
    }
  }
  func.return
}

// CHECK: convert-loop-to-gpu: linalg.generic {{.*}} cannot run as #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [1, 1], stages = 1>: its body is not a sum of products (out + a * b)

// -----

// Buffers must be planned into the arena before kernels are made of the code.

func.func @unplanned(%x: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  loop.kernel {
    linalg.copy ins(%x : memref<4xf32>) outs(%t : memref<4xf32>)
  }
  func.return
}

// CHECK: convert-loop-to-gpu: a memref.alloc on the host: plan the buffers into the arena first (loop-plan-memory)

// -----

// A block-per-row schedule on a reduction whose body is not one combining
// op folding a value of the inputs into the output.

func.func @not_a_fold(%x: memref<8x64xf32>, %y: memref<8xf32>) {
  loop.kernel {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) attrs = {schedule = #ember_gpu.reduce<threads = 64>} {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.subf %acc, %a : f32
      linalg.yield %r : f32
    }
  }
  func.return
}

// CHECK: convert-loop-to-gpu: linalg.generic {{.*}} cannot run as #ember_gpu.reduce<threads = 64>: its body is not `yield combine(g(inputs...), out)` with combine one of arith.addf, arith.mulf, arith.maximumf, arith.minimumf, arith.maxnumf, arith.minnumf

// -----

// Loads of 4 need each operand contiguous along the tile's inner dims: a
// transposed column operand (64 x 32, read at [j, l]) is contiguous along
// k, not n.

func.func @transposed(%a: memref<64x32xf32>, %b: memref<64x32xf32>, %c: memref<64x64xf32>) {
  loop.kernel {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<64x32xf32>, memref<64x32xf32>) outs(%c : memref<64x64xf32>) attrs = {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [4, 4]>} {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
  }
  func.return
}

// CHECK: convert-loop-to-gpu: linalg.generic {{.*}} the column operand cannot be loaded 4 elements at a time: its innermost dims are not the dims [1], read as they are

// -----

// ... and their extents multiples of the width: 70 columns are not.

func.func @ragged(%a: memref<64x32xf32>, %b: memref<32x70xf32>, %c: memref<64x70xf32>) {
  loop.kernel {
    linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [1, 4]>} ins(%a, %b : memref<64x32xf32>, memref<32x70xf32>) outs(%c : memref<64x70xf32>)
  }
  func.return
}

// CHECK: convert-loop-to-gpu: linalg.matmul into %c in @ragged cannot run as {{.*}} vector = [1, 4], stages = 1>: the column operand cannot be loaded 4 elements at a time: its extent, offset or strides are not multiples of 4

// -----

// A fill marked #ember_gpu.padding runs no kernel of its own: the
// contraction after it must read the buffer it pads as a padded operand,
// which a matmul reading another buffer does not.

func.func @stray_padding(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>, %p: memref<64x34xf32>) {
  loop.kernel {
    %inner = memref.subview %p[0, 1] [64, 32] [1, 1] : memref<64x34xf32> to memref<64x32xf32, strided<[34, 1], offset: 1>>
    %zero = arith.constant 0.0 : f32
    linalg.fill {schedule = #ember_gpu.padding} ins(%zero : f32) outs(%inner : memref<64x32xf32, strided<[34, 1], offset: 1>>)
    linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  }
  func.return
}

// CHECK: convert-loop-to-gpu: linalg.fill into %inner in @stray_padding is marked #ember_gpu.padding, but no tiled contraction after it reads the buffer it pads as a padded operand
