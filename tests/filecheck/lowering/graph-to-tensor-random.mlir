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


// Multinomial, in f64: the row maxima, w = exp(x - max), the row totals
// (left to right); then one generic over (row, sample, class) reducing over
// the classes, carrying the running sum and the chosen class (3 = none
// yet): the first class whose running sum is not <= U * total; then the
// choice, at most the last class.
func.func @multinomial(%x: tensor<2x3xf32>) -> tensor<2x4xi64> {
  %y = graph.multinomial %x {dtype = 7 : i64, sample_size = 4 : i64, seed = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x4xi64>
  func.return %y : tensor<2x4xi64>
}

// CHECK-LABEL: func.func @multinomial(
// CHECK:         %[[TOP:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x3xf32>)
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f64
// CHECK:         %[[W:.*]] = linalg.generic {{.*}} ins(%x, %[[TOP]] : tensor<2x3xf32>, tensor<2xf64>)
// CHECK:           math.exp %{{.*}} : f64
// CHECK:         %[[TOTAL:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[W]] : tensor<2x3xf64>)
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f64
// CHECK:         %[[NONE:.*]] = arith.constant 3 : i64
// CHECK:         %[[UNCHOSEN:.*]] = linalg.fill ins(%[[NONE]] : i64) outs(%{{.*}} : tensor<2x4xi64>)
// CHECK-NEXT:    %{{.*}}, %[[CHOSEN:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[W]], %[[TOTAL]] : tensor<2x3xf64>, tensor<2xf64>) outs(%{{.*}}, %[[UNCHOSEN]] : tensor<2x4xf64>, tensor<2x4xi64>)
// CHECK-NEXT:    ^bb0(%[[WEIGHT:.*]]: f64, %[[ROW_TOTAL:.*]]: f64, %[[RUNNING:.*]]: f64, %[[SO_FAR:.*]]: i64):
// CHECK:           %[[U:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[RUNNING]], %[[WEIGHT]] : f64
// CHECK-NEXT:      %[[THRESHOLD:.*]] = arith.mulf %[[U]], %[[ROW_TOTAL]] : f64
// CHECK-NEXT:      %[[PAST:.*]] = arith.cmpf ugt, %[[SUM]], %[[THRESHOLD]] : f64
// CHECK:           %[[UNSET:.*]] = arith.cmpi eq, %[[SO_FAR]], %{{.*}} : i64
// CHECK-NEXT:      %[[FIRST:.*]] = arith.andi %[[PAST]], %[[UNSET]] : i1
// CHECK-NEXT:      %[[CLASS_INDEX:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[CLASS:.*]] = arith.index_cast %[[CLASS_INDEX]] : index to i64
// CHECK-NEXT:      %[[PICK:.*]] = arith.select %[[FIRST]], %[[CLASS]], %[[SO_FAR]] : i64
// CHECK-NEXT:      linalg.yield %[[SUM]], %[[PICK]] : f64, i64
// CHECK:         %y = linalg.generic {{.*}} ins(%[[CHOSEN]] : tensor<2x4xi64>)
// CHECK:           arith.minsi %{{.*}}, %{{.*}} : i64
