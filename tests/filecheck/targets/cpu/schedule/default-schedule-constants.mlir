// RUN: ember-opt %s -p "tensor-default-schedule{cpu=znver4}" | filecheck %s

// A constant panel operand (a `loop.weight` read along n and not along m: a
// matmul's B, an NHWC convolution's filter) is packed (`pack`), which
// `loop-generate` does at compile time, so it costs nothing per call.
// Where the row operand (A) fits in half the L2 cache (znver4: 512 KiB),
// n is tiled by one block, so that each block's panel is one contiguous
// stream, whether or not the weights outgrow L2; also with a single row (a
// batch-1 classifier).

func.func @constant(%a: memref<128x1024xf32>, %c: memref<128x768xf32>,
                    %v: memref<64x256xf32>, %o: memref<64x128xf32>,
                    %x: memref<1x256xf32>, %y: memref<1x128xf32>) {
  %b = loop.weight dense<1.0> : tensor<1024x768xf32> -> memref<1024x768xf32>
  %w = loop.weight dense<1.0> : tensor<256x128xf32> -> memref<256x128xf32>
  linalg.matmul ins(%a, %b : memref<128x1024xf32>, memref<1024x768xf32>) outs(%c : memref<128x768xf32>)
  linalg.matmul ins(%v, %w : memref<64x256xf32>, memref<256x128xf32>) outs(%o : memref<64x128xf32>)
  linalg.matmul ins(%x, %w : memref<1x256xf32>, memref<256x128xf32>) outs(%y : memref<1x128xf32>)
  func.return
}

// CHECK-LABEL: func.func @constant
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 48, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 8, 48]>}
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 64, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 4, 64]>}
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 64, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 1, 64]>}

// Where A outgrows half of L2 (2048 x 256, 2 MiB), the 1 MiB of weights
// keep the cache-blocking tile (8 blocks of 64 columns), made an odd
// number of blocks (7); 64 rows of A (64 KiB) take one block a tile.

func.func @large_rows(%a: memref<2048x256xf32>, %c: memref<2048x1024xf32>,
                      %x: memref<64x256xf32>, %y: memref<64x1024xf32>) {
  %b = loop.weight dense<1.0> : tensor<256x1024xf32> -> memref<256x1024xf32>
  linalg.matmul ins(%a, %b : memref<2048x256xf32>, memref<256x1024xf32>) outs(%c : memref<2048x1024xf32>)
  linalg.matmul ins(%x, %b : memref<64x256xf32>, memref<256x1024xf32>) outs(%y : memref<64x1024xf32>)
  func.return
}

// CHECK-LABEL: func.func @large_rows
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 448, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 4, 64]>}
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 64, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 4, 64]>}

// Must not fire: the same shapes with B an argument (a copy per call, rows
// not 4 KiB apart); a constant A (it depends on m: not a panel); a
// constant B whose n is not whole vectors (120 columns) and fits L2.

func.func @not_constant(%a: memref<128x1024xf32>, %b: memref<1024x768xf32>, %c: memref<128x768xf32>,
                        %v: memref<64x256xf32>, %o: memref<64x128xf32>,
                        %t: memref<256x128xf32>, %p: memref<64x120xf32>) {
  %u = loop.weight dense<1.0> : tensor<64x256xf32> -> memref<64x256xf32>
  %n = loop.weight dense<1.0> : tensor<256x120xf32> -> memref<256x120xf32>
  linalg.matmul ins(%a, %b : memref<128x1024xf32>, memref<1024x768xf32>) outs(%c : memref<128x768xf32>)
  linalg.matmul ins(%u, %t : memref<64x256xf32>, memref<256x128xf32>) outs(%o : memref<64x128xf32>)
  linalg.matmul ins(%v, %n : memref<64x256xf32>, memref<256x120xf32>) outs(%p : memref<64x120xf32>)
  func.return
}

// CHECK-LABEL: func.func @not_constant
// CHECK-NOT:     pack
// CHECK:         func.return

// A filled classifier whose 1000 columns are not whole vectors: n is still
// tiled by one block (15 of 64 and one of 40 columns, at least a vector,
// whose vectors overlap to end on column 1000), so the 1 MiB of weights
// are one stream per block. Must not fire: 1030 columns (a last tile of 6,
// less than a vector) and the same 1000 columns without the fill (the last
// tile's blocks would not start from a constant).

func.func @classifier(%x: memref<1x256xf32>, %y: memref<1x1000xf32>,
                      %z: memref<1x1030xf32>, %u: memref<1x1000xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = loop.weight dense<1.0> : tensor<256x1000xf32> -> memref<256x1000xf32>
  %v = loop.weight dense<1.0> : tensor<256x1030xf32> -> memref<256x1030xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x1000xf32>)
  linalg.matmul ins(%x, %w : memref<1x256xf32>, memref<256x1000xf32>) outs(%y : memref<1x1000xf32>)
  linalg.fill ins(%zero : f32) outs(%z : memref<1x1030xf32>)
  linalg.matmul ins(%x, %v : memref<1x256xf32>, memref<256x1030xf32>) outs(%z : memref<1x1030xf32>)
  linalg.matmul ins(%x, %w : memref<1x256xf32>, memref<256x1000xf32>) outs(%u : memref<1x1000xf32>)
  func.return
}

// CHECK-LABEL: func.func @classifier
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], tiles = [0, 64, 0], parallel = [0, 1], vector = 16, pack = [1], micro = [0, 1, 1, 64]>} ins(%x, %w
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 16, micro = [0, 1, 1, 64]>} ins(%x, %v
// CHECK:         linalg.matmul {schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 16, micro = [0, 1, 1, 32]>} ins(%x, %w
