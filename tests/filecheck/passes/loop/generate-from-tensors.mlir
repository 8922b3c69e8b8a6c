// RUN: ember-opt %s -p convert-tensor-to-loop,loop-generate --split-input-file | filecheck %s

// Tensor IR bufferized (convert-tensor-to-loop: structured ops on memrefs,
// lowering/tensor-to-loop.mlir) and then turned into loop nests by
// loop-generate with the default schedule: the loops bufferization has
// always given. Each result becomes one more memref argument (%out0, ...)
// written in place; a computed value that is not returned gets a
// memref.alloc; tensor.empty / linalg.fill are materialised by the op that
// first needs them. Inputs bufferization rejects are in
// lowering/tensor-to-loop-errors.mlir; the grouped conv in
// generate-conv-groups.mlir; scheduled ops in generate-schedule.mlir and
// generate.mlir.

// Elementwise add with a broadcast bias: one parallel loop per dim, the bias
// is loaded with the inner index only, the sum is stored into the output
// argument (no alloc, and the empty destination costs nothing).
func.func @bias_add(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @bias_add(%x: memref<2x3xf32>, %b: memref<3xf32>, %out0: memref<2x3xf32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:        %[[X:.*]] = memref.load %x[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        %[[B:.*]] = memref.load %b[%[[J]]] : memref<3xf32>
// CHECK-NEXT:        %s = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:        memref.store %s, %out0[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// -----

// Matmul: the zero fill is materialised into the destination (the output
// argument) first, then the product accumulates through memory in the order
// m, k, n: the output's last dim runs innermost (contiguous, vectorisable).
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %f_value = arith.constant 0.000000e+00 : f32
  %f_init = tensor.empty() : tensor<4x5xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<4x5xf32>) -> tensor<4x5xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%f : tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %m : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x5xf32>, %out0: memref<4x5xf32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[FI:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[FJ:.*]]: index):
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %[[ZERO]], %out0[%[[FI]], %[[FJ]]] : memref<4x5xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[M:.*]]: index):
// CHECK-NEXT:      scf.for %[[K:.*]] = %c0{{(_[0-9]+)?}} to %c8{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:        "scf.parallel"(%c0{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0(%[[N:.*]]: index):
// CHECK-NEXT:          %[[A:.*]] = memref.load %a[%[[M]], %[[K]]] : memref<4x8xf32>
// CHECK-NEXT:          %[[B:.*]] = memref.load %b[%[[K]], %[[N]]] : memref<8x5xf32>
// CHECK-NEXT:          %[[ACC:.*]] = memref.load %out0[%[[M]], %[[N]]] : memref<4x5xf32>
// CHECK-NEXT:          %[[MUL:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[ADD:.*]] = arith.addf %[[MUL]], %[[ACC]] : f32
// CHECK-NEXT:          memref.store %[[ADD]], %out0[%[[M]], %[[N]]] : memref<4x5xf32>
// CHECK-NEXT:          scf.reduce
// CHECK-NEXT:        }) : (index, index, index) -> ()
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// -----

