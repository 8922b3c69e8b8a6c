// RUN: rm -f %t.sqlite
// RUN: ember-opt %s -p 'graph-partition-npu,npu-apply-records{records="%t.sqlite"},npu-default-schedule' | filecheck %s
// RUN: ember-opt %s -p 'graph-partition-npu,npu-apply-records,npu-default-schedule' | filecheck %s

// npu-apply-records: a product whose task the records hold gets the
// fastest recorded schedule, marked npu.tuned (tests/tuning/test_npu_tune.py
// tunes a model and applies its records). Must not fire: records that hold
// nothing for this NPU (a new file), no records file at all. The products
// keep the default that npu-default-schedule writes after it.

func.func @products(%x: tensor<1x3x8x8xf32>) -> tensor<1x40x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<40x3x3x3xf32>
  %c = graph.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<40x3x3x3xf32>) -> tensor<1x40x8x8xf32>
  func.return %c : tensor<1x40x8x8xf32>
}

// CHECK-LABEL: func.func @products(
// CHECK-NOT:     npu.tuned
// CHECK:         graph.conv %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, npu.schedule = #npu.schedule<block = 3x8, buffers = 2, regions = 2>}
// CHECK-NOT:     npu.tuned
