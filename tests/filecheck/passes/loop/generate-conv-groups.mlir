// RUN: ember-opt %s -p convert-tensor-to-loop,loop-generate | filecheck %s

// A grouped convolution, as convert-graph-to-tensor makes it: one generic
// (2 groups of 2 input channels, 3 filters per group) whose input channel is
// (f floordiv 3) * 2 + c, with c (the channel within the group), kh, kw the
// reduction loops. Stride and dilation 1 leave the spatial index as oh + kh,
// ow + kw.
func.func @conv_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x6x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (((d1 floordiv 3) * 2) + d4), (d2 + d5), (d3 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) outs(%f : tensor<1x6x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x6x3x3xf32>
  func.return %c : tensor<1x6x3x3xf32>
}

// CHECK-LABEL: func.func @conv_groups(%x: memref<1x4x5x5xf32>, %w: memref<6x2x3x3xf32>, %out0: memref<1x6x3x3xf32>) {
// CHECK:             %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %[[ZERO]], %out0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x6x3x3xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:         ^bb0(%[[N:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[F:.*]]: index):
// CHECK-NEXT:        "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0(%[[OH:.*]]: index):
// CHECK-NEXT:          scf.for %[[C:.*]] = %c0{{(_[0-9]+)?}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:            scf.for %[[KH:.*]] = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:              scf.for %[[KW:.*]] = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:                "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:                ^bb0(%[[OW:.*]]: index):
// CHECK-NEXT:                  %[[PER_GROUP:.*]] = arith.constant 3 : index
// CHECK-NEXT:                  %[[G:.*]] = arith.floordivsi %[[F]], %[[PER_GROUP]] : index
// CHECK-NEXT:                  %[[GC:.*]] = arith.constant 2 : index
// CHECK-NEXT:                  %[[BASE:.*]] = arith.muli %[[G]], %[[GC]] : index
// CHECK-NEXT:                  %[[CH:.*]] = arith.addi %[[BASE]], %[[C]] : index
// CHECK-NEXT:                  %[[H:.*]] = arith.addi %[[OH]], %[[KH]] : index
// CHECK-NEXT:                  %[[W:.*]] = arith.addi %[[OW]], %[[KW]] : index
// CHECK-NEXT:                  %[[IN:.*]] = memref.load %x[%[[N]], %[[CH]], %[[H]], %[[W]]] : memref<1x4x5x5xf32>
// CHECK-NEXT:                  %[[WT:.*]] = memref.load %w[%[[F]], %[[C]], %[[KH]], %[[KW]]] : memref<6x2x3x3xf32>
// CHECK-NEXT:                  %[[ACC:.*]] = memref.load %out0[%[[N]], %[[F]], %[[OH]], %[[OW]]] : memref<1x6x3x3xf32>
// CHECK-NEXT:                  %[[MUL:.*]] = arith.mulf %[[IN]], %[[WT]] : f32
// CHECK-NEXT:                  %[[ADD:.*]] = arith.addf %[[ACC]], %[[MUL]] : f32
// CHECK-NEXT:                  memref.store %[[ADD]], %out0[%[[N]], %[[F]], %[[OH]], %[[OW]]] : memref<1x6x3x3xf32>
// CHECK-NEXT:                  scf.reduce
// CHECK-NEXT:                }) : (index, index, index) -> ()
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.reduce
// CHECK-NEXT:        }) : (index, index, index) -> ()
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:           scf.reduce
// CHECK-NEXT:         }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return
