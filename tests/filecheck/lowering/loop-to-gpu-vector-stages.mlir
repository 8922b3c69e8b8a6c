// RUN: ember-opt %s --split-input-file -p convert-loop-to-gpu | filecheck %s

// Loads of 4: the row operand (70 x 96, k innermost) and the column operand
// (96 x 80, n innermost) are contiguous along k and n, extents multiples of
// 4; each thread loads 64 x 16 / 4 / 256 = 1 vector of each per step, zero
// past the edges, and stores it into the tile as one vector.

func.func @vector(%a: memref<70x96xf32>, %b: memref<96x80xf32>, %c: memref<70x80xf32>) {
  loop.kernel {
    linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [4, 4]>} ins(%a, %b : memref<70x96xf32>, memref<96x80xf32>) outs(%c : memref<70x80xf32>)
  }
  func.return
}

// CHECK-LABEL: "gpu.func"
// CHECK:           %[[ROW:.*]] = ember_gpu.shared : memref<64x16xf32, 3 : i64>
// CHECK:           %[[COLUMN:.*]] = ember_gpu.shared : memref<16x64xf32, 3 : i64>
// CHECK:           %[[ZEROS:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK:           scf.for
// CHECK:             %[[A:.*]] = scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT:          %[[LA:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<70x96xf32>, vector<4xf32>
// CHECK-NEXT:          scf.yield %[[LA]] : vector<4xf32>
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %[[ZEROS]] : vector<4xf32>
// CHECK:             %[[B:.*]] = scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT:          vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<96x80xf32>, vector<4xf32>
// CHECK-NOT:         scf.if
// CHECK:             vector.store %[[A]], %[[ROW]][%{{.*}}, %{{.*}}] : memref<64x16xf32, 3 : i64>, vector<4xf32>
// CHECK-NEXT:        vector.store %[[B]], %[[COLUMN]][%{{.*}}, %{{.*}}] : memref<16x64xf32, 3 : i64>, vector<4xf32>
// CHECK-NEXT:        "gpu.barrier"

// -----

// Two stages: pairs of tiles; the first step's tiles are stored into pair 0
// before the loop and a barrier; each step loads the next step's tiles
// (k0 + 16), accumulates from pair (k0 / 16) % 2, stores into the other
// pair, and meets the block at its one barrier. Loads of 2 for the row
// operand, scalars (4 a thread) for the column one (vector = [2, 1]).

func.func @stages(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) {
  loop.kernel {
    linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [2, 1], stages = 2>} ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  }
  func.return
}

// CHECK-LABEL: "gpu.func"
// CHECK:           %[[ROW:.*]] = ember_gpu.shared : memref<2x64x16xf32, 3 : i64>
// CHECK:           %[[COLUMN:.*]] = ember_gpu.shared : memref<2x16x64xf32, 3 : i64>
// CHECK:           %[[C0:.*]] = arith.constant 0 : index
// CHECK:           vector.load %{{.*}} : memref<64x32xf32>, vector<2xf32>
// CHECK:           memref.load %{{.*}} : memref<32x64xf32>
// CHECK:           vector.store %{{.*}}, %[[ROW]][%[[C0]], %{{.*}}, %{{.*}}] : memref<2x64x16xf32, 3 : i64>, vector<2xf32>
// CHECK:           memref.store %{{.*}}, %[[COLUMN]][%[[C0]], %{{.*}}, %{{.*}}] : memref<2x16x64xf32, 3 : i64>
// CHECK:           "gpu.barrier"
// CHECK-NEXT:      scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %[[C16:.*]] iter_args
// CHECK-NEXT:        %[[STEP:.*]] = arith.divui %[[K0]], %[[C16]] : index
// CHECK-NEXT:        %[[NOW:.*]] = arith.remui %[[STEP]], %{{.*}} : index
// CHECK-NEXT:        %[[NEXT:.*]] = arith.subi %{{.*}}, %[[NOW]] : index
// CHECK-NEXT:        %[[K1:.*]] = arith.addi %[[K0]], %[[C16]] : index
// CHECK-NOT:         "gpu.barrier"
// CHECK:             vector.load %{{.*}} : memref<64x32xf32>, vector<2xf32>
// CHECK-NOT:         "gpu.barrier"
// CHECK:             scf.for
// CHECK:               memref.load %[[ROW]][%[[NOW]], %{{.*}}, %{{.*}}] : memref<2x64x16xf32, 3 : i64>
// CHECK:               memref.load %[[COLUMN]][%[[NOW]], %{{.*}}, %{{.*}}] : memref<2x16x64xf32, 3 : i64>
// CHECK:             vector.store %{{.*}}, %[[ROW]][%[[NEXT]], %{{.*}}, %{{.*}}]
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[COLUMN]][%[[NEXT]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:        "gpu.barrier"
// CHECK-NEXT:        scf.yield
// CHECK-NOT:       "gpu.barrier"
// CHECK:           "gpu.return"

// -----

// Must not vectorise: the default vector = [1, 1] loads scalars and one
// stage keeps 2-D tiles and two barriers a step.

func.func @scalar(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) {
  loop.kernel {
    linalg.matmul {schedule = #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16>} ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  }
  func.return
}

// CHECK-LABEL: "gpu.func"
// CHECK-NOT:       vector.
// CHECK:           ember_gpu.shared : memref<64x16xf32, 3 : i64>
// CHECK:           scf.for
// CHECK:             "gpu.barrier"
// CHECK:             "gpu.barrier"
// CHECK-NOT:       vector.
// CHECK:           "gpu.return"
