// RUN: ember-opt %s | ember-opt | filecheck %s

// One tile: two loads fill A and B, the second gives the compute module a
// token (the loads run in order, so both are done); two gemms accumulate;
// the store waits for the accumulator. The program parses, verifies and
// prints as written.
npu.program "tile" {
  npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64}
  npu.load {dram_addr = 256 : i64, stride = 16 : i64, local = 256 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64, push_next}
  npu.gemm {a = 0 : i64, b = 256 : i64, c = 0 : i64, m = 16 : i64, k = 16 : i64, n = 16 : i64, accumulate = 0 : i64, elem = 0 : i64, pop_prev}
  npu.gemm {a = 0 : i64, b = 256 : i64, c = 0 : i64, m = 16 : i64, k = 16 : i64, n = 16 : i64, accumulate = 1 : i64, elem = 0 : i64, push_next}
  npu.config_store {scale = 1008981770 : i64, zero_point = -3 : i64, relu = 1 : i64}
  npu.store {dram_addr = 4096 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, from_acc = 1 : i64, elem = 0 : i64, pop_prev}
  npu.finish
}

// A machine with an 8 x 8 matrix unit: sizes up to 8.
npu.program "small" attributes {dim = 8 : i64} {
  npu.alu {op = 0 : i64, src = 0 : i64, src2 = 8 : i64, dst = 0 : i64, rows = 8 : i64, cols = 8 : i64, use_imm = 0 : i64, elem = 3 : i64, imm = 0 : i64}
  npu.finish
}

// A strided load: every second element of four rows 64 bytes apart.
npu.program "strided" {
  npu.load_strided {dram_addr = 0 : i64, stride = 64 : i64, local = 0 : i64, rows = 4 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 2 : i64, step = 2 : i64}
  npu.finish
}

// CHECK:      npu.program "tile" {
// CHECK-NEXT:   npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64}
// CHECK-NEXT:   npu.load {dram_addr = 256 : i64, {{.*}}, push_next}
// CHECK-NEXT:   npu.gemm {a = 0 : i64, b = 256 : i64, c = 0 : i64, m = 16 : i64, k = 16 : i64, n = 16 : i64, accumulate = 0 : i64, elem = 0 : i64, pop_prev}
// CHECK-NEXT:   npu.gemm {{{.*}}, accumulate = 1 : i64, elem = 0 : i64, push_next}
// CHECK-NEXT:   npu.config_store {scale = 1008981770 : i64, zero_point = -3 : i64, relu = 1 : i64}
// CHECK-NEXT:   npu.store {{{.*}}, from_acc = 1 : i64, elem = 0 : i64, pop_prev}
// CHECK-NEXT:   npu.finish
// CHECK-NEXT: }
// CHECK-NEXT: npu.program "small" attributes {dim = 8 : i64} {
// CHECK-NEXT:   npu.alu {op = 0 : i64, {{.*}}, rows = 8 : i64, cols = 8 : i64, {{.*}}}
// CHECK-NEXT:   npu.finish
// CHECK-NEXT: }
// CHECK-NEXT: npu.program "strided" {
// CHECK-NEXT:   npu.load_strided {dram_addr = 0 : i64, stride = 64 : i64, local = 0 : i64, rows = 4 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 2 : i64, step = 2 : i64}
// CHECK-NEXT:   npu.finish
// CHECK-NEXT: }
