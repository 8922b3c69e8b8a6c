// RUN: ember-opt %s --split-input-file --parsing-diagnostics --allow-unregistered-dialect | filecheck %s

// Each case breaks one rule of #ember_gpu.window (checked as it parses).

// CHECK: tile = [16, 30] must be whole multiples of [threads[1], threads[0]] = [8, 16]
"test.conv"() {s = #ember_gpu.window<tile = [16, 30], threads = [16, 8]>} : () -> ()

// -----

// CHECK: tile and threads must be two positive sizes, got tile = [16], threads = [16, 8]
"test.conv"() {s = #ember_gpu.window<tile = [16], threads = [16, 8]>} : () -> ()

// -----

// CHECK: tile and threads must be two positive sizes, got tile = [16, 32], threads = [0, 8]
"test.conv"() {s = #ember_gpu.window<tile = [16, 32], threads = [0, 8]>} : () -> ()

// -----

// CHECK: 2048 threads per block, more than 1024
"test.conv"() {s = #ember_gpu.window<tile = [32, 64], threads = [64, 32]>} : () -> ()

// -----

// CHECK: each thread would compute 8 x 16 outputs, more than 64
"test.conv"() {s = #ember_gpu.window<tile = [64, 256], threads = [16, 8]>} : () -> ()

// -----

// CHECK: ember_gpu.window: threads required
"test.conv"() {s = #ember_gpu.window<tile = [16, 32]>} : () -> ()
