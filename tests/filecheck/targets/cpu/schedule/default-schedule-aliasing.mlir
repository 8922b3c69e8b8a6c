// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver4}" | filecheck %s --check-prefix=AVX512
// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver3}" | filecheck %s --check-prefix=AVX2

// Weights whose rows lie a multiple of 4 KiB apart (1,024 floats) map every
// step of the reduction to the same L1 set: the default schedule packs them
// (pack = [1]) tile of columns by tile of columns, a tile of an odd number
// of blocks so that its rows spread over the sets. Here the cache-blocking
// tile (1 MiB of weights) is 8 blocks of 64 (znver4) or 16 of 16 (znver3):
// 7 and 15 blocks are packed.

func.func @aliased(%a: tensor<64x256xf32>, %b: tensor<256x1024xf32>, %c: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  func.return %r : tensor<64x1024xf32>
}

// AVX512-LABEL: func.func @aliased
// AVX512: linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 448, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 4, 64]>}
// AVX2-LABEL: func.func @aliased
// AVX2: linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 240, 0], parallel = [0, 1], vector = 8, pack = [1], micro = [0, 1, 4, 16]>}

// Must not fire: rows 4,160 bytes apart (1,040 floats), and rows 4 KiB
// apart read by too few row blocks to pay for a copy (8 rows).

func.func @not_aliased(%a: tensor<64x256xf32>, %b: tensor<256x1040xf32>, %c: tensor<64x1040xf32>,
                       %v: tensor<8x256xf32>, %w: tensor<256x1024xf32>, %o: tensor<8x1024xf32>)
                       -> (tensor<64x1040xf32>, tensor<8x1024xf32>) {
  %wide = linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x1040xf32>) outs(%c : tensor<64x1040xf32>) -> tensor<64x1040xf32>
  %few = linalg.matmul ins(%v, %w : tensor<8x256xf32>, tensor<256x1024xf32>) outs(%o : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  func.return %wide, %few : tensor<64x1040xf32>, tensor<8x1024xf32>
}

// AVX512-LABEL: func.func @not_aliased
// AVX512-NOT: pack
// AVX512: func.return
