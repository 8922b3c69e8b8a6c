// RUN: ember-opt %s --split-input-file --verify-diagnostics -p convert-graph-to-tensor | filecheck %s
// RUN: not ember-opt %s -p convert-graph-to-tensor 2>&1 | filecheck %s --check-prefix=FIRST

// convert-graph-to-tensor, one chunk per op family: elementwise ops become one
// generic with broadcasting in the indexing maps (a broadcast size-1 dim reads
// index 0, missing leading dims are dropped) and an arith/math body;
// windows become pad + fill + named ops; Gemm/MatMul tensor.matmul; Softmax
// and reductions reduction generics; data movement insert/extract_slice,
// reshape and copy generics with permuted or reversed maps. The last chunks
// are diagnostics: a dynamic shape, and every op that cannot be lowered (in
// one message). Without --split-input-file (FIRST), the first error stops
// ember-opt with a one-line message and exit status 1.

func.func @broadcast_add(%x: tensor<2x3x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = graph.add %x, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @broadcast_add(
// CHECK-NEXT:    %[[E:.*]] = tensor.empty : tensor<2x3x4xf32>
// CHECK-NEXT:    %y = tensor.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : tensor<2x3x4xf32>, tensor<3x1xf32>) outs(%[[E]] : tensor<2x3x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      tensor.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %y : tensor<2x3x4xf32>

// -----

func.func @unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %g = graph.gelu %s : (tensor<4xf32>) -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// Sigmoid is 1 / (1 + exp(-x)); Gelu 0.5 x (1 + erf(x / sqrt 2)).
// CHECK-LABEL: func.func @unary(
// CHECK:         %s = tensor.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT:      %[[SIG:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT:      tensor.yield %[[SIG]] : f32
// CHECK:         %g = tensor.generic
// CHECK:           arith.constant 1.41421354 : f32
// CHECK-NEXT:      arith.divf
// CHECK-NEXT:      math.erf
// CHECK:           tensor.yield

// -----

func.func @compare_select_cast(%x: tensor<2x4xf32>, %y: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %c = graph.less %x, %y : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %w = graph.where %c, %x, %y : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %f = graph.cast %i {to = f32} : (tensor<4xi64>) -> tensor<4xf32>
  func.return %w, %f : tensor<2x4xf32>, tensor<4xf32>
}

// Comparisons are ordered and give i1; Where is a select; Cast a conversion.
// CHECK-LABEL: func.func @compare_select_cast(
// CHECK-NEXT:    %[[E:.*]] = tensor.empty : tensor<2x4xi1>
// CHECK-NEXT:    %c = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<2x4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<2x4xi1>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-NEXT:      tensor.yield %[[LT]] : i1
// CHECK:         %w = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %x, %y : tensor<2x4xi1>, tensor<2x4xf32>, tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[C:.*]]: i1, %[[P:.*]]: f32, %[[Q:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[C]], %[[P]], %[[Q]] : f32
// CHECK-NEXT:      tensor.yield %[[SEL]] : f32
// CHECK:         %f = tensor.generic
// CHECK-NEXT:    ^bb0(%[[I:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK-NEXT:      tensor.yield %[[F]] : f32

// -----

func.func @variadic(%a: tensor<3x4xf32>, %b: tensor<4xf32>, %c: tensor<3x1xf32>) -> tensor<3x4xf32> {
  %m = graph.max %a, %b, %c : (tensor<3x4xf32>, tensor<4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  func.return %m : tensor<3x4xf32>
}

// One generic for all operands; Max propagates NaN (maximumf).
// CHECK-LABEL: func.func @variadic(
// CHECK:         %m = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b, %c : tensor<3x4xf32>, tensor<4xf32>, tensor<3x1xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[AB:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[ABC:.*]] = arith.maximumf %[[AB]], %[[C]] : f32
// CHECK-NEXT:      tensor.yield %[[ABC]] : f32

// -----

func.func @conv_pads_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x4x4xf32> {
  %y = graph.conv %x, %w, B %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// CHECK-LABEL: func.func @conv_pads_bias(
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, value = 0.000000e+00 : f32} : tensor<1x3x8x8xf32> -> tensor<1x3x10x10xf32>
// CHECK-NEXT:    %[[Z:.*]] = tensor.fill 0.000000e+00 : f32 : tensor<1x16x4x4xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.conv2d {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 1 : i64} ins(%[[P]], %w : tensor<1x3x10x10xf32>, tensor<16x3x3x3xf32>) outs(%[[Z]] : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty : tensor<1x16x4x4xf32>
// CHECK-NEXT:    %y = tensor.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[C]], %b : tensor<1x16x4x4xf32>, tensor<16xf32>) outs(%[[E]] : tensor<1x16x4x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[BIAS:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[V]], %[[BIAS]] : f32
// CHECK-NEXT:      tensor.yield %[[R]] : f32

// -----

func.func @pools(%x: tensor<1x2x6x6xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %m = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %a = graph.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  func.return %m, %a : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Max pooling pads and starts with NaN, which its NaN-skipping max drops;
// average pooling sums, then divides by the window size.
// CHECK-LABEL: func.func @pools(
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, value = 0x7fc00000 : f32} : tensor<1x2x6x6xf32> -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    %[[I:.*]] = tensor.fill 0x7fc00000 : f32 : tensor<1x2x3x3xf32>
// CHECK-NEXT:    %m = tensor.pool2d {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} ins(%[[P]] : tensor<1x2x8x8xf32>) outs(%[[I]] : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[Z:.*]] = tensor.fill 0.000000e+00 : f32 : tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[S:.*]] = tensor.pool2d {kind = "sum", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} ins(%x : tensor<1x2x6x6xf32>) outs(%[[Z]] : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK:         %a = tensor.generic
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:      %[[D:.*]] = arith.divf %[[V]], %[[N]] : f32
// CHECK-NEXT:      tensor.yield %[[D]] : f32

// -----

func.func @gemm_trans_b(%a: tensor<2x8xf32>, %b: tensor<5x8xf32>, %c: tensor<5xf32>) -> tensor<2x5xf32> {
  %y = graph.gemm %a, %b, C %c {alpha = 5.000000e-01 : f32, transB = 1 : i64} : (tensor<2x8xf32>, tensor<5x8xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// transB (of a non-constant B) is a tensor.transpose; then matmul; then
// alpha * AB + C (C broadcast).
// CHECK-LABEL: func.func @gemm_trans_b(
// CHECK-NEXT:    %[[E:.*]] = tensor.empty : tensor<8x5xf32>
// CHECK-NEXT:    %[[BT:.*]] = tensor.transpose {permutation = array<i64: 1, 0>} ins(%b : tensor<5x8xf32>) outs(%[[E]] : tensor<8x5xf32>) -> tensor<8x5xf32>
// CHECK-NEXT:    %[[Z:.*]] = tensor.fill 0.000000e+00 : f32 : tensor<2x5xf32>
// CHECK-NEXT:    %[[MM:.*]] = tensor.matmul ins(%a, %[[BT]] : tensor<2x8xf32>, tensor<8x5xf32>) outs(%[[Z]] : tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty : tensor<2x5xf32>
// CHECK-NEXT:    %y = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %c : tensor<2x5xf32>, tensor<5xf32>) outs(%[[E2]] : tensor<2x5xf32>) {
// CHECK-NEXT:    ^bb0(%[[AB:.*]]: f32, %[[CC:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ALPHA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[AB]], %[[ALPHA]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[SCALED]], %[[CC]] : f32
// CHECK-NEXT:      tensor.yield %[[SUM]] : f32

// -----

func.func @batched_matmul(%a: tensor<2x3x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %y = graph.matmul %a, %b : (tensor<2x3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  func.return %y : tensor<2x3x4x6xf32>
}

// B is broadcast to the batch dims, both operands reshaped to rank 3.
// CHECK-LABEL: func.func @batched_matmul(
// CHECK:         %[[BB:.*]] = tensor.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<3x5x6xf32>)
// CHECK:         %[[A3:.*]] = tensor.reshape %a : tensor<2x3x4x5xf32> -> tensor<6x4x5xf32>
// CHECK-NEXT:    %[[B3:.*]] = tensor.reshape %[[BB]] : tensor<2x3x5x6xf32> -> tensor<6x5x6xf32>
// CHECK-NEXT:    %[[Z:.*]] = tensor.fill 0.000000e+00 : f32 : tensor<6x4x6xf32>
// CHECK-NEXT:    %[[MM:.*]] = tensor.matmul ins(%[[A3]], %[[B3]] : tensor<6x4x5xf32>, tensor<6x5x6xf32>) outs(%[[Z]] : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
// CHECK-NEXT:    %y = tensor.reshape %[[MM]] : tensor<6x4x6xf32> -> tensor<2x3x4x6xf32>

// -----

func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %y = graph.softmax %x : (tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}

// max-reduce, sum-reduce of exp(x - max), then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[NINF:.*]] = tensor.fill 0xff800000 : f32 : tensor<2xf32>
// CHECK-NEXT:    %[[MAX:.*]] = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x10xf32>) outs(%[[NINF]] : tensor<2xf32>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      tensor.yield %[[M]] : f32
// CHECK-NEXT:    } -> tensor<2xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = tensor.fill 0.000000e+00 : f32 : tensor<2xf32>
// CHECK-NEXT:    %[[SUM:.*]] = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %[[MAX]] : tensor<2x10xf32>, tensor<2xf32>) outs(%[[ZERO]] : tensor<2xf32>) {
// CHECK-NEXT:    ^bb0(%[[V2:.*]]: f32, %[[M2:.*]]: f32, %[[ACC2:.*]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V2]], %[[M2]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC2]], %[[EXP]] : f32
// CHECK-NEXT:      tensor.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<2xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty : tensor<2x10xf32>
// CHECK-NEXT:    %y = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %[[MAX]], %[[SUM]] : tensor<2x10xf32>, tensor<2xf32>, tensor<2xf32>) outs(%[[E]] : tensor<2x10xf32>) {
// CHECK-NEXT:    ^bb0(%[[V3:.*]]: f32, %[[M3:.*]]: f32, %[[S3:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[D3:.*]] = arith.subf %[[V3]], %[[M3]] : f32
// CHECK-NEXT:      %[[EXP3:.*]] = math.exp %[[D3]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[EXP3]], %[[S3]] : f32
// CHECK-NEXT:      tensor.yield %[[Q]] : f32

// -----

func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %axes = graph.constant dense<[1]> : tensor<1xi64>
  %y = graph.reduce_mean %x, axes %axes : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
  func.return %y : tensor<2x1x4xf32>
}

// The axes constant is gone; the sum is a tensor.reduce, the division a
// generic, and keepdims a reshape.
// CHECK-LABEL: func.func @reduce_mean(
// CHECK-NEXT:    %[[Z:.*]] = tensor.fill 0.000000e+00 : f32 : tensor<2x4xf32>
// CHECK-NEXT:    %[[S:.*]] = tensor.reduce {dimensions = array<i64: 1>, kind = "add"} ins(%x : tensor<2x3x4xf32>) outs(%[[Z]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         %[[M:.*]] = tensor.generic
// CHECK:           arith.constant 3.000000e+00 : f32
// CHECK-NEXT:      arith.divf
// CHECK:         %y = tensor.reshape %[[M]] : tensor<2x4xf32> -> tensor<2x1x4xf32>

// -----

func.func @argmax(%x: tensor<3x5xf32>) -> tensor<3xi64> {
  %y = graph.arg_max %x {axis = 1 : i64, keepdims = 0 : i64} : (tensor<3x5xf32>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// Two outputs (best value, its index); indices come from an iota constant.
// CHECK-LABEL: func.func @argmax(
// CHECK-NEXT:    %[[IOTA:.*]] = graph.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK-NEXT:    %[[V0:.*]] = tensor.fill 0xff800000 : f32 : tensor<3xf32>
// CHECK-NEXT:    %[[I0:.*]] = tensor.fill 0 : i64 : tensor<3xi64>
// CHECK-NEXT:    %{{.*}}, %y = tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %[[IOTA]] : tensor<3x5xf32>, tensor<5xi64>) outs(%[[V0]], %[[I0]] : tensor<3xf32>, tensor<3xi64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[I:.*]]: i64, %[[BEST:.*]]: f32, %[[BI:.*]]: i64):
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[BEST]] : f32
// CHECK:           %[[TAKE:.*]] = arith.ori %[[GT]], %{{.*}} : i1
// CHECK-NEXT:      %[[NV:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
// CHECK-NEXT:      %[[NI:.*]] = arith.select %[[TAKE]], %[[I]], %[[BI]] : i64
// CHECK-NEXT:      tensor.yield %[[NV]], %[[NI]] : f32, i64
// CHECK-NEXT:    } -> tensor<3xf32>, tensor<3xi64>
// CHECK-NEXT:    func.return %y : tensor<3xi64>

// -----

func.func @data_movement(%x: tensor<2x3x4xf32>, %z: tensor<2x1x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x4x4xf32>, tensor<24xf32>, tensor<2x3x2xf32>) {
  %t = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %c = graph.concat %x, %z {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  %shape = graph.constant dense<[24]> : tensor<1xi64>
  %r = graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  %starts = graph.constant dense<[-1]> : tensor<1xi64>
  %ends = graph.constant dense<[-100]> : tensor<1xi64>
  %axes = graph.constant dense<[2]> : tensor<1xi64>
  %steps = graph.constant dense<[-2]> : tensor<1xi64>
  %s = graph.slice %x, %starts, %ends, axes %axes, steps %steps : (tensor<2x3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3x2xf32>
  func.return %t, %c, %r, %s : tensor<4x2x3xf32>, tensor<2x4x4xf32>, tensor<24xf32>, tensor<2x3x2xf32>
}

// Transpose and Concat are the named tensor ops; a negative-step Slice reads
// x[3 - 2 * d2].
// CHECK-LABEL: func.func @data_movement(
// CHECK:         %t = tensor.transpose {permutation = array<i64: 2, 0, 1>} ins(%x : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    %c = tensor.concat %x, %z {dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT:    %r = tensor.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty : tensor<2x3x2xf32>
// CHECK-NEXT:    %s = tensor.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, ((d2 * -2) + 3))>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%[[E2]] : tensor<2x3x2xf32>) {
// CHECK-NOT:     graph.constant

// -----

func.func @shape_query(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  %s = graph.shape %x : (tensor<2x3xf32>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}

// CHECK-LABEL: func.func @shape_query(
// CHECK-NEXT:    %s = graph.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT:    func.return %s : tensor<2xi64>

// -----

func.func @pad_reflect(%t: tensor<2x4xf32>) -> tensor<2x7xf32> {
  %pads = graph.constant dense<[0, 2, 0, 1]> : tensor<4xi64>
  %p = graph.pad %t, %pads {mode = "reflect"} : (tensor<2x4xf32>, tensor<4xi64>) -> tensor<2x7xf32>
  func.return %p : tensor<2x7xf32>
}

// The input in the middle; the low side is t[:, 2:0:-1] (a reversed copy), the high side t[:, 2:3].
// CHECK-LABEL: func.func @pad_reflect(
// CHECK:         %[[MID:.*]] = tensor.insert_slice %t into %{{.*}} {offsets = array<i64: 0, 2>, sizes = array<i64: 2, 4>
// CHECK:         %[[LOW:.*]] = tensor.extract_slice %t {offsets = array<i64: 0, 1>, sizes = array<i64: 2, 2>
// CHECK:         tensor.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, ((d1 * -1) + 1))>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:         tensor.insert_slice %{{.*}} into %[[MID]] {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 2>
// CHECK:         tensor.extract_slice %t {offsets = array<i64: 0, 2>, sizes = array<i64: 2, 1>
// CHECK:         %p = tensor.insert_slice %{{.*}} {offsets = array<i64: 0, 6>, sizes = array<i64: 2, 1>

// -----

func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = graph.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// CHECK:      {{^}}convert-graph-to-tensor: graph.relu has dynamic shape tensor<?x4xf32>; the CPU pipeline needs static shapes{{$}}
// CHECK-NEXT: {{^// -{5}$}}
// FIRST:      {{^}}{{.*}}graph-to-tensor.mlir: error: convert-graph-to-tensor: graph.relu has dynamic shape tensor<?x4xf32>; the CPU pipeline needs static shapes{{$}}
// FIRST-NOT:  error
// FIRST-NOT:  Traceback

// -----

func.func @unsupported(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x2x2x2xf32>, %t: tensor<4x4xf32>, %v: tensor<f32>, %u: tensor<3xui8>) -> (tensor<1x3x3x3x3xf32>, tensor<6x6xf32>, tensor<6x6xf32>, tensor<3xui8>) {
  %c = graph.conv %x, %w : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x3x3x3xf32>
  %pads = graph.constant dense<1> : tensor<4xi64>
  %p = graph.pad %t, %pads, constant_value %v : (tensor<4x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<6x6xf32>
  %r = graph.pad %t, %pads, constant_value %v {mode = "reflect"} : (tensor<4x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<6x6xf32>
  %q = graph.pow %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  func.return %c, %p, %r, %q : tensor<1x3x3x3x3xf32>, tensor<6x6xf32>, tensor<6x6xf32>, tensor<3xui8>
}

// Every op that cannot be lowered, with the reason, in one message (the 3-D
// Conv and the reflect Pad, whose value is not read, lower).
// CHECK:      {{^}}convert-graph-to-tensor: cannot lower 2 ops: graph.pad (pads, constant_value and axes must be constants); graph.pow (unsigned integer operands){{$}}
