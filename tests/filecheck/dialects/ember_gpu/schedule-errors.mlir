// RUN: ember-opt %s --split-input-file --parsing-diagnostics --allow-unregistered-dialect | filecheck %s

// Each case breaks one rule of #ember_gpu.schedule (checked as it parses).

// CHECK: block = [64, 60] must be whole multiples of [threads[1], threads[0]] = [16, 16]
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 60], threads = [16, 16], k_tile = 16>} : () -> ()

// -----

// CHECK: m, n and k must be non-empty and name distinct dims, got m = [0], n = [0], k = [2]
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [0], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} : () -> ()

// -----

// CHECK: m, n and k must be non-empty and name distinct dims, got m = [0], n = [], k = [2]
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} : () -> ()

// -----

// CHECK: 2048 threads per block, more than 1024
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [32, 64], k_tile = 16>} : () -> ()

// -----

// CHECK: each thread would accumulate 16 x 16 outputs, more than 64
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [128, 128], threads = [8, 8], k_tile = 16>} : () -> ()

// -----

// CHECK: the staged tiles (64 x 3 and 3 x 64, in loads of 1 and 1) must split evenly among the 256 threads
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 3>} : () -> ()

// -----

// CHECK: the staged tiles need 65536 bytes of shared memory, more than 49152
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [128, 128], threads = [16, 16], k_tile = 64>} : () -> ()

// -----

// CHECK: vector must be two widths out of [1, 2, 4], got [8, 1]
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [8, 1]>} : () -> ()

// -----

// CHECK: stages must be one of [1, 2], got 3
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, stages = 3>} : () -> ()

// -----

// CHECK: vector = [4, 1] must divide the tiles' rows of k_tile = 2 and block[1] = 64 elements
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [128, 64], threads = [16, 16], k_tile = 2, vector = [4, 1]>} : () -> ()

// -----

// A 32 x 16 tile is 128 loads of 4: fewer than the 256 threads.

// CHECK: the staged tiles (32 x 16 and 16 x 64, in loads of 4 and 4) must split evenly among the 256 threads
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [32, 64], threads = [16, 16], k_tile = 16, vector = [4, 4]>} : () -> ()

// -----

// Two stages double the tiles: 2 x (64 + 64) x 64 x 4 bytes.

// CHECK: the staged tiles need 65536 bytes of shared memory, more than 49152
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 64, stages = 2>} : () -> ()

// -----

// CHECK: ember_gpu.schedule: k_tile required
"test.op"() {s = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16]>} : () -> ()

// -----

// #ember_gpu.reduce's threads halve down to one: a power of two, at least a
// warp, at most CUDA's 1024.

// CHECK: ember_gpu.reduce: threads must be a power of two from 32 to 1024, got 48
"test.op"() {s = #ember_gpu.reduce<threads = 48>} : () -> ()

// -----

// CHECK: ember_gpu.reduce: threads must be a power of two from 32 to 1024, got 16
"test.op"() {s = #ember_gpu.reduce<threads = 16>} : () -> ()

// -----

// CHECK: ember_gpu.reduce: threads must be a power of two from 32 to 1024, got 2048
"test.op"() {s = #ember_gpu.reduce<threads = 2048>} : () -> ()

// -----

// Several rows a block are a warp each.

// CHECK: ember_gpu.reduce: rows must be 1, or with threads = 32 (a warp a row) at most 32, got rows = 4 with threads = 64
"test.op"() {s = #ember_gpu.reduce<threads = 64, rows = 4>} : () -> ()

// -----

// CHECK: ember_gpu.reduce: rows must be 1, or with threads = 32 (a warp a row) at most 32, got rows = 64 with threads = 32
"test.op"() {s = #ember_gpu.reduce<threads = 32, rows = 64>} : () -> ()

// -----

// CHECK: Expected 'threads' (the ember_gpu.reduce field)
"test.op"() {s = #ember_gpu.reduce<block = 256>} : () -> ()
