// RUN: ember-opt %s -p convert-loop-to-llvm | filecheck %s

// Elementwise arith on vectors, as a micro-kernel's epilogue has it (bias
// add, Relu against a splat zero): the float ops take the vector type
// unchanged, and an intrinsic's name carries the vector type (v8f32).
func.func @bias_relu(%acc_in: memref<8xf32>, %bias: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.000000e+00 : f32
  %acc = vector.load %acc_in[%c0] : memref<8xf32>, vector<8xf32>
  %b = vector.load %bias[%c0] : memref<8xf32>, vector<8xf32>
  %sum = arith.addf %acc, %b : vector<8xf32>
  %zeros = vector.broadcast %zero : f32 to vector<8xf32>
  %relu = arith.maximumf %sum, %zeros : vector<8xf32>
  %low = arith.minnumf %relu, %b : vector<8xf32>
  vector.store %low, %out[%c0] : memref<8xf32>, vector<8xf32>
  func.return
}

// CHECK-LABEL: llvm.func @bias_relu
// CHECK:         %[[SUM:.*]] = llvm.fadd %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         %[[RELU:.*]] = llvm.call_intrinsic "llvm.maximum.v8f32"(%[[SUM]], %{{.*}}) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK:         llvm.call_intrinsic "llvm.minnum.v8f32"(%[[RELU]], %{{.*}}) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
