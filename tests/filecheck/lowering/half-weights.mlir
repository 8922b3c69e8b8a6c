// RUN: ember-opt %s -p 'graph-optimize,convert-graph-to-tensor' | filecheck %s --check-prefix=TENSOR
// RUN: ember-opt %s -p 'graph-optimize,convert-graph-to-tensor,convert-tensor-to-loop,tensor-default-schedule{cpu=znver4},loop-generate' | filecheck %s --check-prefix=LOOP

// A half MatMul of a few rows by constant weights keeps them in the half
// type (graph-widen-accumulators leaves it alone: keeps_half_weights).
// In bfloat16 it runs on pairs: the weights become pairs of rows, (K/2, N, 2), one generic sums
// A[m, 2 k2 + p] * B[k2, n, p] in f32 from widened operands, and a second
// rounds to bfloat16. Its micro-kernel reads each row's pair as one 32-bit
// word broadcast to every lane, 32 bfloat16 of the packed weights per vector,
// and takes one loop.bf16_dot (vdpbf16ps) per accumulator and pair of k.
// Eight rows or more are widened to f32 instead (the f32 weights then).
// In float16 the generic sums extf(A[m, k]) * extf(B[k, n]) and the
// micro-kernel widens each float16 vector it reads (vcvtph2ps) and each row's
// element before its broadcast.
func.func @two_rows(%x: tensor<2x4xbf16>) -> tensor<2x16xbf16> {
  %w = graph.constant dense<"0x40C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C0"> : tensor<4x16xbf16>
  %y = graph.matmul %x, %w : (tensor<2x4xbf16>, tensor<4x16xbf16>) -> tensor<2x16xbf16>
  func.return %y : tensor<2x16xbf16>
}

func.func @eight_rows(%x: tensor<8x4xbf16>) -> tensor<8x16xbf16> {
  %w = graph.constant dense<"0x40C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C000C080BF0000803F0040404040C0"> : tensor<4x16xbf16>
  %y = graph.matmul %x, %w : (tensor<8x4xbf16>, tensor<4x16xbf16>) -> tensor<8x16xbf16>
  func.return %y : tensor<8x16xbf16>
}

func.func @float16_rows(%x: tensor<2x4xf16>) -> tensor<2x16xf16> {
  %w = graph.constant dense<1.5> : tensor<4x16xf16>
  %y = graph.matmul %x, %w : (tensor<2x4xf16>, tensor<4x16xf16>) -> tensor<2x16xf16>
  func.return %y : tensor<2x16xf16>
}

// TENSOR-LABEL: func.func @two_rows
// TENSOR:         %[[PAIRS:.*]] = graph.constant dense<{{.*}}> : tensor<2x16x2xbf16>
// TENSOR:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, ((d2 * 2) + d3))>, affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %[[PAIRS]] : tensor<2x4xbf16>, tensor<2x16x2xbf16>) outs(%{{.*}} : tensor<2x16xf32>)
// TENSOR-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[OUT:.*]]: f32):
// TENSOR-NEXT:      %[[WA:.*]] = arith.extf %[[A]] : bf16 to f32
// TENSOR-NEXT:      %[[WB:.*]] = arith.extf %[[B]] : bf16 to f32
// TENSOR-NEXT:      %[[P:.*]] = arith.mulf %[[WA]], %[[WB]] : f32
// TENSOR-NEXT:      %[[S:.*]] = arith.addf %[[OUT]], %[[P]] : f32
// TENSOR:         linalg.generic {{.*}} ins(%{{.*}} : tensor<2x16xf32>) outs(%{{.*}} : tensor<2x16xbf16>)
// TENSOR-LABEL: func.func @eight_rows
// TENSOR:         graph.constant dense<{{.*}}> : tensor<4x16xf32>
// TENSOR-NOT:     tensor<2x16x2xbf16>
// TENSOR:         linalg.matmul

// TENSOR-LABEL: func.func @float16_rows
// TENSOR:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x4xf16>, tensor<4x16xf16>) outs(%{{.*}} : tensor<2x16xf32>)
// TENSOR-NEXT:    ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %[[OUT:.*]]: f32):
// TENSOR-NEXT:      %{{.*}} = arith.extf %[[A]] : f16 to f32
// TENSOR-NEXT:      %{{.*}} = arith.extf %[[B]] : f16 to f32
// TENSOR:         arith.truncf %{{.*}} : f32 to f16

// LOOP-LABEL: func.func @two_rows
// LOOP:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC0:.*]] = %{{.*}}, %[[ACC1:.*]] = %{{.*}}) -> (vector<16xf32>, vector<16xf32>)
// LOOP:           %[[PAIR:.*]] = vector.load %x[%{{.*}}, %{{.*}}] : memref<2x4xbf16>, vector<2xbf16>
// LOOP-NEXT:      %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// LOOP-NEXT:      %[[WORDS:.*]] = vector.shuffle %[[WORD]], %[[WORD]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<1xi32>, vector<1xi32>
// LOOP-NEXT:      %[[ROW0:.*]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<32xbf16>
// LOOP:           %[[COLUMNS:.*]] = vector.load %{{.*}}[%[[K]], %{{.*}}, %{{.*}}] : memref<2x16x2xbf16>, vector<32xbf16>
// LOOP-NEXT:      %{{.*}} = loop.bf16_dot %[[ACC0]], %[[ROW0]], %[[COLUMNS]] : vector<16xf32>, vector<32xbf16>
// LOOP-NEXT:      %{{.*}} = loop.bf16_dot %[[ACC1]], %{{.*}}, %[[COLUMNS]] : vector<16xf32>, vector<32xbf16>
// LOOP-LABEL: func.func @eight_rows
// LOOP-NOT:     loop.bf16_dot
// LOOP:         vector.fma
// LOOP-LABEL: func.func @float16_rows
// LOOP:           %[[ROW:.*]] = arith.extf %{{.*}} : f16 to f32
// LOOP-NEXT:      %[[SPLAT:.*]] = vector.broadcast %[[ROW]] : f32 to vector<16xf32>
// LOOP-NEXT:      %[[HALVES:.*]] = vector.load %{{.*}} : memref<4x16xf16>, vector<16xf16>
// LOOP-NEXT:      %[[WIDE:.*]] = arith.extf %[[HALVES]] : vector<16xf16> to vector<16xf32>
// LOOP-NEXT:      %{{.*}} = vector.fma %[[SPLAT]], %[[WIDE]], %{{.*}} : vector<16xf32>
