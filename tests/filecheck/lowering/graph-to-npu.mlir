// RUN: ember-opt %s --split-input-file -p graph-partition-npu,convert-graph-to-npu | filecheck %s
// RUN: ember-opt %s --split-input-file -p graph-partition-npu,convert-graph-to-npu | ember-opt --split-input-file | filecheck %s

// convert-graph-to-npu: each npu.segment becomes an npu.program of its name
// (the tokens checked by its verifier) and an npu.launch of it with the
// DRAM addresses of its operands and results. DRAM: the ones column at 0,
// then the weights (W at 64, the bias at 128), the input (192), the output.

func.func @layer(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = graph.constant dense<1.0> : tensor<3x4xf32>
  %b = graph.constant dense<0.5> : tensor<4xf32>
  %h = graph.gemm %x, %w, C %b : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %h : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// The ones column, A (2 rows of 3) and B (3 rows of 4) loaded, the last
// load giving compute its token; the product; the bias as a k = 1 gemm of
// the ones by the bias row; ReLU in the accumulator; the store.
// CHECK-LABEL: func.func @layer(
// CHECK-NEXT:    %r = npu.launch @npu0 (%x) {inputs = [192 : i64], outputs = [256 : i64]} : (tensor<2x3xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %r
// CHECK:       npu.program "npu0" {
// CHECK-NEXT:    npu.load {dram_addr = 0 : i64, stride = 4 : i64, local = [[ONES:[0-9]+]] : i64, rows = 16 : i64, cols = 1 : i64, to_acc = 0 : i64, elem = 2 : i64}
// CHECK-NEXT:    npu.load {dram_addr = 192 : i64, stride = 12 : i64, local = [[A:[0-9]+]] : i64, rows = 2 : i64, cols = 3 : i64, to_acc = 0 : i64, elem = 2 : i64}
// CHECK-NEXT:    npu.load {dram_addr = 64 : i64, stride = 16 : i64, local = [[B:[0-9]+]] : i64, rows = 3 : i64, cols = 4 : i64, to_acc = 0 : i64, elem = 2 : i64, push_next}
// CHECK-NEXT:    npu.gemm {a = [[A]] : i64, b = [[B]] : i64, c = 0 : i64, m = 2 : i64, k = 3 : i64, n = 4 : i64, accumulate = 0 : i64, elem = 2 : i64, pop_prev}
// CHECK-NEXT:    npu.load {dram_addr = 128 : i64, stride = 16 : i64, local = [[BIAS:[0-9]+]] : i64, rows = 1 : i64, cols = 4 : i64, to_acc = 0 : i64, elem = 2 : i64, push_next}
// CHECK-NEXT:    npu.gemm {a = [[ONES]] : i64, b = [[BIAS]] : i64, c = 0 : i64, m = 2 : i64, k = 1 : i64, n = 4 : i64, accumulate = 1 : i64, elem = 2 : i64, pop_prev}
// CHECK-NEXT:    npu.alu {op = 5 : i64, src = 0 : i64, src2 = 0 : i64, dst = 0 : i64, rows = 2 : i64, cols = 4 : i64, use_imm = 0 : i64, elem = 2 : i64, imm = 0 : i64, push_next}
// CHECK-NEXT:    npu.store {dram_addr = 256 : i64, stride = 16 : i64, local = 0 : i64, rows = 2 : i64, cols = 4 : i64, from_acc = 1 : i64, elem = 2 : i64, pop_prev}
// CHECK-NEXT:    npu.finish
// CHECK-NEXT:  }

// -----

func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = graph.constant dense<0.5> : tensor<8x8xf32>
  %h = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = graph.matmul %h, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// Two products, one weight: the first's store gives a token back to
// compute, a relay (a move on the last accumulator row) passes it to the
// load module, and the second's first load waits for it before reading h.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %y = npu.launch @npu0 (%x) {inputs = [320 : i64], outputs = [576 : i64]}
// CHECK:       npu.program "npu0" {
// CHECK:         npu.store {dram_addr = [[H:[0-9]+]] : i64, {{.*}}, pop_prev, push_prev}
// CHECK-NEXT:    npu.alu {op = 7 : i64, src = 1023 : i64, src2 = 1023 : i64, dst = 1023 : i64, rows = 1 : i64, cols = 1 : i64, use_imm = 1 : i64, elem = 2 : i64, imm = 0 : i64, pop_next, push_prev}
// CHECK-NEXT:    npu.load {dram_addr = [[H]] : i64, stride = 32 : i64, {{.*}}, pop_next}
// CHECK:         npu.store {dram_addr = 576 : i64, {{.*}}, pop_prev}
// CHECK-NEXT:    npu.finish

// -----

func.func @qgemm(%x: tensor<2x3xi8>) -> tensor<2x4xi8> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %zx = graph.constant dense<2> : tensor<i8>
  %w = graph.constant dense<1> : tensor<4x3xi8>
  %sw = graph.constant dense<0.25> : tensor<f32>
  %zw = graph.constant dense<0> : tensor<i8>
  %c = graph.constant dense<[10, 20, 30, 40]> : tensor<4xi32>
  %sy = graph.constant dense<2.0> : tensor<f32>
  %zy = graph.constant dense<-5> : tensor<i8>
  %y = graph.qgemm %x, %sx, %zx, %w, %sw, %zw, C %c, y_scale %sy, y_zero_point %zy {transB = 1 : i64} : (tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>, tensor<4xi32>, tensor<f32>, tensor<i8>) -> tensor<2x4xi8>
  func.return %y : tensor<2x4xi8>
}

