// RUN: ember-opt %s -p graph-fold-batchnorm,dce --split-input-file | filecheck %s

// Conv with a bias, grouped: s = scale / sqrt(var + eps) = [1, 6] scales W's
// output channels, and the bias becomes (b - mean) * s + B = [0.5, -19].
func.func @conv_bias(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %shift = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %c = graph.conv %x, %w, B %b {group = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_normalization %c, %scale, %shift, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @conv_bias
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}1.200000e+01]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[5.000000e-01, -1.900000e+01]> : tensor<2xf32>
// CHECK-NEXT:    %y = graph.conv %x, %[[W]], B %[[B]] {group = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %y

// -----

// Conv without a bias gets one: -mean * s + B = [-2, 2], with s = [2, 0.5].
func.func @conv_no_bias(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %c = graph.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_normalization %c, %scale, %shift, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @conv_no_bias
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}4.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[-2.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %y = graph.conv %x, %[[W]], B %[[B]] : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %y

// -----

// Gemm with transB: B's rows (op(B)'s columns) scale by s = [2, 0.5]; beta
// moves into C = beta * C * s + t = [0.5 * 4 * 2 - 2, 0.5 * -2 * 0.5 + 2];
// alpha stays.
func.func @gemm(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]> : tensor<2x3xf32>
  %c = graph.constant dense<[4.0, -2.0]> : tensor<2xf32>
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %g = graph.gemm %a, %w, C %c {alpha = 2.0 : f32, beta = 0.5 : f32, transB = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %y = graph.batch_normalization %g, %scale, %shift, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
// CHECK-LABEL: func.func @gemm
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[}}2.000000e+00, 2.000000e+00, 2.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[2.000000e+00, 1.500000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %y = graph.gemm %a, %[[W]], C %[[C]] {alpha = 2.000000e+00 : f32, transB = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %y

// -----

// Gemm without transB or C: B's columns scale by s = [2, 0.5] and C is t.
func.func @gemm_no_c(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]> : tensor<3x2xf32>
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %g = graph.gemm %a, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = graph.batch_normalization %g, %scale, %shift, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
// CHECK-LABEL: func.func @gemm_no_c
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[}}2.000000e+00, 1.000000e+00], [2.000000e+00, 1.000000e+00], [2.000000e+00, 1.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[-2.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %y = graph.gemm %a, %[[W]], C %[[C]] : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %y

// -----

// MatMul by a constant matrix becomes one Gemm: the weight's columns scale
// by s = [2, 0.5] and C is t = [-2, 2].
func.func @matmul(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]> : tensor<3x2xf32>
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %m = graph.matmul %a, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = graph.batch_normalization %m, %scale, %shift, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[}}2.000000e+00, 1.000000e+00], [2.000000e+00, 1.000000e+00], [2.000000e+00, 1.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[-2.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %y = graph.gemm %a, %[[W]], C %[[C]] : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %y

// -----

// Without a foldable producer: x * s + t, s and t shaped [C, 1, 1].
func.func @standalone(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %y = graph.batch_normalization %x, %scale, %shift, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @standalone
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[\[\[}}2.000000e+00]], {{\[\[}}5.000000e-01]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<{{\[\[\[}}-2.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[XS:.*]] = graph.mul %x, %[[S]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %y = graph.add %[[XS]], %[[T]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %y

// -----

// On 2-D input the channel axis is the last one: s and t are plain vectors.
func.func @standalone_2d(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %y = graph.batch_normalization %x, %scale, %shift, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
// CHECK-LABEL: func.func @standalone_2d
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<[2.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<[-2.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[XS:.*]] = graph.mul %x, %[[S]] : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %y = graph.add %[[XS]], %[[T]] : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>

// -----

// Not folded into producers: a conv whose result is also returned (its user
// must see unscaled values), a conv with a weight that is not a constant, and
// a batched MatMul (its channel axis 1 is not the weight's). Each
// normalisation becomes the Mul/Add instead.
func.func @keep_producers(%x: tensor<1x2x3x3xf32>, %wx: tensor<2x2x1x1xf32>, %a: tensor<2x2x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<2x2x2xf32>) {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %mw = graph.constant dense<1.0> : tensor<3x2xf32>
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %c = graph.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_normalization %c, %scale, %shift, %mean, %var : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %d = graph.conv %x, %wx : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %z = graph.batch_normalization %d, %scale, %shift, %mean, %var : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %m = graph.matmul %a, %mw : (tensor<2x2x3xf32>, tensor<3x2xf32>) -> tensor<2x2x2xf32>
  %n = graph.batch_normalization %m, %scale, %shift, %mean, %var : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  func.return %c, %y, %z, %n : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<2x2x2xf32>
}
// CHECK-LABEL: func.func @keep_producers
// CHECK:         %c = graph.conv %x, %w :
// CHECK:         %[[C:.*]] = graph.mul %c, %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK-NEXT:    %y = graph.add %[[C]], %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK:         %d = graph.conv %x, %wx :
// CHECK:         %[[D:.*]] = graph.mul %d, %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK-NEXT:    %z = graph.add %[[D]], %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK:         %m = graph.matmul %a, %mw :
// CHECK:         %[[M:.*]] = graph.mul %m, %{{.*}} : (tensor<2x2x2xf32>, tensor<2x1xf32>)
// CHECK-NEXT:    %n = graph.add %[[M]], %{{.*}} : (tensor<2x2x2xf32>, tensor<2x1xf32>)
// CHECK-NOT:     graph.batch_normalization

// -----

// Must not fire: statistics that are not constants (here the scale), and a
// variance that makes sqrt(var + eps) NaN.
func.func @keep(%x: tensor<1x2x3x3xf32>, %scale_in: tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %scale = graph.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %shift = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %bad_var = graph.constant dense<[-1.0, 1.0]> : tensor<2xf32>
  %c = graph.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = graph.batch_normalization %c, %scale_in, %shift, %mean, %var : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %d = graph.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %z = graph.batch_normalization %d, %scale, %shift, %mean, %bad_var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %z : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @keep
// CHECK:         %c = graph.conv %x, %w :
// CHECK-NEXT:    %y = graph.batch_normalization %c, %scale_in, %shift, %mean, %var :
// CHECK-NEXT:    %d = graph.conv %x, %w :
// CHECK-NEXT:    %z = graph.batch_normalization %d, %scale, %shift, %mean, %bad_var {epsilon = 0.000000e+00 : f32} :
// CHECK-NEXT:    func.return %y, %z
