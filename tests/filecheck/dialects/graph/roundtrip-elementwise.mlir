// RUN: ember-opt %s | ember-opt | filecheck %s

// Every op of ops_elementwise.py: unary (with and without attributes), binary
// with broadcasting, comparisons and logical ops (i1 results), variadic ops
// with 1-3 operands, and Pow, Mod, PRelu, Where, Not, IsNaN, Cast, Clip (each
// subset of its optional bounds) and Dropout. Dynamic (?) dims are kept.

func.func @elementwise(%x: tensor<1x64x56x56xf32>, %bias: tensor<64x1x1xf32>, %d: tensor<?x128xf32>, %row: tensor<1x128xf32>, %i: tensor<4x8xi64>, %j: tensor<8xi64>, %m: tensor<4x8xi1>, %n: tensor<8xi1>, %lo: tensor<f32>, %hi: tensor<f32>, %h: tensor<2x3xf16>, %n0: tensor<i1>) -> (tensor<1x64x56x56xf32>, tensor<?x128xf32>) {
  %abs = graph.abs %i : (tensor<4x8xi64>) -> tensor<4x8xi64>
  %neg = graph.neg %j : (tensor<8xi64>) -> tensor<8xi64>
  %relu = graph.relu %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %sign = graph.sign %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %identity = graph.identity %m : (tensor<4x8xi1>) -> tensor<4x8xi1>
  %sigmoid = graph.sigmoid %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %tanh = graph.tanh %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %exp = graph.exp %h : (tensor<2x3xf16>) -> tensor<2x3xf16>
  %log = graph.log %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %sqrt = graph.sqrt %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %reciprocal = graph.reciprocal %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %floor = graph.floor %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %ceil = graph.ceil %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %round = graph.round %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %erf = graph.erf %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %sin = graph.sin %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %cos = graph.cos %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %tan = graph.tan %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %asin = graph.asin %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %acos = graph.acos %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %atan = graph.atan %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %sinh = graph.sinh %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %cosh = graph.cosh %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
  %softplus = graph.softplus %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %softsign = graph.softsign %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %hard_swish = graph.hard_swish %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %mish = graph.mish %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  // Unary ops with attributes: defaults are not printed, set values are.
  %leaky_default = graph.leaky_relu %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %leaky = graph.leaky_relu %x {alpha = 0.1 : f32} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %elu = graph.elu %d {alpha = 0.5 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %celu = graph.celu %d {alpha = 2.0 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %thresholded = graph.thresholded_relu %d {alpha = 1.5 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %selu = graph.selu %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %selu_attrs = graph.selu %d {alpha = 1.5 : f32, gamma = 2.0 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %hard_sigmoid = graph.hard_sigmoid %x {alpha = 0.25 : f32, beta = 0.5 : f32} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %gelu = graph.gelu %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %gelu_tanh = graph.gelu %d {approximate = "tanh"} : (tensor<?x128xf32>) -> tensor<?x128xf32>
  // Binary arithmetic broadcasts: per-channel bias, row vector against a dynamic batch.
  %add = graph.add %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %sub = graph.sub %d, %row : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  %mul = graph.mul %i, %j : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>
  %div = graph.div %x, %lo : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  // Comparisons give i1 with the broadcast shape.
  %equal = graph.equal %i, %j : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi1>
  %less = graph.less %d, %row : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xi1>
  %less_or_equal = graph.less_or_equal %d, %hi : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xi1>
  %greater = graph.greater %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xi1>
  %greater_or_equal = graph.greater_or_equal %j, %i : (tensor<8xi64>, tensor<4x8xi64>) -> tensor<4x8xi1>
  // Logical ops on i1.
  %and = graph.and %m, %n : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
  %or = graph.or %m, %equal : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %xor = graph.xor %n, %m : (tensor<8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // Variadic ops with one, two and three operands.
  %sum1 = graph.sum %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %sum3 = graph.sum %d, %row, %hi : (tensor<?x128xf32>, tensor<1x128xf32>, tensor<f32>) -> tensor<?x128xf32>
  %max = graph.max %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %min = graph.min %i, %j, %abs : (tensor<4x8xi64>, tensor<8xi64>, tensor<4x8xi64>) -> tensor<4x8xi64>
  %mean = graph.mean %row, %d : (tensor<1x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  // Pow keeps the base's element type even with an integer exponent.
  %pow = graph.pow %d, %hi : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32>
  %mod = graph.mod %i, %j : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>
  %fmod = graph.mod %d, %row {fmod = 1 : i64} : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  %prelu = graph.prelu %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %where = graph.where %less, %d, %row : (tensor<?x128xi1>, tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  %not = graph.not %m : (tensor<4x8xi1>) -> tensor<4x8xi1>
  %is_nan = graph.is_nan %d : (tensor<?x128xf32>) -> tensor<?x128xi1>
  %cast_f16 = graph.cast %d {to = f16} : (tensor<?x128xf32>) -> tensor<?x128xf16>
  %cast_f32 = graph.cast %i {to = f32} : (tensor<4x8xi64>) -> tensor<4x8xf32>
  %pow_int = graph.pow %cast_f32, %j : (tensor<4x8xf32>, tensor<8xi64>) -> tensor<4x8xf32>
  %cast_i1 = graph.cast %j {to = i1} : (tensor<8xi64>) -> tensor<8xi1>
  // Clip's bounds are optional and named: none, min only, max only, both.
  %clip = graph.clip %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %clip_min = graph.clip %x, min %lo : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  %clip_max = graph.clip %d, max %hi : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32>
  %clip_both = graph.clip %x, min %lo, max %hi : (tensor<1x64x56x56xf32>, tensor<f32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  %dropout = graph.dropout %where : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %dropped, %kept = graph.dropout %d, ratio %lo, training_mode %n0 {seed = 3 : i64} : (tensor<?x128xf32>, tensor<f32>, tensor<i1>) -> (tensor<?x128xf32>, tensor<?x128xi1>)
  func.return %clip_both, %dropout : tensor<1x64x56x56xf32>, tensor<?x128xf32>
}

// The printed form: defaults are omitted, floats are printed in full, and
// printing the parsed output again gives the same text (the RUN line
// prints, parses and prints again).
// CHECK-LABEL: func.func @elementwise(%x: tensor<1x64x56x56xf32>, %bias: tensor<64x1x1xf32>, %d: tensor<?x128xf32>, %row: tensor<1x128xf32>, %i: tensor<4x8xi64>, %j: tensor<8xi64>, %m: tensor<4x8xi1>, %n: tensor<8xi1>, %lo: tensor<f32>, %hi: tensor<f32>, %h: tensor<2x3xf16>, %n0: tensor<i1>) -> (tensor<1x64x56x56xf32>, tensor<?x128xf32>) {
// CHECK-NEXT:    %abs = graph.abs %i : (tensor<4x8xi64>) -> tensor<4x8xi64>
// CHECK-NEXT:    %neg = graph.neg %j : (tensor<8xi64>) -> tensor<8xi64>
// CHECK-NEXT:    %relu = graph.relu %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %sign = graph.sign %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %identity = graph.identity %m : (tensor<4x8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %sigmoid = graph.sigmoid %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %tanh = graph.tanh %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %exp = graph.exp %h : (tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK-NEXT:    %log = graph.log %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %sqrt = graph.sqrt %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %reciprocal = graph.reciprocal %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %floor = graph.floor %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %ceil = graph.ceil %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %round = graph.round %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %erf = graph.erf %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %sin = graph.sin %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %cos = graph.cos %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %tan = graph.tan %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %asin = graph.asin %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %acos = graph.acos %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %atan = graph.atan %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %sinh = graph.sinh %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %cosh = graph.cosh %row : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %softplus = graph.softplus %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %softsign = graph.softsign %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %hard_swish = graph.hard_swish %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %mish = graph.mish %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %leaky_default = graph.leaky_relu %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %leaky = graph.leaky_relu %x {alpha = 1.000000e-01 : f32} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %elu = graph.elu %d {alpha = 5.000000e-01 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %celu = graph.celu %d {alpha = 2.000000e+00 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %thresholded = graph.thresholded_relu %d {alpha = 1.500000e+00 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %selu = graph.selu %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %selu_attrs = graph.selu %d {alpha = 1.500000e+00 : f32, gamma = 2.000000e+00 : f32} : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %hard_sigmoid = graph.hard_sigmoid %x {alpha = 2.500000e-01 : f32, beta = 5.000000e-01 : f32} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %gelu = graph.gelu %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %gelu_tanh = graph.gelu %d {approximate = "tanh"} : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %add = graph.add %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %sub = graph.sub %d, %row : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %mul = graph.mul %i, %j : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>
// CHECK-NEXT:    %div = graph.div %x, %lo : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %equal = graph.equal %i, %j : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi1>
// CHECK-NEXT:    %less = graph.less %d, %row : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xi1>
// CHECK-NEXT:    %less_or_equal = graph.less_or_equal %d, %hi : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xi1>
// CHECK-NEXT:    %greater = graph.greater %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xi1>
// CHECK-NEXT:    %greater_or_equal = graph.greater_or_equal %j, %i : (tensor<8xi64>, tensor<4x8xi64>) -> tensor<4x8xi1>
// CHECK-NEXT:    %and = graph.and %m, %n : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %or = graph.or %m, %equal : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %xor = graph.xor %n, %m : (tensor<8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %sum1 = graph.sum %d : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %sum3 = graph.sum %d, %row, %hi : (tensor<?x128xf32>, tensor<1x128xf32>, tensor<f32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %max = graph.max %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %min = graph.min %i, %j, %abs : (tensor<4x8xi64>, tensor<8xi64>, tensor<4x8xi64>) -> tensor<4x8xi64>
// CHECK-NEXT:    %mean = graph.mean %row, %d : (tensor<1x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %pow = graph.pow %d, %hi : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %mod = graph.mod %i, %j : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>
// CHECK-NEXT:    %fmod = graph.mod %d, %row {fmod = 1 : i64} : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %prelu = graph.prelu %x, %bias : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %where = graph.where %less, %d, %row : (tensor<?x128xi1>, tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %not = graph.not %m : (tensor<4x8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %is_nan = graph.is_nan %d : (tensor<?x128xf32>) -> tensor<?x128xi1>
// CHECK-NEXT:    %cast_f16 = graph.cast %d {to = f16} : (tensor<?x128xf32>) -> tensor<?x128xf16>
// CHECK-NEXT:    %cast_f32 = graph.cast %i {to = f32} : (tensor<4x8xi64>) -> tensor<4x8xf32>
// CHECK-NEXT:    %pow_int = graph.pow %cast_f32, %j : (tensor<4x8xf32>, tensor<8xi64>) -> tensor<4x8xf32>
// CHECK-NEXT:    %cast_i1 = graph.cast %j {to = i1} : (tensor<8xi64>) -> tensor<8xi1>
// CHECK-NEXT:    %clip = graph.clip %x : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %clip_min = graph.clip %x, min %lo : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %clip_max = graph.clip %d, max %hi : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %clip_both = graph.clip %x, min %lo, max %hi : (tensor<1x64x56x56xf32>, tensor<f32>, tensor<f32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %dropout = graph.dropout %where : (tensor<?x128xf32>) -> tensor<?x128xf32>
// CHECK-NEXT:    %dropped, %kept = graph.dropout %d, ratio %lo, training_mode %n0 {seed = 3 : i64} : (tensor<?x128xf32>, tensor<f32>, tensor<i1>) -> (tensor<?x128xf32>, tensor<?x128xi1>)
// CHECK-NEXT:    func.return %clip_both, %dropout : tensor<1x64x56x56xf32>, tensor<?x128xf32>
// CHECK-NEXT:  }