// A quantised product: the store requantises by 0.5 * 0.25 / 2.0 = 0.0625
// (f32 bits 1031798784) and the zero point -5; int8 A and the transposed
// weights (B at 64, 3 rows of 4) into the scratchpad; the int32 bias with
// the activations' zero point folded in (at 128: C - 2 * 3 per column) read
// with stride 0 into the accumulator and added by the vector unit.
// CHECK-LABEL: func.func @qgemm(
// CHECK-NEXT:    %y = npu.launch @npu0 (%x) {inputs = [192 : i64], outputs = [256 : i64]} : (tensor<2x3xi8>) -> tensor<2x4xi8>
// CHECK:       npu.program "npu0" {
// CHECK-NEXT:    npu.config_store {scale = 1031798784 : i64, zero_point = -5 : i64, relu = 0 : i64}
// CHECK-NEXT:    npu.load {dram_addr = 192 : i64, stride = 3 : i64, local = [[A:[0-9]+]] : i64, rows = 2 : i64, cols = 3 : i64, to_acc = 0 : i64, elem = 0 : i64}
// CHECK-NEXT:    npu.load {dram_addr = 64 : i64, stride = 4 : i64, local = [[B:[0-9]+]] : i64, rows = 3 : i64, cols = 4 : i64, to_acc = 0 : i64, elem = 0 : i64, push_next}
// CHECK-NEXT:    npu.gemm {a = [[A]] : i64, b = [[B]] : i64, c = 0 : i64, m = 2 : i64, k = 3 : i64, n = 4 : i64, accumulate = 0 : i64, elem = 0 : i64, pop_prev}
// CHECK-NEXT:    npu.load {dram_addr = 128 : i64, stride = 0 : i64, local = [[BIAS:[0-9]+]] : i64, rows = 2 : i64, cols = 4 : i64, to_acc = 1 : i64, elem = 3 : i64, push_next}
// CHECK-NEXT:    npu.alu {op = 0 : i64, src = 0 : i64, src2 = [[BIAS]] : i64, dst = 0 : i64, rows = 2 : i64, cols = 4 : i64, use_imm = 0 : i64, elem = 3 : i64, imm = 0 : i64, pop_prev, push_next}
// CHECK-NEXT:    npu.store {dram_addr = 256 : i64, stride = 4 : i64, local = 0 : i64, rows = 2 : i64, cols = 4 : i64, from_acc = 1 : i64, elem = 0 : i64, pop_prev}
// CHECK-NEXT:    npu.finish

// -----

