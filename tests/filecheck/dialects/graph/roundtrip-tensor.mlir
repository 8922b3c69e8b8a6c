// RUN: ember-opt %s | ember-opt | filecheck %s

// Every op of ops_tensor.py, graph.constant included: constants (splat, list,
// i1, scalar, hex form for more than 16 elements), shape ops, Reshape, Transpose,
// Squeeze/Unsqueeze, Expand, Tile, Concat (1-3 operands), Split (2 and 3
// results, explicit sizes, uneven num_outputs, a single result), Slice (each
// subset of axes/steps), Gather, Pad (optional constant_value and axes), Range;
// then (@indexed) GatherElements, GatherND, ScatterElements, ScatterND, Trilu.

func.func @tensor(%x: tensor<1x64x7x7xf32>, %seq: tensor<?x16x512xf32>, %ids: tensor<2x?xi64>, %table: tensor<30522x768xf32>, %dyn_shape: tensor<3xi64>, %n: tensor<i64>) -> tensor<1x3136xf32> {
  // Constants: a splat, a short list, an i1 tensor, a scalar, and data long
  // enough to print in hex form.
  %zero = graph.constant dense<0.000000e+00> : tensor<64xf32>
  %target = graph.constant dense<[1, -1]> : tensor<2xi64>
  %mask = graph.constant dense<[true, false, true]> : tensor<3xi1>
  %one = graph.constant dense<1> : tensor<i64>
  %ramp = graph.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]> : tensor<20xi32>
  %matrix = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // ConstantOfShape: the default f32 zeros, and an i64 fill value; a shape
  // only known at run time gives unknown dims of the known rank.
  %shape4 = graph.constant dense<[2, 3, 4]> : tensor<3xi64>
  %zeros = graph.constant_of_shape %shape4 : (tensor<3xi64>) -> tensor<2x3x4xf32>
  %ones = graph.constant_of_shape %shape4 {value = dense<1> : tensor<1xi64>} : (tensor<3xi64>) -> tensor<2x3x4xi64>
  %dyn_fill = graph.constant_of_shape %dyn_shape : (tensor<3xi64>) -> tensor<?x?x?xf32>
  // Shape and Size.
  %shape = graph.shape %seq : (tensor<?x16x512xf32>) -> tensor<3xi64>
  %tail = graph.shape %x {start = 2 : i64} : (tensor<1x64x7x7xf32>) -> tensor<2xi64>
  %middle = graph.shape %x {start = 1 : i64, end = -1 : i64} : (tensor<1x64x7x7xf32>) -> tensor<2xi64>
  %size = graph.size %seq : (tensor<?x16x512xf32>) -> tensor<i64>
  // Reshape with -1 inferred, with a run-time shape, with 0 copying a dim, and with allowzero.
  %flat = graph.reshape %x, %target : (tensor<1x64x7x7xf32>, tensor<2xi64>) -> tensor<1x3136xf32>
  %reshaped = graph.reshape %seq, %dyn_shape : (tensor<?x16x512xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %copy_dim = graph.constant dense<[0, 64, -1]> : tensor<3xi64>
  %copied = graph.reshape %x, %copy_dim : (tensor<1x64x7x7xf32>, tensor<3xi64>) -> tensor<1x64x49xf32>
  %shape2d = graph.constant dense<[64, 49]> : tensor<2xi64>
  %keep = graph.reshape %x, %shape2d {allowzero = 1 : i64} : (tensor<1x64x7x7xf32>, tensor<2xi64>) -> tensor<64x49xf32>
  // Transpose: the default reverses the dims; an explicit perm.
  %t = graph.transpose %matrix : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %nhwc = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x64x7x7xf32>) -> tensor<1x7x7x64xf32>
  // Squeeze all size-1 dims, or given axes; Unsqueeze at two axes.
  %axes0 = graph.constant dense<0> : tensor<1xi64>
  %squeezed = graph.squeeze %x : (tensor<1x64x7x7xf32>) -> tensor<64x7x7xf32>
  %squeezed0 = graph.squeeze %x, axes %axes0 : (tensor<1x64x7x7xf32>, tensor<1xi64>) -> tensor<64x7x7xf32>
  %axes03 = graph.constant dense<[0, 3]> : tensor<2xi64>
  %unsqueezed = graph.unsqueeze %ids, %axes03 : (tensor<2x?xi64>, tensor<2xi64>) -> tensor<1x2x?x1xi64>
  // Expand broadcasts both ways; Tile repeats.
  %ex_shape = graph.constant dense<[2, 1, 1]> : tensor<3xi64>
  %expanded = graph.expand %zero, %ex_shape : (tensor<64xf32>, tensor<3xi64>) -> tensor<2x1x64xf32>
  %expanded_dyn = graph.expand %ids, %dyn_shape : (tensor<2x?xi64>, tensor<3xi64>) -> tensor<?x?x?xi64>
  %reps = graph.constant dense<[1, 2, 1, 1]> : tensor<4xi64>
  %tiled = graph.tile %x, %reps : (tensor<1x64x7x7xf32>, tensor<4xi64>) -> tensor<1x128x7x7xf32>
  // Concat of one, two and three operands, one with a dynamic dim.
  %cat1 = graph.concat %x {axis = 1 : i64} : (tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %cat2 = graph.concat %x, %x {axis = 1 : i64} : (tensor<1x64x7x7xf32>, tensor<1x64x7x7xf32>) -> tensor<1x128x7x7xf32>
  %cat3 = graph.concat %ids, %ids, %ids {axis = -1 : i64} : (tensor<2x?xi64>, tensor<2x?xi64>, tensor<2x?xi64>) -> tensor<2x?xi64>
  // Split: equal parts from the result count, explicit sizes, uneven num_outputs.
  %s0, %s1 = graph.split %x {axis = 1 : i64} : (tensor<1x64x7x7xf32>) -> (tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>)
  %sizes = graph.constant dense<[256, 128, 128]> : tensor<3xi64>
  %q, %k, %v = graph.split %seq, split %sizes {axis = 2 : i64} : (tensor<?x16x512xf32>, tensor<3xi64>) -> (tensor<?x16x256xf32>, tensor<?x16x128xf32>, tensor<?x16x128xf32>)
  %u:3 = graph.split %x {axis = 2 : i64, num_outputs = 3 : i64} : (tensor<1x64x7x7xf32>) -> (tensor<1x64x3x7xf32>, tensor<1x64x3x7xf32>, tensor<1x64x1x7xf32>)
  %single = graph.split %seq : (tensor<?x16x512xf32>) -> tensor<?x16x512xf32>
  // Slice with and without axes and steps, including a negative step.
  %starts = graph.constant dense<[1]> : tensor<1xi64>
  %ends = graph.constant dense<[5]> : tensor<1xi64>
  %axis2 = graph.constant dense<[2]> : tensor<1xi64>
  %step2 = graph.constant dense<[2]> : tensor<1xi64>
  %minus1 = graph.constant dense<[-1]> : tensor<1xi64>
  %huge_neg = graph.constant dense<[-9223372036854775807]> : tensor<1xi64>
  %sliced = graph.slice %table, %starts, %ends : (tensor<30522x768xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x768xf32>
  %sliced_axes = graph.slice %x, %starts, %ends, axes %axis2 : (tensor<1x64x7x7xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x4x7xf32>
  %strided = graph.slice %seq, %starts, %ends, axes %axis2, steps %step2 : (tensor<?x16x512xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x16x2xf32>
  %reversed = graph.slice %x, %minus1, %huge_neg, axes %axis2, steps %minus1 : (tensor<1x64x7x7xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x7x7xf32>
  // Gather: embedding lookup (axis 0) and a scalar index along axis 1.
  %embedded = graph.gather %table, %ids : (tensor<30522x768xf32>, tensor<2x?xi64>) -> tensor<2x?x768xf32>
  %picked = graph.gather %seq, %n {axis = 1 : i64} : (tensor<?x16x512xf32>, tensor<i64>) -> tensor<?x512xf32>
  // Pad: all axes, given axes with a fill value, and reflect mode.
  %pads = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %padded = graph.pad %x, %pads : (tensor<1x64x7x7xf32>, tensor<8xi64>) -> tensor<1x64x9x9xf32>
  %pads2 = graph.constant dense<[2, 3]> : tensor<2xi64>
  %fill = graph.constant dense<-1.000000e+00> : tensor<f32>
  %padded_axis = graph.pad %x, %pads2, constant_value %fill, axes %axis2 : (tensor<1x64x7x7xf32>, tensor<2xi64>, tensor<f32>, tensor<1xi64>) -> tensor<1x64x12x7xf32>
  %reflected = graph.pad %x, %pads {mode = "reflect"} : (tensor<1x64x7x7xf32>, tensor<8xi64>) -> tensor<1x64x9x9xf32>
  // Range: constant bounds give a static length, run-time ones do not.
  %r0 = graph.constant dense<0> : tensor<i64>
  %r10 = graph.constant dense<10> : tensor<i64>
  %r3 = graph.constant dense<3> : tensor<i64>
  %range = graph.range %r0, %r10, %r3 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %dyn_range = graph.range %r0, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %flat : tensor<1x3136xf32>
}

// The printed form: defaults are omitted, floats are printed in full, and
// printing the parsed output again gives the same text (the RUN line
// prints, parses and prints again).
// CHECK-LABEL: func.func @tensor(%x: tensor<1x64x7x7xf32>, %seq: tensor<?x16x512xf32>, %ids: tensor<2x?xi64>, %table: tensor<30522x768xf32>, %dyn_shape: tensor<3xi64>, %n: tensor<i64>) -> tensor<1x3136xf32> {
// CHECK-NEXT:    %zero = graph.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK-NEXT:    %target = graph.constant dense<[1, -1]> : tensor<2xi64>
// CHECK-NEXT:    %mask = graph.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT:    %one = graph.constant dense<1> : tensor<i64>
// CHECK-NEXT:    %ramp = graph.constant dense<"0x000000000100000002000000030000000400000005000000060000000700000008000000090000000A0000000B0000000C0000000D0000000E0000000F00000010000000110000001200000013000000"> : tensor<20xi32>
// CHECK-NEXT:    %matrix = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %shape4 = graph.constant dense<[2, 3, 4]> : tensor<3xi64>
// CHECK-NEXT:    %zeros = graph.constant_of_shape %shape4 : (tensor<3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %ones = graph.constant_of_shape %shape4 {value = dense<1> : tensor<1xi64>} : (tensor<3xi64>) -> tensor<2x3x4xi64>
// CHECK-NEXT:    %dyn_fill = graph.constant_of_shape %dyn_shape : (tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT:    %shape = graph.shape %seq : (tensor<?x16x512xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %tail = graph.shape %x {start = 2 : i64} : (tensor<1x64x7x7xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %middle = graph.shape %x {start = 1 : i64, end = -1 : i64} : (tensor<1x64x7x7xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %size = graph.size %seq : (tensor<?x16x512xf32>) -> tensor<i64>
// CHECK-NEXT:    %flat = graph.reshape %x, %target : (tensor<1x64x7x7xf32>, tensor<2xi64>) -> tensor<1x3136xf32>
// CHECK-NEXT:    %reshaped = graph.reshape %seq, %dyn_shape : (tensor<?x16x512xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT:    %copy_dim = graph.constant dense<[0, 64, -1]> : tensor<3xi64>
// CHECK-NEXT:    %copied = graph.reshape %x, %copy_dim : (tensor<1x64x7x7xf32>, tensor<3xi64>) -> tensor<1x64x49xf32>
// CHECK-NEXT:    %shape2d = graph.constant dense<[64, 49]> : tensor<2xi64>
// CHECK-NEXT:    %keep = graph.reshape %x, %shape2d {allowzero = 1 : i64} : (tensor<1x64x7x7xf32>, tensor<2xi64>) -> tensor<64x49xf32>
// CHECK-NEXT:    %t = graph.transpose %matrix : (tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %nhwc = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x64x7x7xf32>) -> tensor<1x7x7x64xf32>
// CHECK-NEXT:    %axes0 = graph.constant dense<0> : tensor<1xi64>
// CHECK-NEXT:    %squeezed = graph.squeeze %x : (tensor<1x64x7x7xf32>) -> tensor<64x7x7xf32>
// CHECK-NEXT:    %squeezed0 = graph.squeeze %x, axes %axes0 : (tensor<1x64x7x7xf32>, tensor<1xi64>) -> tensor<64x7x7xf32>
// CHECK-NEXT:    %axes03 = graph.constant dense<[0, 3]> : tensor<2xi64>
// CHECK-NEXT:    %unsqueezed = graph.unsqueeze %ids, %axes03 : (tensor<2x?xi64>, tensor<2xi64>) -> tensor<1x2x?x1xi64>
// CHECK-NEXT:    %ex_shape = graph.constant dense<[2, 1, 1]> : tensor<3xi64>
// CHECK-NEXT:    %expanded = graph.expand %zero, %ex_shape : (tensor<64xf32>, tensor<3xi64>) -> tensor<2x1x64xf32>
// CHECK-NEXT:    %expanded_dyn = graph.expand %ids, %dyn_shape : (tensor<2x?xi64>, tensor<3xi64>) -> tensor<?x?x?xi64>
// CHECK-NEXT:    %reps = graph.constant dense<[1, 2, 1, 1]> : tensor<4xi64>
// CHECK-NEXT:    %tiled = graph.tile %x, %reps : (tensor<1x64x7x7xf32>, tensor<4xi64>) -> tensor<1x128x7x7xf32>
// CHECK-NEXT:    %cat1 = graph.concat %x {axis = 1 : i64} : (tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
// CHECK-NEXT:    %cat2 = graph.concat %x, %x {axis = 1 : i64} : (tensor<1x64x7x7xf32>, tensor<1x64x7x7xf32>) -> tensor<1x128x7x7xf32>
// CHECK-NEXT:    %cat3 = graph.concat %ids, %ids, %ids {axis = -1 : i64} : (tensor<2x?xi64>, tensor<2x?xi64>, tensor<2x?xi64>) -> tensor<2x?xi64>
// CHECK-NEXT:    %s0, %s1 = graph.split %x {axis = 1 : i64} : (tensor<1x64x7x7xf32>) -> (tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>)
// CHECK-NEXT:    %sizes = graph.constant dense<[256, 128, 128]> : tensor<3xi64>
// CHECK-NEXT:    %q, %k, %v = graph.split %seq, split %sizes {axis = 2 : i64} : (tensor<?x16x512xf32>, tensor<3xi64>) -> (tensor<?x16x256xf32>, tensor<?x16x128xf32>, tensor<?x16x128xf32>)
// CHECK-NEXT:    %u, %u_1, %u_2 = graph.split %x {axis = 2 : i64, num_outputs = 3 : i64} : (tensor<1x64x7x7xf32>) -> (tensor<1x64x3x7xf32>, tensor<1x64x3x7xf32>, tensor<1x64x1x7xf32>)
// CHECK-NEXT:    %single = graph.split %seq : (tensor<?x16x512xf32>) -> tensor<?x16x512xf32>
// CHECK-NEXT:    %starts = graph.constant dense<1> : tensor<1xi64>
// CHECK-NEXT:    %ends = graph.constant dense<5> : tensor<1xi64>
// CHECK-NEXT:    %axis2 = graph.constant dense<2> : tensor<1xi64>
// CHECK-NEXT:    %step2 = graph.constant dense<2> : tensor<1xi64>
// CHECK-NEXT:    %minus1 = graph.constant dense<-1> : tensor<1xi64>
// CHECK-NEXT:    %huge_neg = graph.constant dense<-9223372036854775807> : tensor<1xi64>
// CHECK-NEXT:    %sliced = graph.slice %table, %starts, %ends : (tensor<30522x768xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x768xf32>
// CHECK-NEXT:    %sliced_axes = graph.slice %x, %starts, %ends, axes %axis2 : (tensor<1x64x7x7xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x4x7xf32>
// CHECK-NEXT:    %strided = graph.slice %seq, %starts, %ends, axes %axis2, steps %step2 : (tensor<?x16x512xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x16x2xf32>
// CHECK-NEXT:    %reversed = graph.slice %x, %minus1, %huge_neg, axes %axis2, steps %minus1 : (tensor<1x64x7x7xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x7x7xf32>
// CHECK-NEXT:    %embedded = graph.gather %table, %ids : (tensor<30522x768xf32>, tensor<2x?xi64>) -> tensor<2x?x768xf32>
// CHECK-NEXT:    %picked = graph.gather %seq, %n {axis = 1 : i64} : (tensor<?x16x512xf32>, tensor<i64>) -> tensor<?x512xf32>
// CHECK-NEXT:    %pads = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
// CHECK-NEXT:    %padded = graph.pad %x, %pads : (tensor<1x64x7x7xf32>, tensor<8xi64>) -> tensor<1x64x9x9xf32>
// CHECK-NEXT:    %pads2 = graph.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT:    %fill = graph.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %padded_axis = graph.pad %x, %pads2, constant_value %fill, axes %axis2 : (tensor<1x64x7x7xf32>, tensor<2xi64>, tensor<f32>, tensor<1xi64>) -> tensor<1x64x12x7xf32>
// CHECK-NEXT:    %reflected = graph.pad %x, %pads {mode = "reflect"} : (tensor<1x64x7x7xf32>, tensor<8xi64>) -> tensor<1x64x9x9xf32>
// CHECK-NEXT:    %r0 = graph.constant dense<0> : tensor<i64>
// CHECK-NEXT:    %r10 = graph.constant dense<10> : tensor<i64>
// CHECK-NEXT:    %r3 = graph.constant dense<3> : tensor<i64>
// CHECK-NEXT:    %range = graph.range %r0, %r10, %r3 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
// CHECK-NEXT:    %dyn_range = graph.range %r0, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK-NEXT:    func.return %flat : tensor<1x3136xf32>
// CHECK-NEXT:  }

// Gathers and scatters with run-time indices, and Trilu.
func.func @indexed(%x: tensor<4x5xf32>, %ie: tensor<2x5xi64>, %ind: tensor<3x2xi64>, %b: tensor<2x6x3xf32>, %ib: tensor<2x4x1xi64>, %u: tensor<2x5xf32>, %urow: tensor<3xf32>, %k: tensor<i64>, %mask: tensor<?x?xi1, #graph.dims<S, S>>) -> (tensor<2x5xf32>, tensor<3xf32>, tensor<2x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<?x?xi1, #graph.dims<S, S>>) {
  %ge = graph.gather_elements %x, %ie : (tensor<4x5xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  %gnd = graph.gather_nd %x, %ind : (tensor<4x5xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  %gb = graph.gather_nd %b, %ib {batch_dims = 1 : i64} : (tensor<2x6x3xf32>, tensor<2x4x1xi64>) -> tensor<2x4x3xf32>
  %se = graph.scatter_elements %x, %ie, %u {axis = 0 : i64, reduction = "add"} : (tensor<4x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
  %snd = graph.scatter_nd %x, %ind, %urow {reduction = "max"} : (tensor<4x5xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<4x5xf32>
  %tri = graph.trilu %x, k %k {upper = 0 : i64} : (tensor<4x5xf32>, tensor<i64>) -> tensor<4x5xf32>
  %causal = graph.trilu %mask : (tensor<?x?xi1, #graph.dims<S, S>>) -> tensor<?x?xi1, #graph.dims<S, S>>
  func.return %ge, %gnd, %gb, %se, %snd, %tri, %causal : tensor<2x5xf32>, tensor<3xf32>, tensor<2x4x3xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<?x?xi1, #graph.dims<S, S>>
}

// CHECK-LABEL: func.func @indexed(
// CHECK-NEXT:    %ge = graph.gather_elements %x, %ie : (tensor<4x5xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
// CHECK-NEXT:    %gnd = graph.gather_nd %x, %ind : (tensor<4x5xf32>, tensor<3x2xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %gb = graph.gather_nd %b, %ib {batch_dims = 1 : i64} : (tensor<2x6x3xf32>, tensor<2x4x1xi64>) -> tensor<2x4x3xf32>
// CHECK-NEXT:    %se = graph.scatter_elements %x, %ie, %u {axis = 0 : i64, reduction = "add"} : (tensor<4x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %snd = graph.scatter_nd %x, %ind, %urow {reduction = "max"} : (tensor<4x5xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %tri = graph.trilu %x, k %k {upper = 0 : i64} : (tensor<4x5xf32>, tensor<i64>) -> tensor<4x5xf32>
// CHECK-NEXT:    %causal = graph.trilu %mask : (tensor<?x?xi1, #graph.dims<S, S>>) -> tensor<?x?xi1, #graph.dims<S, S>>
