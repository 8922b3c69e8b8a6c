// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver4}" | filecheck %s --check-prefix=AVX512
// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver3}" | filecheck %s --check-prefix=AVX2

// Cache blocking: where the operand that depends on n and not on m (B, the
// weights) is more than half the L2 cache and the row blocks would each read
// all of it again, n is tiled so that one tile's share fits that half.
// znver4 (1 MiB L2, blocks of 64 columns): 832 x 4 bytes a column, 157
// columns fit, so 2 blocks: 128, which divides 384. znver3 (512 KiB, blocks
// of 16): 78 columns fit, 64 divides 384.

func.func @weights_past_l2(%a: tensor<36x832xf32>, %b: tensor<832x384xf32>, %c: tensor<36x384xf32>) -> tensor<36x384xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<36x832xf32>, tensor<832x384xf32>) outs(%c : tensor<36x384xf32>) -> tensor<36x384xf32>
  func.return %r : tensor<36x384xf32>
}

// AVX512-LABEL: func.func @weights_past_l2
// AVX512: linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 128, 0], parallel = [0, 1], vector = 16, micro = [0, 1, 6, 64]>}
// AVX2-LABEL: func.func @weights_past_l2
// AVX2: linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 64, 0], parallel = [0, 1], vector = 8, micro = [0, 1, 6, 16]>}

// Where no multiple of the block that divides n is at least half the
// largest tile that fits, the largest is taken: 400 columns as 3 tiles of
// 128 and a remainder tile of 16.

func.func @no_dividing_tile(%a: tensor<36x832xf32>, %b: tensor<832x400xf32>, %c: tensor<36x400xf32>) -> tensor<36x400xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<36x832xf32>, tensor<832x400xf32>) outs(%c : tensor<36x400xf32>) -> tensor<36x400xf32>
  func.return %r : tensor<36x400xf32>
}

// AVX512-LABEL: func.func @no_dividing_tile
// AVX512: tiles = [0, 128, 0]

// Must not fire: weights that fit in half the L2 (64 KiB here), and one row
// block (a matrix-vector product reads each weight once anyway).

func.func @not_blocked(%a: tensor<36x64xf32>, %b: tensor<64x256xf32>, %c: tensor<36x256xf32>,
                       %v: tensor<1x832xf32>, %w: tensor<832x384xf32>, %o: tensor<1x384xf32>)
                       -> (tensor<36x256xf32>, tensor<1x384xf32>) {
  %small = linalg.matmul ins(%a, %b : tensor<36x64xf32>, tensor<64x256xf32>) outs(%c : tensor<36x256xf32>) -> tensor<36x256xf32>
  %row = linalg.matmul ins(%v, %w : tensor<1x832xf32>, tensor<832x384xf32>) outs(%o : tensor<1x384xf32>) -> tensor<1x384xf32>
  func.return %small, %row : tensor<36x256xf32>, tensor<1x384xf32>
}

// AVX512-LABEL: func.func @not_blocked
// AVX512-NOT:   tiles
// AVX512:       func.return