func.func @residual(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv %x, %w : (tensor<1x2x3x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x4xf32>
  %s = graph.sum %c, %x : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %r = graph.relu %s : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %r : tensor<1x2x3x4xf32>
}

// A residual Sum and its Relu on the vector unit, after the convolution's
// stores (the relay): both addends' tiles (2 channels, the 12 positions of
// the dense planes) loaded into the accumulator side by side, added, ReLU,
// stored.
// CHECK-LABEL: func.func @residual(
// CHECK-NEXT:    %r = npu.launch @npu0 (%x) {inputs = [128 : i64], outputs = [384 : i64]}
// CHECK:       npu.program "npu0" {
// CHECK:         npu.store {dram_addr = [[C:[0-9]+]] : i64, stride = 48 : i64, local = 32 : i64, {{.*}}, push_prev}
// CHECK-NEXT:    npu.alu {op = 7 : i64, {{.*}}, pop_next, push_prev}
// CHECK-NEXT:    npu.load {dram_addr = 256 : i64, stride = 48 : i64, local = 0 : i64, rows = 2 : i64, cols = 12 : i64, to_acc = 1 : i64, elem = 2 : i64, pop_next}
// CHECK-NEXT:    npu.load {dram_addr = 128 : i64, stride = 48 : i64, local = 16 : i64, rows = 2 : i64, cols = 12 : i64, to_acc = 1 : i64, elem = 2 : i64, push_next}
// CHECK-NEXT:    npu.alu {op = 0 : i64, src = 0 : i64, src2 = 16 : i64, dst = 0 : i64, rows = 2 : i64, cols = 12 : i64, use_imm = 0 : i64, elem = 2 : i64, imm = 0 : i64, pop_prev}
// CHECK-NEXT:    npu.alu {op = 5 : i64, src = 0 : i64, src2 = 0 : i64, dst = 0 : i64, rows = 2 : i64, cols = 12 : i64, use_imm = 0 : i64, elem = 2 : i64, imm = 0 : i64, push_next}
// CHECK-NEXT:    npu.store {dram_addr = 384 : i64, stride = 48 : i64, local = 0 : i64, rows = 2 : i64, cols = 12 : i64, from_acc = 1 : i64, elem = 2 : i64, pop_prev}
// CHECK-NEXT:    npu.finish

// -----

func.func @per_channel(%x: tensor<1x2x1x3xi8>) -> tensor<1x2x1x3xi8> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %zx = graph.constant dense<0> : tensor<i8>
  %w = graph.constant dense<1> : tensor<2x2x1x1xi8>
  %sw = graph.constant dense<[0.25, 0.5]> : tensor<2xf32>
  %zw = graph.constant dense<0> : tensor<2xi8>
  %sy = graph.constant dense<1.0> : tensor<f32>
  %zy = graph.constant dense<3> : tensor<i8>
  %y = graph.qlinear_conv %x, %sx, %zx, %w, %sw, %zw, %sy, %zy : (tensor<1x2x1x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x3xi8>
  func.return %y : tensor<1x2x1x3xi8>
}

// A convolution's weight scale per output channel: each output row (a
// channel) stored after a config_store of its multiplier, 0.5 * 0.25 / 1
// (f32 bits 1040187392) and 0.5 * 0.5 / 1 (1048576000).
// CHECK-LABEL: func.func @per_channel(
// CHECK:       npu.program "npu0" {
// CHECK-NOT:     npu.config_store
// CHECK:         npu.gemm {{.*}}, pop_prev, push_next}
// CHECK-NEXT:    npu.config_store {scale = 1040187392 : i64, zero_point = 3 : i64, relu = 0 : i64}
// CHECK-NEXT:    npu.store {dram_addr = 192 : i64, stride = 0 : i64, local = 0 : i64, rows = 1 : i64, cols = 3 : i64, from_acc = 1 : i64, elem = 0 : i64, pop_prev}
// CHECK-NEXT:    npu.config_store {scale = 1048576000 : i64, zero_point = 3 : i64, relu = 0 : i64}
// CHECK-NEXT:    npu.store {dram_addr = 195 : i64, stride = 0 : i64, local = 1 : i64, rows = 1 : i64, cols = 3 : i64, from_acc = 1 : i64, elem = 0 : i64}
// CHECK-NEXT:    npu.finish
