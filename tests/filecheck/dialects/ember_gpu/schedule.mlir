// RUN: ember-opt %s --allow-unregistered-dialect | filecheck %s
// RUN: ember-opt %s --allow-unregistered-dialect | ember-opt --allow-unregistered-dialect | filecheck %s

// A block-tiled contraction's GPU schedule prints every field, in order.

// CHECK: schedule = #ember_gpu.schedule<dims = [0, 1, 2], block = [64, 64], threads = [16, 16], k_tile = 16>
// CHECK: schedule = #ember_gpu.schedule<dims = [1, 2, 3], block = [32, 128], threads = [32, 8], k_tile = 8>
"test.op"() {schedule = #ember_gpu.schedule<dims = [0, 1, 2], block = [64, 64], threads = [16, 16], k_tile = 16>} : () -> ()
"test.op"() {schedule = #ember_gpu.schedule<k_tile = 8, threads = [32, 8], block = [32, 128], dims = [1, 2, 3]>} : () -> ()
