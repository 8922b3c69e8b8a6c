// RUN: ember-opt %s --allow-unregistered-dialect | filecheck %s
// RUN: ember-opt %s --allow-unregistered-dialect | ember-opt --allow-unregistered-dialect | filecheck %s

// A block-tiled contraction's GPU schedule prints every field, in order;
// vector and stages may be left out (1 each).

// CHECK: schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [1, 1], stages = 1>
// CHECK: schedule = #ember_gpu.schedule<m = [1], n = [0, 2, 3], k = [4, 5, 6], block = [32, 128], threads = [32, 8], k_tile = 8, vector = [1, 1], stages = 1>
// CHECK: schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [4, 2], stages = 2>
// CHECK: "test.epilogue"() {schedule = #ember_gpu.epilogue}
"test.op"() {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} : () -> ()
"test.op"() {schedule = #ember_gpu.schedule<k_tile = 8, threads = [32, 8], block = [32, 128], k = [4, 5, 6], n = [0, 2, 3], m = [1]>} : () -> ()
"test.op"() {schedule = #ember_gpu.schedule<stages = 2, vector = [4, 2], m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} : () -> ()
"test.epilogue"() {schedule = #ember_gpu.epilogue} : () -> ()

// A block-per-row reduction's schedule: its threads per block; a
// warp-per-row one's rows per block too (rows = 1 is left out).

// CHECK: "test.reduce"() {schedule = #ember_gpu.reduce<threads = 256>}
// CHECK: "test.reduce"() {schedule = #ember_gpu.reduce<threads = 32>}
// CHECK: "test.reduce"() {schedule = #ember_gpu.reduce<threads = 32, rows = 8>}
// CHECK: "test.reduce"() {schedule = #ember_gpu.reduce<threads = 32>}
"test.reduce"() {schedule = #ember_gpu.reduce<threads = 256>} : () -> ()
"test.reduce"() {schedule = #ember_gpu.reduce<threads = 32>} : () -> ()
"test.reduce"() {schedule = #ember_gpu.reduce<threads = 32, rows = 8>} : () -> ()
"test.reduce"() {schedule = #ember_gpu.reduce<threads = 32, rows = 1>} : () -> ()
