// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Must not verify: programs that break the machine's limits or its
// dependency rules, each with a message naming the instruction.

// A tile larger than the matrix unit.
npu.program "too_big" {
  npu.gemm {a = 0 : i64, b = 256 : i64, c = 0 : i64, m = 17 : i64, k = 16 : i64, n = 16 : i64, accumulate = 0 : i64, elem = 0 : i64}
  npu.finish
}

// CHECK: Operation does not verify: npu.gemm: instruction 0 (gemm a=0 b=256 c=0 m=17 k=16 n=16 accumulate=0 elem=0): m = 17 is not in 1..16

// -----

// A load past the end of the scratchpad.
npu.program "overflow" {
  npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 16380 : i64, rows = 8 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64}
  npu.finish
}

// CHECK: Operation does not verify: npu.load: instruction 0 ({{.*}}): the rows (SP lines 16380..16387) overflows the scratchpad (16384 lines)

// -----

// An f32 operand at a line that is not a multiple of its 4 lines per row.
npu.program "misaligned" {
  npu.gemm {a = 2 : i64, b = 256 : i64, c = 0 : i64, m = 4 : i64, k = 4 : i64, n = 4 : i64, accumulate = 0 : i64, elem = 2 : i64}
  npu.finish
}

// CHECK: Operation does not verify: npu.gemm: instruction 0 ({{.*}}): A at SP line 2 is not aligned to its rows of 4 lines

// -----

// The gemm waits for a load that never pushes: a deadlock.
npu.program "deadlock" {
  npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64}
  npu.gemm {a = 0 : i64, b = 256 : i64, c = 0 : i64, m = 16 : i64, k = 16 : i64, n = 16 : i64, accumulate = 0 : i64, elem = 0 : i64, pop_prev}
  npu.finish
}

// CHECK: Operation does not verify: npu.program @deadlock: instruction 1 (gemm {{.*}} [pop_prev]) waits for a token that no instruction gives: the program deadlocks

// -----

// A token nobody takes.
npu.program "leftover" {
  npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64, push_next}
  npu.finish
}

// CHECK: Operation does not verify: npu.program @leftover: tokens left at finish: 1 on load->compute (every push needs its pop)

// -----

// A load has no module before it to take a token from.
npu.program "bad_flag" {
  npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64, pop_prev}
  npu.finish
}

// CHECK: Operation does not verify: npu.load: instruction 0 ({{.*}} [pop_prev]): pop_prev on a load instruction

// -----

// A program must end in npu.finish.
npu.program "unfinished" {
  npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64}
}

// CHECK: Operation does not verify: npu.program @unfinished: an NPU program ends in finish

// -----

// The tokens match, but the gemm reads B before the load that fills it is
// known to be done (it waits only for the first load's token).
npu.program "hazard" {
  npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64, push_next}
  npu.load {dram_addr = 256 : i64, stride = 16 : i64, local = 256 : i64, rows = 16 : i64, cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64, push_next}
  npu.gemm {a = 0 : i64, b = 256 : i64, c = 0 : i64, m = 16 : i64, k = 16 : i64, n = 16 : i64, accumulate = 0 : i64, elem = 0 : i64, pop_prev}
  npu.gemm {a = 0 : i64, b = 0 : i64, c = 16 : i64, m = 16 : i64, k = 16 : i64, n = 16 : i64, accumulate = 0 : i64, elem = 0 : i64, pop_prev}
  npu.finish
}

// CHECK: Operation does not verify: npu.program @hazard: instruction 2 (gemm {{.*}}) reads SP line 256, which instruction 1 (load {{.*}}) uses, with no token between them: a dependency is missing
