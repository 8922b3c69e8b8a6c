// RUN: ember-opt %s --split-input-file --verify-diagnostics -p convert-graph-to-tensor | filecheck %s
// RUN: not ember-opt %s -p convert-graph-to-tensor 2>&1 | filecheck %s --check-prefix=FIRST

// convert-graph-to-tensor, one chunk per op family: elementwise ops become one
// generic with broadcasting in the indexing maps (a broadcast size-1 dim reads
// index 0, missing leading dims are dropped) and an arith/math body;
// windows become tensor.pad + linalg.fill + linalg.conv_2d_nchw_fchw or a
// pooling generic; Gemm/MatMul linalg.matmul (2-D) or a batched generic;
// Softmax and reductions reduction generics; data movement
// tensor.insert/extract_slice, tensor.reshape and copy generics with permuted
// or reversed maps. The last chunks
// are diagnostics: a dynamic shape, and every op that cannot be lowered (in
// one message). Without --split-input-file (FIRST), the first error stops
// ember-opt with a one-line message and exit status 1.

func.func @broadcast_add(%x: tensor<2x3x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = graph.add %x, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @broadcast_add(
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK-NEXT:    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : tensor<2x3x4xf32>, tensor<3x1xf32>) outs(%[[E]] : tensor<2x3x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
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
// CHECK:         %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT:      %[[SIG:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT:      linalg.yield %[[SIG]] : f32
// CHECK:         %g = linalg.generic
// CHECK:           arith.constant 1.41421354 : f32
// CHECK-NEXT:      arith.divf
// CHECK-NEXT:      math.erf
// CHECK:           linalg.yield

// -----

func.func @compare_select_cast(%x: tensor<2x4xf32>, %y: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %c = graph.less %x, %y : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %w = graph.where %c, %x, %y : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %f = graph.cast %i {to = f32} : (tensor<4xi64>) -> tensor<4xf32>
  func.return %w, %f : tensor<2x4xf32>, tensor<4xf32>
}

// Comparisons are ordered and give i1; Where is a select; Cast a conversion.
// CHECK-LABEL: func.func @compare_select_cast(
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x4xi1>
// CHECK-NEXT:    %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<2x4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<2x4xi1>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[LT]] : i1
// CHECK:         %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %x, %y : tensor<2x4xi1>, tensor<2x4xf32>, tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[C:.*]]: i1, %[[P:.*]]: f32, %[[Q:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[C]], %[[P]], %[[Q]] : f32
// CHECK-NEXT:      linalg.yield %[[SEL]] : f32
// CHECK:         %f = linalg.generic
// CHECK-NEXT:    ^bb0(%[[I:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK-NEXT:      linalg.yield %[[F]] : f32

// -----

func.func @dropout(%x: tensor<2x3xf32>, %r: tensor<f32>, %t: tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>) {
  %same = graph.dropout %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %y, %mask = graph.dropout %x, ratio %r, training_mode %t {seed = 7 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  func.return %same, %y, %mask : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>
}

// Dropout without training_mode is the identity. With it, one generic gives
// output and mask: the SplitMix64 number at the element's flat position
// (from 1) from the seed, its top 24 bits times 2^-24 compared with ratio;
// kept elements scaled by 1 / (1 - ratio) when training, the others 0.
// CHECK-LABEL: func.func @dropout(
// CHECK:         %y, %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %r, %t : tensor<2x3xf32>, tensor<f32>, tensor<i1>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[R:.*]]: f32, %[[T:.*]]: i1, %{{.*}}: f32, %{{.*}}: i1):
// CHECK:           %[[SEED:.*]] = arith.constant 7 : i64
// CHECK-NEXT:      %[[INCREMENT:.*]] = arith.constant -7046029254386353131 : i64
// CHECK:           %[[TOP_BITS:.*]] = arith.constant 40 : i64
// CHECK-NEXT:      %[[TOP:.*]] = arith.shrui %{{.*}}, %[[TOP_BITS]] : i64
// CHECK-NEXT:      %[[FLOAT:.*]] = arith.sitofp %[[TOP]] : i64 to f32
// CHECK-NEXT:      %[[ULP:.*]] = arith.constant 5.96046448e-08 : f32
// CHECK-NEXT:      %[[UNIFORM:.*]] = arith.mulf %[[FLOAT]], %[[ULP]] : f32
// CHECK:           %[[NOT_T:.*]] = arith.xori %[[T]], %{{.*}} : i1
// CHECK-NEXT:      %[[AT_LEAST:.*]] = arith.cmpf oge, %[[UNIFORM]], %[[R]] : f32
// CHECK-NEXT:      %[[KEEP:.*]] = arith.ori %[[NOT_T]], %[[AT_LEAST]] : i1
// CHECK:           %[[SCALED:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[DROPPED:.*]] = arith.select %[[KEEP]], %[[SCALED]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[OUT:.*]] = arith.select %[[T]], %[[DROPPED]], %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[OUT]], %[[KEEP]] : f32, i1
// CHECK:         func.return %x, %y, %mask

// -----

func.func @variadic(%a: tensor<3x4xf32>, %b: tensor<4xf32>, %c: tensor<3x1xf32>) -> tensor<3x4xf32> {
  %m = graph.max %a, %b, %c : (tensor<3x4xf32>, tensor<4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  func.return %m : tensor<3x4xf32>
}

// One generic for all operands; Max propagates NaN (maximumf).
// CHECK-LABEL: func.func @variadic(
// CHECK:         %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b, %c : tensor<3x4xf32>, tensor<4xf32>, tensor<3x1xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[AB:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[ABC:.*]] = arith.maximumf %[[AB]], %[[C]] : f32
// CHECK-NEXT:      linalg.yield %[[ABC]] : f32

// -----

func.func @conv_pads_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x4x4xf32> {
  %y = graph.conv %x, %w, B %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// CHECK-LABEL: func.func @conv_pads_bias(
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      %[[PV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      tensor.yield %[[PV]] : f32
// CHECK-NEXT:    } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
// CHECK-NEXT:    %[[ZV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZE:.*]] = tensor.empty() : tensor<1x16x4x4xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%[[ZV]] : f32) outs(%[[ZE]] : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NEXT:    %[[C:.*]] = linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[P]], %w : tensor<1x3x10x10xf32>, tensor<16x3x3x3xf32>) outs(%[[Z]] : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x16x4x4xf32>
// CHECK-NEXT:    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[C]], %b : tensor<1x16x4x4xf32>, tensor<16xf32>) outs(%[[E]] : tensor<1x16x4x4xf32>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[BIAS:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[V]], %[[BIAS]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32

// -----

func.func @pools(%x: tensor<1x2x6x6xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %m = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %a = graph.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  func.return %m, %a : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Max pooling pads and starts with NaN, which its NaN-skipping max drops;
// average pooling sums, then divides by the window size.
// CHECK-LABEL: func.func @pools(
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK:           arith.constant 0x7fc00000 : f32
// CHECK:         } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
// CHECK-NEXT:    %[[NAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:    %[[IE:.*]] = tensor.empty() : tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[I:.*]] = linalg.fill ins(%[[NAN]] : f32) outs(%[[IE]] : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[W:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT:    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P]], %[[W]] : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%[[I]] : tensor<1x2x3x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[MV:.*]]: f32, %{{.*}}: f32, %[[MACC:.*]]: f32):
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxnumf %[[MACC]], %[[MV]] : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
// CHECK:         %[[ZV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZE:.*]] = tensor.empty() : tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%[[ZV]] : f32) outs(%[[ZE]] : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[W2:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {{.*}} ins(%x, %[[W2]] : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%[[Z]] : tensor<1x2x3x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[SV:.*]]: f32, %{{.*}}: f32, %[[SACC:.*]]: f32):
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[SACC]], %[[SV]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32
// CHECK:         %a = linalg.generic
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:      %[[D:.*]] = arith.divf %[[V]], %[[N]] : f32
// CHECK-NEXT:      linalg.yield %[[D]] : f32

// -----

func.func @max_pool_indices(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
  %y, %i = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, storage_order = 1 : i64} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  func.return %y, %i : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
}

// MaxPool's Indices: one generic carries the best value and its position in
// the plane (a constant, column-major for storage_order 1, -1 in padding);
// a later element wins when greater, or when the best so far is NaN and it
// is not. A second generic adds the plane's offset, (n * C + c) * H * W.
// CHECK-LABEL: func.func @max_pool_indices(
// CHECK:         %[[POS:.*]] = graph.constant dense<{{\[}}[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]> : tensor<4x4xi64>
// CHECK-NEXT:    %[[NONE:.*]] = arith.constant -1 : i64
// CHECK:         %y, %[[AT:.*]] = linalg.generic {{.*}} ins(%x, %[[POS]], %{{.*}} : tensor<1x2x4x4xf32>, tensor<4x4xi64>, tensor<2x2xf32>) outs(%{{.*}}, %{{.*}} : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[P:.*]]: i64, %{{.*}}: f32, %[[B:.*]]: f32, %[[BP:.*]]: i64):
// CHECK:           %[[UNSET:.*]] = arith.cmpi slt, %[[BP]], %{{.*}} : i64
// CHECK-NEXT:      %[[GREATER:.*]] = arith.cmpf ogt, %[[V]], %[[B]] : f32
// CHECK:           %[[INSIDE:.*]] = arith.cmpi sge, %[[P]], %{{.*}} : i64
// CHECK-NEXT:      %[[TAKE:.*]] = arith.andi %{{.*}}, %[[INSIDE]] : i1
// CHECK-NEXT:      %[[NV:.*]] = arith.select %[[TAKE]], %[[V]], %[[B]] : f32
// CHECK-NEXT:      %[[NP:.*]] = arith.select %[[TAKE]], %[[P]], %[[BP]] : i64
// CHECK-NEXT:      linalg.yield %[[NV]], %[[NP]] : f32, i64
// CHECK:         %i = linalg.generic {{.*}} ins(%[[AT]] : tensor<1x2x2x2xi64>)
// CHECK:           %[[PLANE:.*]] = arith.constant 16 : i64
// CHECK-NEXT:      %[[OFFSET:.*]] = arith.muli %{{.*}}, %[[PLANE]] : i64
// CHECK-NEXT:      %{{.*}} = arith.addi %{{.*}}, %[[OFFSET]] : i64

// -----

func.func @gemm_trans_b(%a: tensor<2x8xf32>, %b: tensor<5x8xf32>, %c: tensor<5xf32>) -> tensor<2x5xf32> {
  %y = graph.gemm %a, %b, C %c {alpha = 5.000000e-01 : f32, transB = 1 : i64} : (tensor<2x8xf32>, tensor<5x8xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// transB (of a non-constant B) is a transposing copy generic; then
// linalg.matmul; then
// alpha * AB + C (C broadcast).
// CHECK-LABEL: func.func @gemm_trans_b(
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8x5xf32>
// CHECK-NEXT:    %[[BT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<5x8xf32>) outs(%[[E]] : tensor<8x5xf32>) {
// CHECK-NEXT:    ^bb0(%[[BV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[BV]] : f32
// CHECK-NEXT:    } -> tensor<8x5xf32>
// CHECK-NEXT:    %[[ZV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZE:.*]] = tensor.empty() : tensor<2x5xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%[[ZV]] : f32) outs(%[[ZE]] : tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %[[MM:.*]] = linalg.matmul ins(%a, %[[BT]] : tensor<2x8xf32>, tensor<8x5xf32>) outs(%[[Z]] : tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<2x5xf32>
// CHECK-NEXT:    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %c : tensor<2x5xf32>, tensor<5xf32>) outs(%[[E2]] : tensor<2x5xf32>) {
// CHECK-NEXT:    ^bb0(%[[AB:.*]]: f32, %[[CC:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ALPHA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[AB]], %[[ALPHA]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[SCALED]], %[[CC]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32

// -----

func.func @batched_matmul(%a: tensor<2x3x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %y = graph.matmul %a, %b : (tensor<2x3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  func.return %y : tensor<2x3x4x6xf32>
}

// B is broadcast to the batch dims, both operands reshaped to rank 3.
// CHECK-LABEL: func.func @batched_matmul(
// CHECK:         %[[BB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<3x5x6xf32>)
// CHECK:         %[[S3:.*]] = arith.constant dense<[6, 4, 5]> : tensor<3xi64>
// CHECK-NEXT:    %[[A3:.*]] = tensor.reshape %a(%[[S3]]) : (tensor<2x3x4x5xf32>, tensor<3xi64>) -> tensor<6x4x5xf32>
// CHECK-NEXT:    %[[T3:.*]] = arith.constant dense<[6, 5, 6]> : tensor<3xi64>
// CHECK-NEXT:    %[[B3:.*]] = tensor.reshape %[[BB]](%[[T3]]) : (tensor<2x3x5x6xf32>, tensor<3xi64>) -> tensor<6x5x6xf32>
// CHECK-NEXT:    %[[ZV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZE:.*]] = tensor.empty() : tensor<6x4x6xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%[[ZV]] : f32) outs(%[[ZE]] : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
// CHECK-NEXT:    %[[MM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[A3]], %[[B3]] : tensor<6x4x5xf32>, tensor<6x5x6xf32>) outs(%[[Z]] : tensor<6x4x6xf32>) {
// CHECK-NEXT:    ^bb0(%[[MA:.*]]: f32, %[[MB:.*]]: f32, %[[MACC:.*]]: f32):
// CHECK-NEXT:      %[[PROD:.*]] = arith.mulf %[[MA]], %[[MB]] : f32
// CHECK-NEXT:      %[[MAC:.*]] = arith.addf %[[MACC]], %[[PROD]] : f32
// CHECK-NEXT:      linalg.yield %[[MAC]] : f32
// CHECK-NEXT:    } -> tensor<6x4x6xf32>
// CHECK-NEXT:    %[[SY:.*]] = arith.constant dense<[2, 3, 4, 6]> : tensor<4xi64>
// CHECK-NEXT:    %y = tensor.reshape %[[MM]](%[[SY]]) : (tensor<6x4x6xf32>, tensor<4xi64>) -> tensor<2x3x4x6xf32>

// -----

func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %y = graph.softmax %x : (tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}

// max-reduce; p = exp(x - max) once; a sum-reduce of p whose adds may be
// reassociated (vectorised); then p / sum.
// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[NINFV:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[NINFE:.*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT:    %[[NINF:.*]] = linalg.fill ins(%[[NINFV]] : f32) outs(%[[NINFE]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x10xf32>) outs(%[[NINF]] : tensor<2xf32>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NEXT:    } -> tensor<2xf32>
// CHECK-NEXT:    %[[PE:.*]] = tensor.empty() : tensor<2x10xf32>
// CHECK-NEXT:    %[[P:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %[[MAX]] : tensor<2x10xf32>, tensor<2xf32>) outs(%[[PE]] : tensor<2x10xf32>) {
// CHECK-NEXT:    ^bb0(%[[V2:.*]]: f32, %[[M2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V2]], %[[M2]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      linalg.yield %[[EXP]] : f32
// CHECK-NEXT:    } -> tensor<2x10xf32>
// CHECK-NEXT:    %[[ZV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZE:.*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = linalg.fill ins(%[[ZV]] : f32) outs(%[[ZE]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<2x10xf32>) outs(%[[ZERO]] : tensor<2xf32>) {
// CHECK-NEXT:    ^bb0(%[[P2:.*]]: f32, %[[ACC2:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC2]], %[[P2]] fastmath<reassoc> : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<2xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x10xf32>
// CHECK-NEXT:    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[SUM]] : tensor<2x10xf32>, tensor<2xf32>) outs(%[[E]] : tensor<2x10xf32>) {
// CHECK-NEXT:    ^bb0(%[[P3:.*]]: f32, %[[S3:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[P3]], %[[S3]] : f32
// CHECK-NEXT:      linalg.yield %[[Q]] : f32

// -----

func.func @batch_norm_training(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %rm, %rv = graph.batch_normalization %x, %s, %b, %m, %v {momentum = 7.500000e-01 : f32, training_mode = 1 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %y, %rm, %rv : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// BatchNormalization in training mode: the batch's mean and variance per
// channel (reductions over dims 0 and 2, each divided by 8), which the
// running statistics take in with weight 1 - momentum, and which normalise.
// CHECK-LABEL: func.func @batch_norm_training(
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%x : tensor<2x3x4xf32>)
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<3xf32>)
// CHECK:           arith.constant 8.000000e+00 : f32
// CHECK:         %[[SQUARES:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%x, %[[MEAN]] : tensor<2x3x4xf32>, tensor<3xf32>)
// CHECK:         %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[SQUARES]] : tensor<3xf32>)
// CHECK:         %rm = linalg.generic {{.*}} ins(%m, %[[MEAN]] : tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[OLD:.*]]: f32, %[[NEW:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[MOMENTUM:.*]] = arith.constant 7.500000e-01 : f32
// CHECK-NEXT:      %[[KEPT:.*]] = arith.mulf %[[OLD]], %[[MOMENTUM]] : f32
// CHECK-NEXT:      %[[REST:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:      %[[TAKEN:.*]] = arith.mulf %[[NEW]], %[[REST]] : f32
// CHECK-NEXT:      %[[RM:.*]] = arith.addf %[[KEPT]], %[[TAKEN]] : f32
// CHECK-NEXT:      linalg.yield %[[RM]] : f32
// CHECK:         %rv = linalg.generic {{.*}} ins(%v, %[[VAR]] : tensor<3xf32>, tensor<3xf32>)
// CHECK:         %y = linalg.generic {{.*}} ins(%x, %s, %b, %[[MEAN]], %[[VAR]] : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK:         func.return %y, %rm, %rv

// -----

func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %axes = graph.constant dense<[1]> : tensor<1xi64>
  %y = graph.reduce_mean %x, axes %axes : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
  func.return %y : tensor<2x1x4xf32>
}

// The axes constant is gone; the sum is a reduction generic, the division a
// generic, and keepdims a reshape.
// CHECK-LABEL: func.func @reduce_mean(
// CHECK-NEXT:    %[[ZV:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZE:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%[[ZV]] : f32) outs(%[[ZE]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%[[Z]] : tensor<2x4xf32>) {
// CHECK:         %[[M:.*]] = linalg.generic
// CHECK:           arith.constant 3.000000e+00 : f32
// CHECK-NEXT:      arith.divf
// CHECK:         %y = tensor.reshape %[[M]](%{{.*}}) : (tensor<2x4xf32>, tensor<3xi64>) -> tensor<2x1x4xf32>

// -----

func.func @argmax(%x: tensor<3x5xf32>) -> tensor<3xi64> {
  %y = graph.arg_max %x {axis = 1 : i64, keepdims = 0 : i64} : (tensor<3x5xf32>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// Two outputs (best value, its index); indices come from an iota constant.
// CHECK-LABEL: func.func @argmax(
// CHECK-NEXT:    %[[IOTA:.*]] = graph.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK-NEXT:    %[[V0V:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[V0E:.*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT:    %[[V0:.*]] = linalg.fill ins(%[[V0V]] : f32) outs(%[[V0E]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[I0V:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[I0E:.*]] = tensor.empty() : tensor<3xi64>
// CHECK-NEXT:    %[[I0:.*]] = linalg.fill ins(%[[I0V]] : i64) outs(%[[I0E]] : tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %{{.*}}, %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %[[IOTA]] : tensor<3x5xf32>, tensor<5xi64>) outs(%[[V0]], %[[I0]] : tensor<3xf32>, tensor<3xi64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[I:.*]]: i64, %[[B:.*]]: f32, %[[BI:.*]]: i64):
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[B]] : f32
// CHECK:           %[[TAKE:.*]] = arith.ori %[[GT]], %{{.*}} : i1
// CHECK-NEXT:      %[[NV:.*]] = arith.select %[[TAKE]], %[[V]], %[[B]] : f32
// CHECK-NEXT:      %[[NI:.*]] = arith.select %[[TAKE]], %[[I]], %[[BI]] : i64
// CHECK-NEXT:      linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK-NEXT:    } -> (tensor<3xf32>, tensor<3xi64>)
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
// CHECK:         %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) {
// CHECK:         %c = tensor.concat dim(1) %x, %z : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT:    %[[RS:.*]] = arith.constant dense<24> : tensor<1xi64>
// CHECK-NEXT:    %r = tensor.reshape %x(%[[RS]]) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<24xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<2x3x2xf32>
// CHECK-NEXT:    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, ((d2 * -2) + 3))>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%[[E2]] : tensor<2x3x2xf32>) {
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
// CHECK:         %[[MID:.*]] = tensor.insert_slice %t into %{{.*}}[0, 2] [2, 4] [1, 1]
// CHECK:         %[[LOW:.*]] = tensor.extract_slice %t[0, 1] [2, 2] [1, 1]
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, ((d1 * -1) + 1))>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:         tensor.insert_slice %{{.*}} into %[[MID]][0, 0] [2, 2] [1, 1]
// CHECK:         tensor.extract_slice %t[0, 2] [2, 1] [1, 1]
// CHECK:         %p = tensor.insert_slice %{{.*}}[0, 6] [2, 1] [1, 1]

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
// CHECK:      {{^}}convert-graph-to-tensor: cannot lower 2 ops: graph.pad (pads, constant_value and axes must be constants); graph.pow (unsigned integer base){{$}}
