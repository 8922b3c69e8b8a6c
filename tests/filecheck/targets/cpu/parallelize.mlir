// RUN: ember-opt %s -p 'loop-parallelize{threads=4 min-work=1000}' --split-input-file | filecheck %s
// RUN: ember-opt %s -p 'loop-parallelize{threads=1 min-work=1000}' --split-input-file | filecheck %s --check-prefix=ONE

// One thread outlines nothing, whatever the loops.
// ONE-NOT: ember.parallel_threads
// ONE-NOT: ember.parallel_body

// A 256-iteration parallel loop around another: 256 rows give 4 threads
// their chunks, so only the outer dim is split; the inner parallel loop
// stays in the body, where it runs serially. The captured buffers and the
// scalar become arguments (in first-use order), the constants are copied.
func.func @rows(%a: memref<256x64xf32>, %out: memref<256x64xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  "scf.parallel"(%c0, %c256, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      %x = memref.load %a[%i, %j] : memref<256x64xf32>
      %y = arith.mulf %x, %s : f32
      memref.store %y, %out[%i, %j] : memref<256x64xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @rows(
// CHECK:         %[[N:[0-9]+]] = arith.constant 256 : index
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    func.call @rows_parallel0(%a, %s, %out, %[[ZERO]], %[[N]]) {ember.parallel_threads = 4 : i64} : (memref<256x64xf32>, f32, memref<256x64xf32>, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @rows_parallel0(%0: memref<256x64xf32>, %1: f32, %2: memref<256x64xf32>, %3: index, %4: index) attributes {ember.kernel, ember.parallel_body} {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c64 = arith.constant 64 : index
// CHECK-NEXT:    %[[STEP:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:[a-z0-9]+]] = %3 to %4 step %[[STEP]] {
// CHECK-NEXT:      "scf.parallel"(%c0, %c64, %c1)
// CHECK-NEXT:      ^bb0(%j: index):
// CHECK-NEXT:        %x = memref.load %0[%[[I]], %j] : memref<256x64xf32>
// CHECK-NEXT:        %y = arith.mulf %x, %1 : f32
// CHECK-NEXT:        memref.store %y, %2[%[[I]], %j] : memref<256x64xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      })
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// -----

// Four rows are too few chunks for 4 threads: the band's two dims are
// linearised (4 x 64 = 256 iterations) and each index recovered from the
// linear one, the inner dim varying fastest; lower bounds and steps apply.
func.func @band(%out: memref<8x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c4, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %c128, %c2) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      memref.store %zero, %out[%i, %j] : memref<8x128xf32>
      memref.store %zero, %out[%i, %j] : memref<8x128xf32>
      memref.store %zero, %out[%i, %j] : memref<8x128xf32>
      memref.store %zero, %out[%i, %j] : memref<8x128xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @band(
// CHECK:         %[[N:[0-9]+]] = arith.constant 256 : index
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    func.call @band_parallel0(%out, %[[ZERO]], %[[N]]) {ember.parallel_threads = 4 : i64}
// CHECK:       func.func private @band_parallel0(%0: memref<8x128xf32>, %1: index, %2: index)
// CHECK-DAG:     %c2 = arith.constant 2 : index
// CHECK-DAG:     %c4 = arith.constant 4 : index
// CHECK-DAG:     %zero = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[INNER:[0-9]+]] = arith.constant 64 : index
// CHECK:         scf.for %[[L:[a-z0-9]+]] = %1 to %2 step
// CHECK-NEXT:      %[[JL:[0-9]+]] = arith.remui %[[L]], %[[INNER]] : index
// CHECK-NEXT:      %[[IL:[0-9]+]] = arith.divui %[[L]], %[[INNER]] : index
// CHECK-NEXT:      %j = arith.muli %[[JL]], %c2 : index
// CHECK-NEXT:      %i = arith.addi %c4, %[[IL]] : index
// CHECK-NEXT:      memref.store %zero, %0[%i, %j] : memref<8x128xf32>
// CHECK-NOT:     scf.parallel

// -----

// A batch of one cannot be split: the loops inside it are launched instead,
// each on its own, inside the batch loop (whose index they capture).
func.func @batch_of_one(%a: memref<1x64x64xf32>, %b: memref<1x64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%n: index):
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%j: index):
        memref.store %zero, %a[%n, %i, %j] : memref<1x64x64xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%j: index):
        memref.store %zero, %b[%n, %i, %j] : memref<1x64x64xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @batch_of_one(
// CHECK:         "scf.parallel"(%c0, %c1, %c1)
// CHECK-NEXT:    ^bb0(%n: index):
// CHECK:           func.call @batch_of_one_parallel0(%a, %n, %{{.*}}, %{{.*}}) {ember.parallel_threads = 4 : i64}
// CHECK:           func.call @batch_of_one_parallel1(%b, %n, %{{.*}}, %{{.*}}) {ember.parallel_threads = 4 : i64}
// CHECK-NEXT:      scf.reduce
// CHECK:       func.func private @batch_of_one_parallel0(%0: memref<1x64x64xf32>, %1: index, %2: index, %3: index)
// CHECK:           memref.store %zero, %0[%1, %i, %j] : memref<1x64x64xf32>
// CHECK:       func.func private @batch_of_one_parallel1(%0: memref<1x64x64xf32>, %1: index, %2: index, %3: index)

// -----

// Too little work for a launch (64 x 4 ops < min-work): left alone, and so
// are the loops inside it. A parallel loop inside a sequential one is
// launched once per iteration when it is worth it.
func.func @grain(%a: memref<64x4xf32>, %big: memref<16x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      memref.store %zero, %a[%i, %j] : memref<64x4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  scf.for %k = %c0 to %c16 step %c1 {
    "scf.parallel"(%c0, %c4096, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      memref.store %zero, %big[%k, %j] : memref<16x4096xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}

// CHECK-LABEL: func.func @grain(
// CHECK:         "scf.parallel"(%c0, %c64, %c1)
// CHECK:           "scf.parallel"(%c0, %c4, %c1)
// CHECK:         scf.for %k = %c0 to %c16 step %c1 {
// CHECK-NEXT:      %[[N:[0-9]+]] = arith.constant 4096 : index
// CHECK-NEXT:      %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      func.call @grain_parallel0(%big, %k, %[[ZERO]], %[[N]]) {ember.parallel_threads = 4 : i64}
// CHECK-NEXT:    }
// CHECK:       func.func private @grain_parallel0(
// CHECK-NOT:   func.func

// -----

// Bounds unknown at compile time: the range is computed at run time as
// scf counts iterations, max(0, ceil((upper - lower) / step)), and the
// dynamic loop counts as worth a launch.
func.func @dynamic(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %zero, %out[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @dynamic(
// CHECK:         %[[SPAN:[0-9]+]] = arith.subi %n, %c0 : index
// CHECK-NEXT:    %[[TRIPS:[0-9]+]] = arith.ceildivsi %[[SPAN]], %c1 : index
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:[0-9]+]] = arith.maxsi %[[TRIPS]], %[[ZERO]] : index
// CHECK-NEXT:    func.call @dynamic_parallel0(%n, %out, %[[ZERO]], %[[N]]) {ember.parallel_threads = 4 : i64} : (index, memref<?xf32>, index, index) -> ()
// CHECK:       func.func private @dynamic_parallel0(%0: index, %1: memref<?xf32>, %2: index, %3: index)
// CHECK-NOT:     arith.ceildivsi
// CHECK:         scf.for %i = %2 to %3 step

// -----

// A parallel loop with a reduction (results) is left alone.
func.func @reduction(%a: memref<100000xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100000 = arith.constant 100000 : index
  %init = arith.constant 0.0 : f32
  %sum = "scf.parallel"(%c0, %c100000, %c1, %init) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<100000xf32>
    scf.reduce(%x : f32) {
    ^bb1(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }) : (index, index, index, f32) -> f32
  func.return %sum : f32
}

// CHECK-LABEL: func.func @reduction(
// CHECK-NOT:     func.call
// CHECK:         "scf.parallel"

// -----

// A thread is handed buffers and scalars; a loop that captures a vector
// (not made by a constant, which would be copied in) stays serial.
func.func @vector_capture(%out: memref<4096x8xf32>, %v: vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  "scf.parallel"(%c0, %c4096, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = vector.extract %v[0] : f32 from vector<8xf32>
    memref.store %x, %out[%i, %c0] : memref<4096x8xf32>
    memref.store %x, %out[%i, %c1] : memref<4096x8xf32>
    memref.store %x, %out[%i, %c1] : memref<4096x8xf32>
    memref.store %x, %out[%i, %c1] : memref<4096x8xf32>
    memref.store %x, %out[%i, %c1] : memref<4096x8xf32>
    memref.store %x, %out[%i, %c1] : memref<4096x8xf32>
    memref.store %x, %out[%i, %c1] : memref<4096x8xf32>
    memref.store %x, %out[%i, %c1] : memref<4096x8xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @vector_capture(
// CHECK-NOT:     func.call
// CHECK:         "scf.parallel"(%c0, %c4096, %c1)

// -----

// A run-time number of rows may be 1 (a batch of one): the band is
// linearised over the columns as well, its size computed at run time.
func.func @run_time_rows(%out: memref<?x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %out, %c0 : memref<?x128xf32>
  "scf.parallel"(%c0, %rows, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %c128, %c2) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      memref.store %zero, %out[%i, %j] : memref<?x128xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @run_time_rows(
// CHECK:         %[[ROWS:.*]] = arith.maxsi
// CHECK-NEXT:    %[[INNER:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:    %[[N:[0-9]+]] = arith.muli %[[ROWS]], %[[INNER]] : index
// CHECK-NEXT:    func.call @run_time_rows_parallel0(%rows, %out, %{{.*}}, %[[N]]) {ember.parallel_threads = 4 : i64}
// CHECK:       func.func private @run_time_rows_parallel0(
// CHECK:           %i = arith.divui
// CHECK-NEXT:      %j = arith.muli

// -----

// A grouped operation nests its 4 groups outside its 64 rows, but writes
// out[row, group, channel]: the rows vary slowest in the linear range, so
// each thread's share of chunks is a run of whole rows (two threads split
// by groups both wrote the cache line across a boundary of 34 floats in
// every row).
func.func @groups_outside_rows(%in: memref<64x4x34xf32>, %out: memref<64x4x34xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%g: index):
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %in[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      memref.store %x, %out[%i, %g, %c0] : memref<64x4x34xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @groups_outside_rows(
// CHECK:       func.func private @groups_outside_rows_parallel0(
// CHECK:         %[[GROUPS:[0-9]+]] = arith.constant 4 : index
// CHECK:         scf.for %[[L:[a-z0-9]+]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %g = arith.remui %[[L]], %[[GROUPS]] : index
// CHECK-NEXT:      %i = arith.divui %[[L]], %[[GROUPS]] : index
// CHECK-NOT:     scf.parallel

// -----

// Two column blocks of 64 (a packed weight's block number computed between
// the loops) around 64 rows: the block number moves into the row loop, so
// the two loops form a band, and the blocks, too few for 4 threads' chunks,
// vary fastest in the linear range: each thread's share of consecutive
// chunks is a run of rows, both blocks of each, as a kernel before it
// splitting rows left them in its cache. Each thread reads all of the
// weight, which is smaller than the rows' input (64 against 8192 bytes).
func.func @column_blocks(%in: memref<64x32xf32>, %w: memref<2x8xf32>, %out: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  "scf.parallel"(%c0, %c128, %c64) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %block = arith.divui %j, %c64 : index
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %a = memref.load %in[%i, %c0] : memref<64x32xf32>
      %b = memref.load %w[%block, %c0] : memref<2x8xf32>
      %x = arith.addf %a, %b : f32
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @column_blocks(
// CHECK:         %[[N:[0-9]+]] = arith.constant 128 : index
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    func.call @column_blocks_parallel0(%in, %w, %out, %[[ZERO]], %[[N]]) {ember.parallel_threads = 4 : i64}
// CHECK:       func.func private @column_blocks_parallel0(
// CHECK-DAG:     %c64 = arith.constant 64 : index
// CHECK-DAG:     %[[BLOCKS:[0-9]+]] = arith.constant 2 : index
// CHECK:         scf.for %[[L:[a-z0-9]+]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[JL:[0-9]+]] = arith.remui %[[L]], %[[BLOCKS]] : index
// CHECK-NEXT:      %i = arith.divui %[[L]], %[[BLOCKS]] : index
// CHECK-NEXT:      %j = arith.muli %[[JL]], %c64 : index
// CHECK-NEXT:      %block = arith.divui %j, %c64 : index
// CHECK-NOT:     scf.parallel

// -----

// The same band with a weight larger than the input (32768 against 2048
// bytes, as in a 1x1 convolution from 512 to 1000 channels on a 13x13
// image): the blocks stay the slowest dim, so each thread's share is a run
// of rows of one block, and each thread reads only its blocks' weight.
func.func @column_blocks_of_a_large_weight(%in: memref<64x8xf32>, %w: memref<2x4096xf32>, %out: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  "scf.parallel"(%c0, %c128, %c64) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %block = arith.divui %j, %c64 : index
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %a = memref.load %in[%i, %c0] : memref<64x8xf32>
      %b = memref.load %w[%block, %c0] : memref<2x4096xf32>
      %x = arith.addf %a, %b : f32
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      memref.store %x, %out[%i, %j] : memref<64x128xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @column_blocks_of_a_large_weight(
// CHECK:       func.func private @column_blocks_of_a_large_weight_parallel0(
// CHECK-DAG:     %c64 = arith.constant 64 : index
// CHECK-DAG:     %[[ROWS:[0-9]+]] = arith.constant 64 : index
// CHECK:         scf.for %[[L:[a-z0-9]+]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %i = arith.remui %[[L]], %[[ROWS]] : index
// CHECK-NEXT:      %[[JL:[0-9]+]] = arith.divui %[[L]], %[[ROWS]] : index
// CHECK-NEXT:      %j = arith.muli %[[JL]], %c64 : index
// CHECK-NEXT:      %block = arith.divui %j, %c64 : index
// CHECK-NOT:     scf.parallel

// -----

// A load between the loops is not index arithmetic: it stays, the two loops
// form no band, and the two column blocks (fewer than the threads) are not
// split: each block's row loop is launched on its own.
func.func @load_between(%scale: memref<128xf32>, %out: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  "scf.parallel"(%c0, %c128, %c64) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %s = memref.load %scale[%j] : memref<128xf32>
    "scf.parallel"(%c0, %c256, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      memref.store %s, %out[%i, %j] : memref<256x128xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @load_between(
// CHECK:         "scf.parallel"(%c0, %c128, %c64)
// CHECK-NEXT:    ^bb0(%j: index):
// CHECK-NEXT:      %s = memref.load %scale[%j] : memref<128xf32>
// CHECK:           func.call @load_between_parallel0(%s, %out, %j, %{{.*}}, %{{.*}}) {ember.parallel_threads = 4 : i64}
