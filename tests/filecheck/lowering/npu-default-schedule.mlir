// RUN: ember-opt %s --split-input-file -p graph-partition-npu,npu-default-schedule | filecheck %s
// RUN: ember-opt %s --split-input-file -p graph-partition-npu,npu-default-schedule,convert-graph-to-npu | filecheck %s --check-prefix=PROGRAM

// npu-default-schedule: each product of a segment gets the tiling the
// cycle estimate picks, written as #npu.schedule on its op; the vector
// unit's layers get none. convert-graph-to-npu runs what the IR says.

func.func @products(%x: tensor<1x3x8x8xf32>) -> tensor<1x40x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<40x3x3x3xf32>
  %c = graph.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<40x3x3x3xf32>) -> tensor<1x40x8x8xf32>
  %r = graph.relu %c : (tensor<1x40x8x8xf32>) -> tensor<1x40x8x8xf32>
  %s = graph.sum %r, %r : (tensor<1x40x8x8xf32>, tensor<1x40x8x8xf32>) -> tensor<1x40x8x8xf32>
  func.return %s : tensor<1x40x8x8xf32>
}

// 40 filters are 3 row tiles, 8 output rows of 8 columns 8 column tiles:
// one block of all 24 tiles fits two regions.
// CHECK-LABEL: func.func @products(
// CHECK:         graph.conv %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, npu.schedule = #npu.schedule<block = 3x8, buffers = 2, regions = 2>}
// CHECK-NEXT:    graph.relu
// CHECK-NEXT:    graph.sum %{{.*}}, %{{.*}} : (

// -----

// Must not fire: a schedule already written (kept as it is), an op on the
// host. The next segment's product gets the default.
func.func @kept(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<4x4xf32>
  %m = graph.matmul %x, %w {npu.schedule = #npu.schedule<block = 1x1, buffers = 1, regions = 1>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = graph.tanh %m : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = graph.matmul %t, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %h : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @kept(
// CHECK:         graph.matmul %{{.*}}, %{{.*}} {npu.schedule = #npu.schedule<block = 1x1, buffers = 1, regions = 1>}
// CHECK:         %t = graph.tanh %m : (
// CHECK:         graph.matmul %{{.*}}, %{{.*}} {npu.schedule = #npu.schedule<block = 1x1, buffers = 2, regions = 2>}

// One scratchpad buffer: the product's only k step, no relay of slots.
// PROGRAM:       {{^// -{5}$}}
// PROGRAM:       npu.program "npu0" {
// PROGRAM-NEXT:    npu.load {{.*}}, rows = 4 : i64, cols = 4 : i64, to_acc = 0 : i64, elem = 2 : i64}
// PROGRAM-NEXT:    npu.load {{.*}}, push_next}
// PROGRAM-NEXT:    npu.gemm {{.*}}, pop_prev, push_next}
// PROGRAM-NEXT:    npu.store {{.*}}, pop_prev}
// PROGRAM-NEXT:    npu.finish
