// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver4}" | filecheck %s --check-prefix=AVX512
// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver3}" | filecheck %s --check-prefix=AVX2

// A run-time B whose panel for one block (16384 x 64 floats, 4 MiB on
// znver4; 16384 x 16, 1 MiB on znver3) outgrows the L2 cache, read by 128
// row blocks: every row block would stream it again as 16,384 short rows 2
// KiB apart, so the default schedule copies it per call (pack = [1]), one
// contiguous stream per block.

func.func @long(%a: tensor<512x16384xf32>, %b: tensor<16384x512xf32>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<512x16384xf32>, tensor<16384x512xf32>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  func.return %r : tensor<512x512xf32>
}

// AVX512-LABEL: func.func @long
// AVX512: linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 64, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 4, 64]>}
// AVX2-LABEL: func.func @long
// AVX2: linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 16, 0], parallel = [0, 1], vector = 8, pack = [1], micro = [0, 1, 4, 16]>}

// Must not fire: a block's panel that fits the L2 cache (K = 1024), too few
// row blocks to pay for the copy (96 rows), and n not whole vectors (516).

func.func @not_long(%a: tensor<512x1024xf32>, %b: tensor<1024x512xf32>, %c: tensor<512x512xf32>,
                    %v: tensor<96x16384xf32>, %w: tensor<16384x512xf32>, %o: tensor<96x512xf32>,
                    %x: tensor<512x16384xf32>, %y: tensor<16384x516xf32>, %z: tensor<512x516xf32>)
                    -> (tensor<512x512xf32>, tensor<96x512xf32>, tensor<512x516xf32>) {
  %short = linalg.matmul ins(%a, %b : tensor<512x1024xf32>, tensor<1024x512xf32>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  %few = linalg.matmul ins(%v, %w : tensor<96x16384xf32>, tensor<16384x512xf32>) outs(%o : tensor<96x512xf32>) -> tensor<96x512xf32>
  %ragged = linalg.matmul ins(%x, %y : tensor<512x16384xf32>, tensor<16384x516xf32>) outs(%z : tensor<512x516xf32>) -> tensor<512x516xf32>
  func.return %short, %few, %ragged : tensor<512x512xf32>, tensor<96x512xf32>, tensor<512x516xf32>
}

// AVX512-LABEL: func.func @not_long
// AVX512-NOT: pack
// AVX512: func.return
// AVX2-LABEL: func.func @not_long
// AVX2-NOT: pack
// AVX2: func.return
