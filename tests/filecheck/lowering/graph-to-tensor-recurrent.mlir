// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s
// RUN: ember-opt %s -p convert-graph-to-tensor,convert-tensor-to-loop | filecheck %s --check-prefix=BUFFERS

// RNN: the input projection of every step is one matmul before the loop;
// one scf.for over the 4 steps carries the state and Y; each step extracts
// its row of the projection, multiplies the state by R^T and applies the
// cell in one generic, then inserts the new state into Y at the step.
func.func @rnn(%x: tensor<4x2x3xf32>) -> (tensor<4x1x2x2xf32>, tensor<1x2x2xf32>) {
  %w = graph.constant dense<[[[1.0, 0.5, -1.0], [0.25, 2.0, 0.0]]]> : tensor<1x2x3xf32>
  %r = graph.constant dense<[[[0.5, -0.5], [1.0, 0.25]]]> : tensor<1x2x2xf32>
  %y, %y_h = graph.rnn %x, %w, %r {hidden_size = 2 : i64} : (tensor<4x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x2xf32>) -> (tensor<4x1x2x2xf32>, tensor<1x2x2xf32>)
  func.return %y, %y_h : tensor<4x1x2x2xf32>, tensor<1x2x2xf32>
}

// CHECK-LABEL: func.func @rnn
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[STEPS:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[RT:.*]] = graph.constant dense<{{\[}}[5.000000e-01, 1.000000e+00], [-5.000000e-01, 2.500000e-01]]> : tensor<2x2xf32>
// CHECK:         %[[XW:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x3xf32>, tensor<3x2xf32>)
// CHECK:         %[[PROJ:.*]] = tensor.reshape %[[XW]](%{{.*}}) : (tensor<8x2xf32>, tensor<4xi64>) -> tensor<4x2x1x2xf32>
// CHECK:         %y_h, %[[Y:.*]] = scf.for %[[T:.*]] = %[[ZERO]] to %[[STEPS]] step %[[ONE]] iter_args(%[[H:.*]] = %{{.*}}, %[[YS:.*]] = %{{.*}}) -> (tensor<1x2x2xf32>, tensor<4x2x2xf32>) {
// CHECK-NEXT:      %[[XT:.*]] = tensor.extract_slice %[[PROJ]][%[[T]], 0, 0, 0] [1, 2, 1, 2] [1, 1, 1, 1]
// CHECK:           %[[HR:.*]] = linalg.matmul ins(%{{.*}}, %[[RT]] : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK:           %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[XT]], %{{.*}} : tensor<1x2x2xf32>, tensor<1x2x1x2xf32>, tensor<2x1x2xf32>)
// CHECK:             math.tanh
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[NEW]] into %[[YS]][%[[T]], 0, 0] [1, 2, 2] [1, 1, 1]
// CHECK-NEXT:      scf.yield %[[NEW]], %[[NEXT]]
// CHECK-NEXT:    }
// CHECK:         %y = tensor.reshape %[[Y]]
// CHECK-NOT:     scf.for

// On buffers the loop carries nothing: the state lives in its output
// buffer and Y in one alloc for the whole loop, the body's allocs stand in
// front of it, and the step is a subview at the induction variable.
// BUFFERS-LABEL: func.func @rnn
// BUFFERS:         %[[YS:.*]] = memref.alloc() : memref<4x2x2xf32>
// BUFFERS:         %[[XT:.*]] = memref.alloc() : memref<1x2x1x2xf32>
// BUFFERS:         %[[NEW:.*]] = memref.alloc() : memref<1x2x2xf32>
// BUFFERS-NEXT:    scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// BUFFERS-NEXT:      %[[ROW:.*]] = memref.subview %{{.*}}[%[[T]], 0, 0, 0] [1, 2, 1, 2] [1, 1, 1, 1] : memref<4x2x1x2xf32> to memref<1x2x1x2xf32, strided<[4, 2, 2, 1], offset: ?>>
// BUFFERS-NEXT:      linalg.copy ins(%[[ROW]] : {{.*}}) outs(%[[XT]] : memref<1x2x1x2xf32>)
// BUFFERS-NOT:       memref.alloc
// BUFFERS:           linalg.generic {{.*}} ins(%out1, %[[XT]], %{{.*}} : {{.*}}) outs(%[[NEW]] : memref<1x2x2xf32>)
// BUFFERS:           %[[AT:.*]] = memref.subview %[[YS]][%[[T]], 0, 0] [1, 2, 2] [1, 1, 1]
// BUFFERS-NEXT:      linalg.copy ins(%[[NEW]] : memref<1x2x2xf32>) outs(%[[AT]] : {{.*}})
// BUFFERS-NEXT:      linalg.copy ins(%[[NEW]] : memref<1x2x2xf32>) outs(%out1 : memref<1x2x2xf32>)
// BUFFERS-NEXT:    }

// LSTM with sequence lengths, in reverse: the steps are reversed per batch
// entry by a gather with a table computed from sequence_lens, the cell
// reads `t < len[b]` (extracted at the step) to keep finished entries'
// states, and Y is gathered back by the same table. The lengths are
// clamped into [0, T] first.
func.func @lstm(%x: tensor<3x2x1xf32>, %lens: tensor<2xi32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>) {
  %w = graph.constant dense<[[[1.0], [0.5], [-1.0], [0.25]]]> : tensor<1x4x1xf32>
  %r = graph.constant dense<[[[0.5], [1.0], [0.25], [-0.5]]]> : tensor<1x4x1xf32>
  %y, %y_h, %y_c = graph.lstm %x, %w, %r, sequence_lens %lens {hidden_size = 1 : i64, direction = "reverse"} : (tensor<3x2x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<2xi32>) -> (tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
  func.return %y, %y_h, %y_c : tensor<3x1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>
}

// CHECK-LABEL: func.func @lstm
// CHECK:         %[[T:.*]] = graph.constant dense<3> : tensor<1xi64>
// CHECK:         %[[REV:.*]] = linalg.generic {{.*}} ins(%[[T]], %lens : tensor<1xi64>, tensor<2xi32>) outs(%{{.*}} : tensor<3x2xi64>)
// CHECK:           linalg.index 0
// CHECK:           arith.minsi
// CHECK:           arith.select
// CHECK:         %[[ACTIVE:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %lens : tensor<1xi64>, tensor<2xi32>) outs(%{{.*}} : tensor<3x2xi1>)
// CHECK:         %[[XR:.*]] = ember_linalg.gather %x[%[[REV]]] {index_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>], data_map = affine_map<(d0, d1, d2)[s0] -> (s0, d1, d2)>}
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<6x1xf32>, tensor<1x4xf32>)
// CHECK:         %y_h, %y_c, %[[Y:.*]] = scf.for %[[T:.*]] = {{.*}} iter_args({{.*}}) -> (tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<3x2x1xf32>) {
// CHECK:           %[[MASK:.*]] = tensor.extract_slice %[[ACTIVE]][%[[T]], 0] [1, 2] [1, 1] : tensor<3x2xi1> to tensor<1x2xi1>
// CHECK:           %{{.*}}, %{{.*}}, %{{.*}} = linalg.generic {{.*}} ins({{.*}}, %[[MASK]] : {{.*}}, tensor<1x2xi1>) outs(
// CHECK-COUNT-3:     arith.select
// CHECK:         ember_linalg.gather %[[Y]][%[[REV]]]
