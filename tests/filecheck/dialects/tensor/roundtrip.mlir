// RUN: ember-opt %s | filecheck %s
// RUN: ember-opt %s | ember-opt | filecheck %s
// RUN: ember-opt %s --print-op-generic | ember-opt | filecheck %s

// Every op of the tensor dialect prints in its custom form and parses back
// to the same text: named ops (matmul with a batch dim, conv2d with groups,
// strides and dilations, pool2d max and sum) on f32 and i32, the data
// movement ops (empty, fill, pad, extract_slice with strides, insert_slice,
// reshape) and tensor.generic (broadcasting maps, a reduction, two outputs,
// no inputs, a body with its own constant). The third RUN line parses the
// generic form back into the same custom form.

// Named structured ops: the destination is a fill or an empty tensor.
func.func @named(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>, %x: tensor<1x4x10x10xf32>, %w: tensor<8x2x3x3xf32>, %wi: tensor<4x4x3x3xi32>, %xi: tensor<1x4x5x5xi32>) -> (tensor<2x4x3xf32>, tensor<1x8x4x4xf32>, tensor<1x4x1x3xi32>, tensor<1x4x5x5xf32>, tensor<1x4x3x3xi32>) {
  %f = tensor.fill 0.000000e+00 : f32 : tensor<2x4x3xf32>
  %m = tensor.matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%f : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %ce = tensor.empty : tensor<1x8x4x4xf32>
  %c = tensor.conv2d {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64} ins(%x, %w : tensor<1x4x10x10xf32>, tensor<8x2x3x3xf32>) outs(%ce : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %ci = tensor.fill 0 : i32 : tensor<1x4x3x3xi32>
  %cdi = tensor.fill 0 : i32 : tensor<1x4x1x3xi32>
  %cd = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 2, 1>, groups = 1 : i64} ins(%xi, %wi : tensor<1x4x5x5xi32>, tensor<4x4x3x3xi32>) outs(%cdi : tensor<1x4x1x3xi32>) -> tensor<1x4x1x3xi32>
  %pf = tensor.fill -3.400000e+38 : f32 : tensor<1x4x5x5xf32>
  %pm = tensor.pool2d {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} ins(%x : tensor<1x4x10x10xf32>) outs(%pf : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %ps = tensor.pool2d {kind = "sum", kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} ins(%xi : tensor<1x4x5x5xi32>) outs(%ci : tensor<1x4x3x3xi32>) -> tensor<1x4x3x3xi32>
  func.return %m, %c, %cd, %pm, %ps : tensor<2x4x3xf32>, tensor<1x8x4x4xf32>, tensor<1x4x1x3xi32>, tensor<1x4x5x5xf32>, tensor<1x4x3x3xi32>
}

// CHECK-LABEL: func.func @named(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>, %x: tensor<1x4x10x10xf32>, %w: tensor<8x2x3x3xf32>, %wi: tensor<4x4x3x3xi32>, %xi: tensor<1x4x5x5xi32>) -> (tensor<2x4x3xf32>, tensor<1x8x4x4xf32>, tensor<1x4x1x3xi32>, tensor<1x4x5x5xf32>, tensor<1x4x3x3xi32>) {
// CHECK-NEXT:    %f = tensor.fill 0.000000e+00 : f32 : tensor<2x4x3xf32>
// CHECK-NEXT:    %m = tensor.matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%f : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT:    %ce = tensor.empty : tensor<1x8x4x4xf32>
// CHECK-NEXT:    %c = tensor.conv2d {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64} ins(%x, %w : tensor<1x4x10x10xf32>, tensor<8x2x3x3xf32>) outs(%ce : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
// CHECK-NEXT:    %ci = tensor.fill 0 : i32 : tensor<1x4x3x3xi32>
// CHECK-NEXT:    %cdi = tensor.fill 0 : i32 : tensor<1x4x1x3xi32>
// CHECK-NEXT:    %cd = tensor.conv2d {strides = array<i64: 1, 1>, dilations = array<i64: 2, 1>, groups = 1 : i64} ins(%xi, %wi : tensor<1x4x5x5xi32>, tensor<4x4x3x3xi32>) outs(%cdi : tensor<1x4x1x3xi32>) -> tensor<1x4x1x3xi32>
// CHECK-NEXT:    %pf = tensor.fill -3.400000e+38 : f32 : tensor<1x4x5x5xf32>
// CHECK-NEXT:    %pm = tensor.pool2d {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} ins(%x : tensor<1x4x10x10xf32>) outs(%pf : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT:    %ps = tensor.pool2d {kind = "sum", kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} ins(%xi : tensor<1x4x5x5xi32>) outs(%ci : tensor<1x4x3x3xi32>) -> tensor<1x4x3x3xi32>
// CHECK-NEXT:    func.return %m, %c, %cd, %pm, %ps : tensor<2x4x3xf32>, tensor<1x8x4x4xf32>, tensor<1x4x1x3xi32>, tensor<1x4x5x5xf32>, tensor<1x4x3x3xi32>
// CHECK-NEXT:  }

// Data movement: pads (integer and float values), slices, a reshape and an i1 empty tensor.
func.func @data(%a: tensor<4x8xf32>, %i: tensor<2x3xi64>, %s: tensor<2x4xf32>) -> (tensor<3x5xi64>, tensor<6x8xf32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<2x16xf32>, tensor<8xi1>) {
  %e = tensor.empty : tensor<8xi1>
  %pi = tensor.pad %i {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = -1 : i64} : tensor<2x3xi64> -> tensor<3x5xi64>
  %pa = tensor.pad %a {low = array<i64: 1, 0>, high = array<i64: 1, 0>, value = 1.500000e+00 : f32} : tensor<4x8xf32> -> tensor<6x8xf32>
  %es = tensor.extract_slice %a {offsets = array<i64: 0, 1>, sizes = array<i64: 2, 4>, strides = array<i64: 2, 2>} : tensor<4x8xf32> -> tensor<2x4xf32>
  %is = tensor.insert_slice %s into %a {offsets = array<i64: 2, 4>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<2x4xf32> into tensor<4x8xf32> -> tensor<4x8xf32>
  %r = tensor.reshape %is : tensor<4x8xf32> -> tensor<2x16xf32>
  func.return %pi, %pa, %es, %is, %r, %e : tensor<3x5xi64>, tensor<6x8xf32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<2x16xf32>, tensor<8xi1>
}

// CHECK-LABEL: func.func @data(%a: tensor<4x8xf32>, %i: tensor<2x3xi64>, %s: tensor<2x4xf32>) -> (tensor<3x5xi64>, tensor<6x8xf32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<2x16xf32>, tensor<8xi1>) {
// CHECK-NEXT:    %e = tensor.empty : tensor<8xi1>
// CHECK-NEXT:    %pi = tensor.pad %i {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = -1 : i64} : tensor<2x3xi64> -> tensor<3x5xi64>
// CHECK-NEXT:    %pa = tensor.pad %a {low = array<i64: 1, 0>, high = array<i64: 1, 0>, value = 1.500000e+00 : f32} : tensor<4x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:    %es = tensor.extract_slice %a {offsets = array<i64: 0, 1>, sizes = array<i64: 2, 4>, strides = array<i64: 2, 2>} : tensor<4x8xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %is = tensor.insert_slice %s into %a {offsets = array<i64: 2, 4>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<2x4xf32> into tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %r = tensor.reshape %is : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK-NEXT:    func.return %pi, %pa, %es, %is, %r, %e : tensor<3x5xi64>, tensor<6x8xf32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<2x16xf32>, tensor<8xi1>
// CHECK-NEXT:  }

// tensor.generic: a broadcast add, a row sum (reduction), two outputs.
func.func @generic(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty : tensor<4x8xf32>
  %sum = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %s = arith.addf %x, %y : f32
    tensor.yield %s : f32
  } -> tensor<4x8xf32>
  %z = tensor.fill 0.000000e+00 : f32 : tensor<4xf32>
  %rows = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %r: f32):
    %t = arith.addf %r, %v : f32
    tensor.yield %t : f32
  } -> tensor<4xf32>
  %neg, %dbl = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e, %e : tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%u: f32, %o1: f32, %o2: f32):
    %m = arith.negf %u : f32
    %d = arith.addf %u, %u : f32
    tensor.yield %m, %d : f32, f32
  } -> tensor<4x8xf32>, tensor<4x8xf32>
  func.return %sum, %rows, %neg, %dbl : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @generic(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %e = tensor.empty : tensor<4x8xf32>
// CHECK-NEXT:    %sum = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%x: f32, %y: f32, %acc: f32):
// CHECK-NEXT:      %s = arith.addf %x, %y : f32
// CHECK-NEXT:      tensor.yield %s : f32
// CHECK-NEXT:    } -> tensor<4x8xf32>
// CHECK-NEXT:    %z = tensor.fill 0.000000e+00 : f32 : tensor<4xf32>
// CHECK-NEXT:    %rows = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%v: f32, %r: f32):
// CHECK-NEXT:      %t = arith.addf %r, %v : f32
// CHECK-NEXT:      tensor.yield %t : f32
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NEXT:    %neg, %dbl = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e, %e : tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%u: f32, %o1: f32, %o2: f32):
// CHECK-NEXT:      %m = arith.negf %u : f32
// CHECK-NEXT:      %d = arith.addf %u, %u : f32
// CHECK-NEXT:      tensor.yield %m, %d : f32, f32
// CHECK-NEXT:    } -> tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    func.return %sum, %rows, %neg, %dbl : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// tensor.generic with no inputs: ins() stays in the printed form.
func.func @iota() -> tensor<3x5xi32> {
  %e = tensor.empty : tensor<3x5xi32>
  %c = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins() outs(%e : tensor<3x5xi32>) {
  ^bb0(%o: i32):
    %k = arith.constant 7 : i32
    tensor.yield %k : i32
  } -> tensor<3x5xi32>
  func.return %c : tensor<3x5xi32>
}

// CHECK-LABEL: func.func @iota() -> tensor<3x5xi32> {
// CHECK-NEXT:    %e = tensor.empty : tensor<3x5xi32>
// CHECK-NEXT:    %c = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins() outs(%e : tensor<3x5xi32>) {
// CHECK-NEXT:    ^bb0(%o: i32):
// CHECK-NEXT:      %k = arith.constant 7 : i32
// CHECK-NEXT:      tensor.yield %k : i32
// CHECK-NEXT:    } -> tensor<3x5xi32>
// CHECK-NEXT:    func.return %c : tensor<3x5xi32>
// CHECK-NEXT:  }
// CHECK-NEXT:  }
