// RUN: ember-opt %s -p graph-widen-accumulators,dce | filecheck %s

// A half-precision MatMul computes in f32: its input cast to f32 in front,
// its constant weight converted once (a new f32 constant), its result cast
// back to f16. One of four rows or fewer keeps its half weights (the
// lowering widens them in registers: keeps_half_weights). Elementwise ops and
// float32 ops are left alone.

func.func @matmul(%x: tensor<8x8xf16>) -> tensor<8x2xf16> {
  %w = graph.constant dense<0.5> : tensor<8x2xf16>
  %y = graph.matmul %x, %w : (tensor<8x8xf16>, tensor<8x2xf16>) -> tensor<8x2xf16>
  func.return %y : tensor<8x2xf16>
}
func.func @matmul_few_rows(%x: tensor<4x8xf16>) -> tensor<4x2xf16> {
  %w = graph.constant dense<0.5> : tensor<8x2xf16>
  %y = graph.matmul %x, %w : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  func.return %y : tensor<4x2xf16>
}
func.func @reduce_bf16(%x: tensor<4x8xbf16>) -> tensor<4x1xbf16> {
  %axes = graph.constant dense<1> : tensor<1xi64>
  %y = graph.reduce_sum %x, axes %axes : (tensor<4x8xbf16>, tensor<1xi64>) -> tensor<4x1xbf16>
  func.return %y : tensor<4x1xbf16>
}
func.func @einsum_bf16(%a: tensor<5x2x3xbf16>, %b: tensor<5x3x4xbf16>) -> tensor<5x2x4xbf16> {
  %y = graph.einsum %a, %b {equation = "bij, bjk -> bik"} : (tensor<5x2x3xbf16>, tensor<5x3x4xbf16>) -> tensor<5x2x4xbf16>
  func.return %y : tensor<5x2x4xbf16>
}
func.func @top_k_bf16(%x: tensor<3x5xbf16>, %k: tensor<1xi64>) -> tensor<3x2xbf16> {
  %values, %indices = graph.top_k %x, %k : (tensor<3x5xbf16>, tensor<1xi64>) -> (tensor<3x2xbf16>, tensor<3x2xi64>)
  func.return %values : tensor<3x2xbf16>
}
func.func @top_k_f16(%x: tensor<3x5xf16>, %k: tensor<1xi64>) -> tensor<3x2xf16> {
  %values, %indices = graph.top_k %x, %k : (tensor<3x5xf16>, tensor<1xi64>) -> (tensor<3x2xf16>, tensor<3x2xi64>)
  func.return %values : tensor<3x2xf16>
}
func.func @relu(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %y = graph.relu %x : (tensor<4xbf16>) -> tensor<4xbf16>
  func.return %y : tensor<4xbf16>
}
func.func @float32(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %[[X:.*]] = graph.cast %x {to = f32} : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<5.000000e-01> : tensor<8x2xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %[[X]], %[[W]] : (tensor<8x8xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
// CHECK-NEXT:    %y = graph.cast %[[P]] {to = f16} : (tensor<8x2xf32>) -> tensor<8x2xf16>
// CHECK-NEXT:    func.return %y : tensor<8x2xf16>

// CHECK-LABEL: func.func @matmul_few_rows(
// CHECK-NEXT:    %w = graph.constant dense<5.000000e-01> : tensor<8x2xf16>
// CHECK-NEXT:    %y = graph.matmul %x, %w : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>

// The axes (i64) stay as they are.
// CHECK-LABEL: func.func @reduce_bf16(
// CHECK:         %[[XW:.*]] = graph.cast %x {to = f32} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.reduce_sum %[[XW]], axes %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
// CHECK-NEXT:    %y = graph.cast %[[S]] {to = bf16} : (tensor<4x1xf32>) -> tensor<4x1xbf16>

// Both operands of a product of the newer ops too.
// CHECK-LABEL: func.func @einsum_bf16(
// CHECK-NEXT:    %[[A:.*]] = graph.cast %a {to = f32} : (tensor<5x2x3xbf16>) -> tensor<5x2x3xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.cast %b {to = f32} : (tensor<5x3x4xbf16>) -> tensor<5x3x4xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.einsum %[[A]], %[[B]] {equation = "bij, bjk -> bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
// CHECK-NEXT:    %y = graph.cast %[[E]] {to = bf16} : (tensor<5x2x4xf32>) -> tensor<5x2x4xbf16>

// TopK compares: f32 for a narrow float, which has no arithmetic; f16 as it is.
// CHECK-LABEL: func.func @top_k_bf16(
// CHECK:         graph.top_k %{{.*}}, %k : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK:         graph.cast %{{.*}} {to = bf16} : (tensor<3x2xf32>) -> tensor<3x2xbf16>
// CHECK-LABEL: func.func @top_k_f16(
// CHECK-NEXT:    %values, %indices = graph.top_k %x, %k : (tensor<3x5xf16>, tensor<1xi64>) -> (tensor<3x2xf16>, tensor<3x2xi64>)

// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    %y = graph.relu %x : (tensor<4xbf16>) -> tensor<4xbf16>

// CHECK-LABEL: func.func @float32(
// CHECK-NEXT:    %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