// Conv2d (one group, stride 2, dilation 2): the input index of each spatial
// dim is o * stride + k * dilation; c, kh, kw are the reduction loops. (The
// grouped case, with a floordiv in the channel index, is in
// generate-conv-groups.mlir.)
func.func @conv(%x: tensor<1x2x7x7xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32> {
  %f_value = arith.constant 0.000000e+00 : f32
  %f_init = tensor.empty() : tensor<1x3x2x2xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {strides = dense<[2, 2]> : tensor<2xi64>, dilations = dense<[2, 2]> : tensor<2xi64>} ins(%x, %w : tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>) outs(%f : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  func.return %c : tensor<1x3x2x2xf32>
}

// CHECK-LABEL: func.func @conv(%x: memref<1x2x7x7xf32>, %w: memref<3x2x3x3xf32>, %out0: memref<1x3x2x2xf32>) {
// CHECK:         memref.store %{{.*}}, %out0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x3x2x2xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:         ^bb0(%[[N:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[F:.*]]: index):
// CHECK-NEXT:        "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0(%[[OH:.*]]: index):
// CHECK-NEXT:          scf.for %[[C:.*]] = %c0{{(_[0-9]+)?}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:            scf.for %[[KH:.*]] = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:              scf.for %[[KW:.*]] = %c0{{(_[0-9]+)?}} to %c3{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:                "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:                ^bb0(%[[OW:.*]]: index):
// CHECK-NEXT:                  %[[S1:.*]] = arith.constant 2 : index
// CHECK-NEXT:                  %[[OHS:.*]] = arith.muli %[[OH]], %[[S1]] : index
// CHECK-NEXT:                  %[[D1:.*]] = arith.constant 2 : index
// CHECK-NEXT:                  %[[KHD:.*]] = arith.muli %[[KH]], %[[D1]] : index
// CHECK-NEXT:                  %[[H:.*]] = arith.addi %[[OHS]], %[[KHD]] : index
// CHECK-NEXT:                  %[[S2:.*]] = arith.constant 2 : index
// CHECK-NEXT:                  %[[OWS:.*]] = arith.muli %[[OW]], %[[S2]] : index
// CHECK-NEXT:                  %[[D2:.*]] = arith.constant 2 : index
// CHECK-NEXT:                  %[[KWD:.*]] = arith.muli %[[KW]], %[[D2]] : index
// CHECK-NEXT:                  %[[W:.*]] = arith.addi %[[OWS]], %[[KWD]] : index
// CHECK-NEXT:                  %[[IN:.*]] = memref.load %x[%[[N]], %[[C]], %[[H]], %[[W]]] : memref<1x2x7x7xf32>
// CHECK-NEXT:                  %[[WT:.*]] = memref.load %w[%[[F]], %[[C]], %[[KH]], %[[KW]]] : memref<3x2x3x3xf32>
// CHECK-NEXT:                  %[[ACC:.*]] = memref.load %out0[%[[N]], %[[F]], %[[OH]], %[[OW]]] : memref<1x3x2x2xf32>
// CHECK-NEXT:                  %[[MUL:.*]] = arith.mulf %[[IN]], %[[WT]] : f32
// CHECK-NEXT:                  %[[ADD:.*]] = arith.addf %[[MUL]], %[[ACC]] : f32
// CHECK-NEXT:                  memref.store %[[ADD]], %out0[%[[N]], %[[F]], %[[OH]], %[[OW]]] : memref<1x3x2x2xf32>
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

// -----

// Max pooling (a generic, as convert-graph-to-tensor makes it): the -inf-like
// fill goes into the output, the window dims are reduction loops, and the
// window tensor that gives (kh, kw) their extent gets no buffer at all (its
// body argument is never read).
func.func @pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %f_value = arith.constant -3.400000e+38 : f32
  %f_init = tensor.empty() : tensor<1x2x2x2xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %window : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%f : tensor<1x2x2x2xf32>) {
  ^bb0(%v: f32, %k: f32, %acc: f32):
    %m = arith.maxnumf %acc, %v : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2xf32>
  func.return %p : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @pool(%x: memref<1x2x4x4xf32>, %out0: memref<1x2x2x2xf32>) {
// CHECK-NOT:     memref.alloc
// CHECK:         %[[LOW:.*]] = arith.constant -3.400000e+38 : f32
// CHECK-NEXT:    memref.store %[[LOW]], %out0[
// CHECK-NOT:     memref.alloc
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:         ^bb0(%[[N:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[C:.*]]: index):
// CHECK-NEXT:        "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:        ^bb0(%[[OH:.*]]: index):
// CHECK-NEXT:          scf.for %[[KH:.*]] = %c0{{(_[0-9]+)?}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:            scf.for %[[KW:.*]] = %c0{{(_[0-9]+)?}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT:              "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:              ^bb0(%[[OW:.*]]: index):
// CHECK-NEXT:                %[[S1:.*]] = arith.constant 2 : index
// CHECK-NEXT:                %[[OHS:.*]] = arith.muli %[[OH]], %[[S1]] : index
// CHECK-NEXT:                %[[H:.*]] = arith.addi %[[OHS]], %[[KH]] : index
// CHECK-NEXT:                %[[S2:.*]] = arith.constant 2 : index
// CHECK-NEXT:                %[[OWS:.*]] = arith.muli %[[OW]], %[[S2]] : index
// CHECK-NEXT:                %[[W:.*]] = arith.addi %[[OWS]], %[[KW]] : index
// CHECK-NEXT:                %[[IN:.*]] = memref.load %x[%[[N]], %[[C]], %[[H]], %[[W]]] : memref<1x2x4x4xf32>
// CHECK-NEXT:                %[[ACC:.*]] = memref.load %out0[%[[N]], %[[C]], %[[OH]], %[[OW]]] : memref<1x2x2x2xf32>
// CHECK-NEXT:                %[[MAX:.*]] = arith.maxnumf %[[ACC]], %[[IN]] : f32
// CHECK-NEXT:                memref.store %[[MAX]], %out0[%[[N]], %[[C]], %[[OH]], %[[OW]]] : memref<1x2x2x2xf32>
// CHECK-NEXT:                scf.reduce
// CHECK-NEXT:              }) : (index, index, index) -> ()
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.reduce
// CHECK-NEXT:        }) : (index, index, index) -> ()
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:           scf.reduce
// CHECK-NEXT:         }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// Pad: fill loops over the border, slab by slab (the row above; within the
// source's rows, the two columns left of it and the one right of it), then
// a copy of the source into the interior, each index shifted by its low
// padding (none for a 0 low).
func.func @pad(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %p = tensor.pad %x low[1, 2] high[0, 1] {
  ^bb0(%i0: index, %i1: index):
    %pad_value = arith.constant 5.000000e-01 : f32
    tensor.yield %pad_value : f32
  } : tensor<2x3xf32> to tensor<3x6xf32>
  func.return %p : tensor<3x6xf32>
}

// CHECK-LABEL: func.func @pad(%x: memref<2x3xf32>, %out0: memref<3x6xf32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[FI:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[FJ:.*]]: index):
// CHECK-NEXT:        %[[V:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:        memref.store %[[V]], %out0[%[[FI]], %[[FJ]]] : memref<3x6xf32>
// CHECK:           ^bb0(%[[LI:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[LJ:.*]]: index):
// CHECK:             %[[LI1:.*]] = arith.addi %[[LI]], %{{.*}} : index
// CHECK-NEXT:        memref.store %{{.*}}, %out0[%[[LI1]], %[[LJ]]] : memref<3x6xf32>
// CHECK:           ^bb0(%[[RI:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[RJ:.*]]: index):
// CHECK:             %[[RI1:.*]] = arith.addi %[[RI]], %{{.*}} : index
// CHECK:             %c5 = arith.constant 5 : index
// CHECK-NEXT:        %[[RJ5:.*]] = arith.addi %[[RJ]], %c5 : index
// CHECK-NEXT:        memref.store %{{.*}}, %out0[%[[RI1]], %[[RJ5]]] : memref<3x6xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:        %[[X:.*]] = memref.load %x[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[I1:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[J2:.*]] = arith.addi %[[J]], %[[TWO]] : index
// CHECK-NEXT:        memref.store %[[X]], %out0[%[[I1]], %[[J2]]] : memref<3x6xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A pad with no low padding copies to the loop indices themselves; its
// border, the last two elements, is filled at the indices shifted by 2.
func.func @pad_high(%x: tensor<2xi32>) -> tensor<4xi32> {
  %p = tensor.pad %x low[0] high[2] {
  ^bb0(%i0: index):
    %pad_value = arith.constant -7 : i32
    tensor.yield %pad_value : i32
  } : tensor<2xi32> to tensor<4xi32>
  func.return %p : tensor<4xi32>
}

// CHECK-LABEL: func.func @pad_high(%x: memref<2xi32>, %out0: memref<4xi32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[F:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = arith.constant -7 : i32
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[F2:.*]] = arith.addi %[[F]], %[[TWO]] : index
// CHECK-NEXT:      memref.store %[[V]], %out0[%[[F2]]] : memref<4xi32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[I]]] : memref<2xi32>
// CHECK-NEXT:      memref.store %[[X]], %out0[%[[I]]] : memref<4xi32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// extract_slice with strides: source index = i * stride + offset (the add
// is left out for the column's offset 0).
func.func @extract_slice(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %x[1, 0] [2, 3] [2, 3] : tensor<4x8xf32> to tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @extract_slice(%x: memref<4x8xf32>, %out0: memref<2x3xf32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[I2:.*]] = arith.muli %[[I]], %[[TWO]] : index
// CHECK-NEXT:        %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[ROW:.*]] = arith.addi %[[I2]], %[[ONE]] : index
// CHECK-NEXT:        %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[COL:.*]] = arith.muli %[[J]], %[[THREE]] : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %x[%[[ROW]], %[[COL]]] : memref<4x8xf32>
// CHECK-NEXT:        memref.store %[[V]], %out0[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A concat as an insert_slice chain: the empty destination is materialised
// by the first insert (one alloc, no fill), the second insert writes into the
// same buffer in place (its dest has no other use) at column offset 3, and
// the consumer reads that buffer.
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  %c1 = tensor.insert_slice %b into %c0[0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c1 : tensor<2x8xf32>) outs(%e2 : tensor<2x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @concat(%a: memref<2x3xf32>, %b: memref<2x5xf32>, %out0: memref<2x8xf32>) {
// CHECK-NEXT:    %c0 = memref.alloc() : memref<2x8xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:        %[[A:.*]] = memref.load %a[%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT:        memref.store %[[A]], %c0[%[[I]], %[[J]]] : memref<2x8xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I2:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J2:.*]]: index):
// CHECK-NEXT:        %[[B:.*]] = memref.load %b[%[[I2]], %[[J2]]] : memref<2x5xf32>
// CHECK-NEXT:        %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[COL:.*]] = arith.addi %[[J2]], %[[THREE]] : index
// CHECK-NEXT:        memref.store %[[B]], %c0[%[[I2]], %[[COL]]] : memref<2x8xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I3:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J3:.*]]: index):
// CHECK-NEXT:        %[[V:.*]] = memref.load %c0[%[[I3]], %[[J3]]] : memref<2x8xf32>
// CHECK-NEXT:        %n = arith.negf %[[V]] : f32
// CHECK-NEXT:        memref.store %n, %out0[%[[I3]], %[[J3]]] : memref<2x8xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A returned concat. Current behaviour: the chain is built in an alloc and
// the last insert copies it into %out0 before writing its slice (the
// output argument is only taken by a value's own op, not by the start of an
// in-place chain).
func.func @concat_returned(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  %c1 = tensor.insert_slice %b into %c0[0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
  func.return %c1 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @concat_returned(%a: memref<2x3xf32>, %b: memref<2x5xf32>, %out0: memref<2x8xf32>) {
// CHECK-NEXT:    %c0 = memref.alloc() : memref<2x8xf32>
// CHECK:           memref.store %{{.*}}, %c0[
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:         ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:        %[[V:.*]] = memref.load %c0[%[[I]], %[[J]]] : memref<2x8xf32>
// CHECK-NEXT:        memref.store %[[V]], %out0[%[[I]], %[[J]]] : memref<2x8xf32>
// CHECK:             %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[COL:.*]] = arith.addi %{{.*}}, %[[THREE]] : index
// CHECK-NEXT:        memref.store %{{.*}}, %out0[%{{.*}}, %[[COL]]] : memref<2x8xf32>
// CHECK:         func.return

// -----

// Reshape is a view of its source's buffer (memref.reinterpret_cast, no copy); the
// view is then copied into the output argument, since the value lives in
// the alloc of %y.
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %r_shape = arith.constant dense<[6]> : tensor<1xi64>
  %r = tensor.reshape %y(%r_shape) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  func.return %r : tensor<6xf32>
}

// CHECK-LABEL: func.func @reshape(%x: memref<2x3xf32>, %out0: memref<6xf32>) {
// CHECK-NEXT:    %y = memref.alloc() : memref<2x3xf32>
// CHECK:             memref.store %n, %y[
// CHECK:         %[[VIEW:.*]] = memref.reinterpret_cast %y to offset: [0], sizes: [6], strides: [1] : memref<2x3xf32> to memref<6xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[VIEW]][%[[I]]] : memref<6xf32>
// CHECK-NEXT:      memref.store %[[V]], %out0[%[[I]]] : memref<6xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A reshape of a function argument is a view of the argument itself.
func.func @reshape_arg(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r_shape = arith.constant dense<[3, 2]> : tensor<2xi64>
  %r = tensor.reshape %x(%r_shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @reshape_arg(%x: memref<2x3xf32>, %out0: memref<3x2xf32>) {
// CHECK-NEXT:    %[[VIEW:.*]] = memref.reinterpret_cast %x to offset: [0], sizes: [3, 2], strides: [2, 1] : memref<2x3xf32> to memref<3x2xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:      ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[VIEW]][%[[I]], %[[J]]] : memref<3x2xf32>
// CHECK-NEXT:        memref.store %[[V]], %out0[%[[I]], %[[J]]] : memref<3x2xf32>
// CHECK-NEXT:        scf.reduce
// CHECK-NEXT:      }) : (index, index, index) -> ()
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A returned function argument is copied into the output argument.
func.func @return_arg(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// CHECK-LABEL: func.func @return_arg(%x: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = memref.load %x[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V]], %out0[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// -----

// The same value returned twice. Current behaviour (as the pass's docstring
// says: only a value returned exactly once takes its output argument): the
// value is computed into an alloc and copied into both outputs.
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  func.return %y, %y : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @twice(%x: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<4xf32>) {
// CHECK-NEXT:    %y = memref.alloc() : memref<4xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %n = arith.negf %[[X]] : f32
// CHECK-NEXT:      memref.store %n, %y[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I0:.*]]: index):
// CHECK-NEXT:      %[[V0:.*]] = memref.load %y[%[[I0]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V0]], %out0[%[[I0]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I1:.*]]: index):
// CHECK-NEXT:      %[[V1:.*]] = memref.load %y[%[[I1]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V1]], %out1[%[[I1]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// Two different returned values each write their own output in place; a
// returned fill is materialised straight into its output.
func.func @two_results(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %f_value = arith.constant 3 : i32
  %f_init = tensor.empty() : tensor<2xi32>
  %f = linalg.fill ins(%f_value : i32) outs(%f_init : tensor<2xi32>) -> tensor<2xi32>
  func.return %y, %f : tensor<4xf32>, tensor<2xi32>
}

// CHECK-LABEL: func.func @two_results(%x: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<2xi32>) {
// CHECK-NOT:     memref.alloc
// CHECK:           memref.store %n, %out0[%{{.*}}] : memref<4xf32>
// CHECK:           %[[THREE:.*]] = arith.constant 3 : i32
// CHECK-NEXT:      memref.store %[[THREE]], %out1[%{{.*}}] : memref<2xi32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A constant becomes a loop.weight (its data goes to the weights blob) and is
// read like any buffer.
func.func @constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %c : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %n = arith.mulf %p, %q : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @constant(%x: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK-NEXT:    %c = loop.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> -> memref<4xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[C:.*]] = memref.load %c[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %n = arith.mulf %[[X]], %[[C]] : f32
// CHECK-NEXT:      memref.store %n, %out0[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// A returned constant is copied from its weight into the output.
func.func @constant_returned() -> tensor<2xi64> {
  %c = graph.constant dense<[7, 9]> : tensor<2xi64>
  func.return %c : tensor<2xi64>
}

// CHECK-LABEL: func.func @constant_returned(%out0: memref<2xi64>) {
// CHECK-NEXT:    %c = loop.weight dense<[7, 9]> : tensor<2xi64> -> memref<2xi64>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = memref.load %c[%[[I]]] : memref<2xi64>
// CHECK-NEXT:      memref.store %[[V]], %out0[%[[I]]] : memref<2xi64>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// An outs operand with no other use is updated in place: %b accumulates into
// the buffer of %a, no second alloc, no copy.
func.func @outs_in_place(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: func.func @outs_in_place(%x: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK-NEXT:    %a = memref.alloc() : memref<4xf32>
// CHECK-NOT:     memref.alloc
// CHECK:           memref.store %n, %a[%{{.*}}] : memref<4xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:         ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[ACC:.*]] = memref.load %a[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %s = arith.addf %[[X]], %[[ACC]] : f32
// CHECK-NEXT:      memref.store %s, %a[%[[I]]] : memref<4xf32>
// CHECK-NEXT:           scf.reduce
// CHECK-NEXT:         }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[K:.*]]: index):
// CHECK-NEXT:      %[[B:.*]] = memref.load %a[%[[K]]] : memref<4xf32>
// CHECK-NEXT:      %m = arith.mulf %[[B]], %[[B]] : f32
// CHECK-NEXT:      memref.store %m, %out0[%[[K]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// Must not overwrite: %a is the outs of %b but is read again by %c, so %b
// gets its own buffer, starts as a copy of %a, and %c reads the untouched %a.
func.func @outs_shared(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %d = arith.subf %p, %q : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: func.func @outs_shared(%x: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK-NEXT:    %a = memref.alloc() : memref<4xf32>
// CHECK:           memref.store %n, %a[%{{.*}}] : memref<4xf32>
// CHECK:         %b = memref.alloc() : memref<4xf32>
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[COPY:.*]] = memref.load %a[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[COPY]], %b[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      %[[ACC:.*]] = memref.load %b[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      %s = arith.addf %[[X]], %[[ACC]] : f32
// CHECK-NEXT:      memref.store %s, %b[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[K:.*]]: index):
// CHECK-NEXT:      %[[A:.*]] = memref.load %a[%[[K]]] : memref<4xf32>
// CHECK-NEXT:      %[[B:.*]] = memref.load %b[%[[K]]] : memref<4xf32>
// CHECK-NEXT:      %d = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      memref.store %d, %out0[%[[K]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

// An outs operand that is a function argument is never written: the
// accumulation starts from a copy in the output argument.
func.func @outs_argument(%x: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @outs_argument(%x: memref<4xf32>, %init: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = memref.load %init[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V]], %out0[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK:         "scf.parallel"(%c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^bb0(%[[J:.*]]: index):
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      %[[ACC:.*]] = memref.load %out0[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      %s = arith.addf %[[X]], %[[ACC]] : f32
// CHECK-NEXT:      memref.store %s, %out0[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return
