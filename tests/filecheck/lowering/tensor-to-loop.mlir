// RUN: ember-opt %s -p convert-tensor-to-loop --split-input-file | filecheck %s

// Bufferization of tensor IR into structured ops on memrefs. Each result
// becomes one more memref argument (%out0, ...) written in place; a computed
// value that is not returned gets a memref.alloc; tensor.empty / linalg.fill
// are materialised by the op that first needs them. linalg ops keep their
// indexing maps, bodies and attributes, now with memref operands and no
// results; data movement is linalg.copy / linalg.fill, into or out of a
// memref.subview where a slice, pad or concat needs one. The loops come
// later (loop-generate): the same inputs with their loops are in
// passes/loop/generate-from-tensors.mlir, which the comments on each case
// describe. Inputs the pass rejects are in tensor-to-loop-errors.mlir.

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
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : memref<2x3xf32>, memref<3xf32>) outs(%out0 : memref<2x3xf32>) {
// CHECK:         ^bb0(%p: f32, %q: f32, %o: f32):
// CHECK:         func.return

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
// CHECK-NEXT:    %[[V0:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    linalg.fill ins(%[[V0]] : f32) outs(%out0 : memref<4x5xf32>)
// CHECK-NEXT:    linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x5xf32>) outs(%out0 : memref<4x5xf32>)
// CHECK-NEXT:    func.return

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
// CHECK-NEXT:    %[[V0:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    linalg.fill ins(%[[V0]] : f32) outs(%out0 : memref<1x3x2x2xf32>)
// CHECK-NEXT:    linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x2x7x7xf32>, memref<3x2x3x3xf32>) outs(%out0 : memref<1x3x2x2xf32>)
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
// CHECK-NEXT:    %[[V0:[0-9]+]] = arith.constant -3.400000e+38 : f32
// CHECK-NEXT:    linalg.fill ins(%[[V0]] : f32) outs(%out0 : memref<1x2x2x2xf32>)
// CHECK-NEXT:    %[[V1:[0-9]+]] = memref.alloc() : memref<2x2xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %[[V1]] : memref<1x2x4x4xf32>, memref<2x2xf32>) outs(%out0 : memref<1x2x2x2xf32>) {
// CHECK:         ^bb0(%v: f32, %k: f32, %acc: f32):
// CHECK:         func.return

// -----

// Pad: fills of the border, slab by slab (the rows above, then within the
// source's rows the columns left and right of it: no element twice), then a
// copy of the source into the interior, each index shifted by its low
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
// CHECK-NEXT:    %[[T:[0-9]+]] = memref.subview %out0[0, 0] [1, 6] [1, 1] : memref<3x6xf32> to memref<1x6xf32, strided<[6, 1]>>
// CHECK-NEXT:    %[[V0:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    linalg.fill ins(%[[V0]] : f32) outs(%[[T]] : memref<1x6xf32, strided<[6, 1]>>)
// CHECK-NEXT:    %[[L:[0-9]+]] = memref.subview %out0[1, 0] [2, 2] [1, 1] : memref<3x6xf32> to memref<2x2xf32, strided<[6, 1], offset: 6>>
// CHECK-NEXT:    %[[V2:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    linalg.fill ins(%[[V2]] : f32) outs(%[[L]] : memref<2x2xf32, strided<[6, 1], offset: 6>>)
// CHECK-NEXT:    %[[R:[0-9]+]] = memref.subview %out0[1, 5] [2, 1] [1, 1] : memref<3x6xf32> to memref<2x1xf32, strided<[6, 1], offset: 11>>
// CHECK-NEXT:    %[[V3:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    linalg.fill ins(%[[V3]] : f32) outs(%[[R]] : memref<2x1xf32, strided<[6, 1], offset: 11>>)
// CHECK-NEXT:    %[[V1:[0-9]+]] = memref.subview %out0[1, 2] [2, 3] [1, 1] : memref<3x6xf32> to memref<2x3xf32, strided<[6, 1], offset: 8>>
// CHECK-NEXT:    linalg.copy ins(%x : memref<2x3xf32>) outs(%[[V1]] : memref<2x3xf32, strided<[6, 1], offset: 8>>)
// CHECK-NEXT:    func.return

// -----

// A pad with no low padding stores at the loop indices themselves.
func.func @pad_high(%x: tensor<2xi32>) -> tensor<4xi32> {
  %p = tensor.pad %x low[0] high[2] {
  ^bb0(%i0: index):
    %pad_value = arith.constant -7 : i32
    tensor.yield %pad_value : i32
  } : tensor<2xi32> to tensor<4xi32>
  func.return %p : tensor<4xi32>
}

// CHECK-LABEL: func.func @pad_high(%x: memref<2xi32>, %out0: memref<4xi32>) {
// CHECK-NEXT:    %[[H:[0-9]+]] = memref.subview %out0[2] [2] [1] : memref<4xi32> to memref<2xi32, strided<[1], offset: 2>>
// CHECK-NEXT:    %[[V0:[0-9]+]] = arith.constant -7 : i32
// CHECK-NEXT:    linalg.fill ins(%[[V0]] : i32) outs(%[[H]] : memref<2xi32, strided<[1], offset: 2>>)
// CHECK-NEXT:    %[[V1:[0-9]+]] = memref.subview %out0[0] [2] [1] : memref<4xi32> to memref<2xi32, strided<[1]>>
// CHECK-NEXT:    linalg.copy ins(%x : memref<2xi32>) outs(%[[V1]] : memref<2xi32, strided<[1]>>)
// CHECK-NEXT:    func.return

// -----

// extract_slice with strides: source index = i * stride + offset (the add
// is left out for the column's offset 0).
func.func @extract_slice(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %x[1, 0] [2, 3] [2, 3] : tensor<4x8xf32> to tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @extract_slice(%x: memref<4x8xf32>, %out0: memref<2x3xf32>) {
// CHECK-NEXT:    %[[V0:[0-9]+]] = memref.subview %x[1, 0] [2, 3] [2, 3] : memref<4x8xf32> to memref<2x3xf32, strided<[16, 3], offset: 8>>
// CHECK-NEXT:    linalg.copy ins(%[[V0]] : memref<2x3xf32, strided<[16, 3], offset: 8>>) outs(%out0 : memref<2x3xf32>)
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
// CHECK-NEXT:    %[[V0:[0-9]+]] = memref.subview %c0[0, 0] [2, 3] [1, 1] : memref<2x8xf32> to memref<2x3xf32, strided<[8, 1]>>
// CHECK-NEXT:    linalg.copy ins(%a : memref<2x3xf32>) outs(%[[V0]] : memref<2x3xf32, strided<[8, 1]>>)
// CHECK-NEXT:    %[[V1:[0-9]+]] = memref.subview %c0[0, 3] [2, 5] [1, 1] : memref<2x8xf32> to memref<2x5xf32, strided<[8, 1], offset: 3>>
// CHECK-NEXT:    linalg.copy ins(%b : memref<2x5xf32>) outs(%[[V1]] : memref<2x5xf32, strided<[8, 1], offset: 3>>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c0 : memref<2x8xf32>) outs(%out0 : memref<2x8xf32>) {
// CHECK:         ^bb0(%p: f32, %o: f32):
// CHECK:         func.return

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
// CHECK-NEXT:    %[[V0:[0-9]+]] = memref.subview %c0[0, 0] [2, 3] [1, 1] : memref<2x8xf32> to memref<2x3xf32, strided<[8, 1]>>
// CHECK-NEXT:    linalg.copy ins(%a : memref<2x3xf32>) outs(%[[V0]] : memref<2x3xf32, strided<[8, 1]>>)
// CHECK-NEXT:    linalg.copy ins(%c0 : memref<2x8xf32>) outs(%out0 : memref<2x8xf32>)
// CHECK-NEXT:    %[[V1:[0-9]+]] = memref.subview %out0[0, 3] [2, 5] [1, 1] : memref<2x8xf32> to memref<2x5xf32, strided<[8, 1], offset: 3>>
// CHECK-NEXT:    linalg.copy ins(%b : memref<2x5xf32>) outs(%[[V1]] : memref<2x5xf32, strided<[8, 1], offset: 3>>)
// CHECK-NEXT:    func.return

// -----

// A concat of values computed here: one that nothing else reads (%x) is
// computed in its part of the concat's buffer, so the concat does not copy
// it; one that is also returned (%y) and an argument (%a) are copied in.
func.func @concat_slabs(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x11xf32>, tensor<2x5xf32>) {
  %e1 = tensor.empty() : tensor<2x3xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x3xf32>) outs(%e1 : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<2x5xf32>) outs(%e2 : tensor<2x5xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x5xf32>
  %c = tensor.concat dim(1) %x, %y, %a : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
  func.return %c, %y : tensor<2x11xf32>, tensor<2x5xf32>
}

// CHECK-LABEL: func.func @concat_slabs(%a: memref<2x3xf32>, %b: memref<2x5xf32>, %out0: memref<2x11xf32>, %out1: memref<2x5xf32>) {
// CHECK-NEXT:    %[[X:[0-9]+]] = memref.subview %out0[0, 0] [2, 3] [1, 1] : memref<2x11xf32> to memref<2x3xf32, strided<[11, 1]>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%a : memref<2x3xf32>) outs(%[[X]] : memref<2x3xf32, strided<[11, 1]>>) {
// CHECK:         linalg.generic {{.*}} ins(%b : memref<2x5xf32>) outs(%out1 : memref<2x5xf32>) {
// CHECK:         %[[Y:[0-9]+]] = memref.subview %out0[0, 3] [2, 5] [1, 1]
// CHECK-NEXT:    linalg.copy ins(%out1 : memref<2x5xf32>) outs(%[[Y]] : memref<2x5xf32, strided<[11, 1], offset: 3>>)
// CHECK-NEXT:    %[[A:[0-9]+]] = memref.subview %out0[0, 8] [2, 3] [1, 1]
// CHECK-NEXT:    linalg.copy ins(%a : memref<2x3xf32>) outs(%[[A]] : memref<2x3xf32, strided<[11, 1], offset: 8>>)
// CHECK-NEXT:    func.return

// -----

// A chain, as in DenseNet's dense blocks: %c1 is itself an input of %c2, so
// it lives in %c2's buffer (the output argument), and %x and %y would live
// in %c1's part of it. %x is read by another op too (as an input, from the
// strided view); %y is read by an extract_slice, which takes a part of a
// contiguous buffer, so %y gets a buffer of its own and is copied in.
func.func @concat_chain(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> (tensor<2x10xf32>, tensor<2x3xf32>, tensor<2x1xf32>) {
  %e_x = tensor.empty() : tensor<2x3xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x3xf32>) outs(%e_x : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %e_r = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e_r : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %e_y = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x3xf32>) outs(%e_y : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %s = tensor.extract_slice %y[0, 0] [2, 1] [1, 1] : tensor<2x3xf32> to tensor<2x1xf32>
  %c1 = tensor.concat dim(1) %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %e_z = tensor.empty() : tensor<2x4xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<2x4xf32>) outs(%e_z : tensor<2x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x4xf32>
  %c2 = tensor.concat dim(1) %c1, %z : (tensor<2x6xf32>, tensor<2x4xf32>) -> tensor<2x10xf32>
  func.return %c2, %r, %s : tensor<2x10xf32>, tensor<2x3xf32>, tensor<2x1xf32>
}

// CHECK-LABEL: func.func @concat_chain(
// CHECK-NEXT:    %[[C1:[0-9]+]] = memref.subview %out0[0, 0] [2, 6] [1, 1] : memref<2x10xf32> to memref<2x6xf32, strided<[10, 1]>>
// CHECK-NEXT:    %[[X:[0-9]+]] = memref.subview %[[C1]][0, 0] [2, 3] [1, 1] : memref<2x6xf32, strided<[10, 1]>> to memref<2x3xf32, strided<[10, 1]>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%a : memref<2x3xf32>) outs(%[[X]] : memref<2x3xf32, strided<[10, 1]>>) {
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<2x3xf32, strided<[10, 1]>>) outs(%out1 : memref<2x3xf32>) {
// CHECK:         %y = memref.alloc() : memref<2x3xf32>
// CHECK:         %[[Y:[0-9]+]] = memref.subview %[[C1]][0, 3] [2, 3] [1, 1] : memref<2x6xf32, strided<[10, 1]>> to memref<2x3xf32, strided<[10, 1], offset: 3>>
// CHECK-NEXT:    linalg.copy ins(%y : memref<2x3xf32>) outs(%[[Y]] : memref<2x3xf32, strided<[10, 1], offset: 3>>)
// CHECK-NEXT:    %[[Z:[0-9]+]] = memref.subview %out0[0, 6] [2, 4] [1, 1] : memref<2x10xf32> to memref<2x4xf32, strided<[10, 1], offset: 6>>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%b : memref<2x4xf32>) outs(%[[Z]] : memref<2x4xf32, strided<[10, 1], offset: 6>>) {
// CHECK-NOT:     linalg.copy
// CHECK:         func.return

// -----

// %x lives in the concat's buffer and is read after %w, whose destination
// is the concat: %w must not be computed in place there (it would overwrite
// %x before %r reads it), so it gets a copy of the concat.
func.func @concat_read_after_in_place(%a: tensor<2x3xf32>, %b: tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<2x3xf32>) {
  %e_x = tensor.empty() : tensor<2x3xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x3xf32>) outs(%e_x : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %c = tensor.concat dim(1) %x, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<2x6xf32>) outs(%c : tensor<2x6xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x6xf32>
  %e_r = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e_r : tensor<2x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %e_v = tensor.empty() : tensor<2x6xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<2x6xf32>) outs(%e_v : tensor<2x6xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<2x6xf32>
  func.return %v, %r : tensor<2x6xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @concat_read_after_in_place(
// CHECK-NEXT:    %c = memref.alloc() : memref<2x6xf32>
// CHECK-NEXT:    %[[X:[0-9]+]] = memref.subview %c[0, 0] [2, 3] [1, 1]
// CHECK:         %w = memref.alloc() : memref<2x6xf32>
// CHECK-NEXT:    linalg.copy ins(%c : memref<2x6xf32>) outs(%w : memref<2x6xf32>)
// CHECK-NEXT:    linalg.generic {{.*}} ins(%b : memref<2x6xf32>) outs(%w : memref<2x6xf32>) {
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<2x3xf32, strided<[6, 1]>>) outs(%out1 : memref<2x3xf32>) {

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
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<2x3xf32>) outs(%y : memref<2x3xf32>) {
// CHECK:         ^bb0(%p: f32, %o: f32):
// CHECK:         %[[V0:[0-9]+]] = memref.reinterpret_cast %y to offset: [0], sizes: [6], strides: [1] : memref<2x3xf32> to memref<6xf32>
// CHECK-NEXT:    linalg.copy ins(%[[V0]] : memref<6xf32>) outs(%out0 : memref<6xf32>)
// CHECK-NEXT:    func.return

// -----

// A reshape of a function argument is a view of the argument itself.
func.func @reshape_arg(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r_shape = arith.constant dense<[3, 2]> : tensor<2xi64>
  %r = tensor.reshape %x(%r_shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @reshape_arg(%x: memref<2x3xf32>, %out0: memref<3x2xf32>) {
// CHECK-NEXT:    %[[V0:[0-9]+]] = memref.reinterpret_cast %x to offset: [0], sizes: [3, 2], strides: [2, 1] : memref<2x3xf32> to memref<3x2xf32>
// CHECK-NEXT:    linalg.copy ins(%[[V0]] : memref<3x2xf32>) outs(%out0 : memref<3x2xf32>)
// CHECK-NEXT:    func.return

// -----

// A returned function argument is copied into the output argument.
func.func @return_arg(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// CHECK-LABEL: func.func @return_arg(%x: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK-NEXT:    linalg.copy ins(%x : memref<4xf32>) outs(%out0 : memref<4xf32>)
// CHECK-NEXT:    func.return

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
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
// CHECK:         ^bb0(%p: f32, %o: f32):
// CHECK:         linalg.copy ins(%y : memref<4xf32>) outs(%out0 : memref<4xf32>)
// CHECK-NEXT:    linalg.copy ins(%y : memref<4xf32>) outs(%out1 : memref<4xf32>)
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
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%out0 : memref<4xf32>) {
// CHECK:         ^bb0(%p: f32, %o: f32):
// CHECK:         %[[V0:[0-9]+]] = arith.constant 3 : i32
// CHECK-NEXT:    linalg.fill ins(%[[V0]] : i32) outs(%out1 : memref<2xi32>)
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
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %c : memref<4xf32>, memref<4xf32>) outs(%out0 : memref<4xf32>) {
// CHECK:         ^bb0(%p: f32, %q: f32, %o: f32):
// CHECK:         func.return

// -----

// A returned constant is copied from its weight into the output.
func.func @constant_returned() -> tensor<2xi64> {
  %c = graph.constant dense<[7, 9]> : tensor<2xi64>
  func.return %c : tensor<2xi64>
}

// CHECK-LABEL: func.func @constant_returned(%out0: memref<2xi64>) {
// CHECK-NEXT:    %c = loop.weight dense<[7, 9]> : tensor<2xi64> -> memref<2xi64>
// CHECK-NEXT:    linalg.copy ins(%c : memref<2xi64>) outs(%out0 : memref<2xi64>)
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
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
// CHECK:         ^bb0(%p: f32, %o: f32):
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
// CHECK:         ^bb0(%p_1: f32, %o_1: f32):
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%out0 : memref<4xf32>) {
// CHECK:         ^bb0(%p_2: f32, %o_2: f32):
// CHECK:         func.return

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
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {
// CHECK:         ^bb0(%p: f32, %o: f32):
// CHECK:         %b = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {
// CHECK:         ^bb0(%p_1: f32, %o_1: f32):
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : memref<4xf32>, memref<4xf32>) outs(%out0 : memref<4xf32>) {
// CHECK:         ^bb0(%p_2: f32, %q: f32, %o_2: f32):
// CHECK:         func.return

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
// CHECK-NEXT:    linalg.copy ins(%init : memref<4xf32>) outs(%out0 : memref<4xf32>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%out0 : memref<4xf32>) {
// CHECK:         ^bb0(%p: f32, %o: f32):
// CHECK:         func.return
