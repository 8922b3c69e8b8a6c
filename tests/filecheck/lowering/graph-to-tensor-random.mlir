// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// RandomUniform: one all-parallel generic with no input; its body draws the
// SplitMix64 number at the element's flat position (from 1) from the seed
// attribute's float32 bits (2.0: 0x40000000), takes its top 24 bits times
// 2^-24 and maps it to low + (high - low) * U in f32, then to the result type.
func.func @uniform() -> tensor<2x3xf64> {
  %y = graph.random_uniform {dtype = 11 : i64, high = 3.0 : f32, low = -1.0 : f32, seed = 2.0 : f32, shape = array<i64: 2, 3>} : () -> tensor<2x3xf64>
  func.return %y : tensor<2x3xf64>
}

// CHECK-LABEL: func.func @uniform()
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<2x3xf64>
// CHECK-NEXT:    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[EMPTY]] : tensor<2x3xf64>)
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           %[[COLUMN:.*]] = linalg.index 1 : index
// CHECK:           %[[POSITION:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:      %[[SEED:.*]] = arith.constant 1073741824 : i64
// CHECK-NEXT:      %[[INCREMENT:.*]] = arith.constant -7046029254386353131 : i64
// CHECK-NEXT:      %[[STEP:.*]] = arith.muli %[[POSITION]], %[[INCREMENT]] : i64
// CHECK-NEXT:      %{{.*}} = arith.addi %[[SEED]], %[[STEP]] : i64
// CHECK:           %[[TOP_BITS:.*]] = arith.constant 40 : i64
// CHECK-NEXT:      %[[TOP:.*]] = arith.shrui %{{.*}}, %[[TOP_BITS]] : i64
// CHECK-NEXT:      %[[FLOAT:.*]] = arith.sitofp %[[TOP]] : i64 to f32
// CHECK-NEXT:      %[[ULP:.*]] = arith.constant 5.96046448e-08 : f32
// CHECK-NEXT:      %[[U:.*]] = arith.mulf %[[FLOAT]], %[[ULP]] : f32
// CHECK-NEXT:      %[[LOW:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:      %[[SPAN:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[SPAN]], %[[U]] : f32
// CHECK-NEXT:      %[[VALUE:.*]] = arith.addf %[[LOW]], %[[SCALED]] : f32
// CHECK-NEXT:      %[[WIDE:.*]] = arith.extf %[[VALUE]] : f32 to f64
// CHECK-NEXT:      linalg.yield %[[WIDE]] : f64

// RandomNormalLike without a seed (seed 0): the input's shape and type;
// Box-Muller on the uniforms at positions 2n - 1 and 2n, in f64, rounded to
// f32, then mean + scale * z in f32, rounded to f16. The input is not read.
func.func @normal_like(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = graph.random_normal_like %x {mean = 1.0 : f32, scale = 2.0 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// CHECK-LABEL: func.func @normal_like(
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<4xf16>)
// CHECK:           %[[SECOND:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// CHECK:           %[[FIRST:.*]] = arith.subi %[[SECOND]], %{{.*}} : i64
// CHECK:           %[[SEED:.*]] = arith.constant 0 : i64
// CHECK:           %{{.*}} = arith.muli %[[FIRST]], %{{.*}} : i64
// CHECK:           %[[U1:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK:           %{{.*}} = arith.muli %[[SECOND]], %{{.*}} : i64
// CHECK:           %[[U2:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      %[[WIDE_U1:.*]] = arith.extf %[[U1]] : f32 to f64
// CHECK-NEXT:      %[[LOG:.*]] = math.log %[[WIDE_U1]] : f64
// CHECK-NEXT:      %[[MINUS_TWO:.*]] = arith.constant -2.000000e+00 : f64
// CHECK-NEXT:      %[[SQUARE:.*]] = arith.mulf %[[MINUS_TWO]], %[[LOG]] : f64
// CHECK-NEXT:      %[[RADIUS:.*]] = math.sqrt %[[SQUARE]] : f64
// CHECK-NEXT:      %[[TWO_PI:.*]] = arith.constant 6.2831853071795862 : f64
// CHECK-NEXT:      %[[WIDE_U2:.*]] = arith.extf %[[U2]] : f32 to f64
// CHECK-NEXT:      %[[ANGLE:.*]] = arith.mulf %[[TWO_PI]], %[[WIDE_U2]] : f64
// CHECK-NEXT:      %[[COS:.*]] = math.cos %[[ANGLE]] : f64
// CHECK-NEXT:      %[[Z:.*]] = arith.mulf %[[RADIUS]], %[[COS]] : f64
// CHECK-NEXT:      %[[Z32:.*]] = arith.truncf %[[Z]] : f64 to f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[SPREAD:.*]] = arith.mulf %[[SCALE]], %[[Z32]] : f32
// CHECK-NEXT:      %[[VALUE:.*]] = arith.addf %[[MEAN]], %[[SPREAD]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.truncf %[[VALUE]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[HALF]] : f16

// Bernoulli reads the probabilities: U < p compared in f64 (both exact
// there), as the dtype (int64: 7).
func.func @bernoulli(%p: tensor<5xf32>) -> tensor<5xi64> {
  %y = graph.bernoulli %p {dtype = 7 : i64, seed = 1.0 : f32} : (tensor<5xf32>) -> tensor<5xi64>
  func.return %y : tensor<5xi64>
}

// CHECK-LABEL: func.func @bernoulli(
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p : tensor<5xf32>) outs(%{{.*}} : tensor<5xi64>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: f32, %{{.*}}: i64):
// CHECK:           %[[SEED:.*]] = arith.constant 1065353216 : i64
// CHECK:           %[[U:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      %[[WIDE_U:.*]] = arith.extf %[[U]] : f32 to f64
// CHECK-NEXT:      %[[WIDE_P:.*]] = arith.extf %[[P]] : f32 to f64
// CHECK-NEXT:      %[[BELOW:.*]] = arith.cmpf olt, %[[WIDE_U]], %[[WIDE_P]] : f64
// CHECK-NEXT:      %[[DRAW:.*]] = arith.extui %[[BELOW]] : i1 to i64
// CHECK-NEXT:      linalg.yield %[[DRAW]] : i64

