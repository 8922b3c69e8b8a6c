// RUN: ember-opt %s --allow-unregistered-dialect | filecheck %s
// RUN: ember-opt %s --allow-unregistered-dialect | ember-opt --allow-unregistered-dialect | filecheck %s

// A depthwise convolution's window schedule prints its two fields, tile
// then threads, whichever order they were written in.

// CHECK: "test.conv"() {schedule = #ember_gpu.window<tile = [16, 32], threads = [16, 8]>}
// CHECK: "test.conv"() {schedule = #ember_gpu.window<tile = [8, 8], threads = [4, 4]>}
"test.conv"() {schedule = #ember_gpu.window<tile = [16, 32], threads = [16, 8]>} : () -> ()
"test.conv"() {schedule = #ember_gpu.window<threads = [4, 4], tile = [8, 8]>} : () -> ()
