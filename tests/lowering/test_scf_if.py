"""`scf.if` in the shared control-flow lowering (`loop_to_llvm/control_flow.py`),
run through the CPU's JIT: a branch with results (the exit block's
arguments) and one without an else (the then block writes, or nothing does)."""

from __future__ import annotations

import numpy as np

from tests.lowering.test_loop_to_llvm import N, compute, run

CLAMPED = """
%zero = arith.constant 0.0 : f32
    %neg = arith.cmpf olt, %x0, %zero : f32
    %r = scf.if %neg -> (f32) {
      scf.yield %zero : f32
    } else {
      %twice = arith.addf %x0, %x0 : f32
      scf.yield %twice : f32
    }"""


def test_an_if_with_results_yields_the_branch_taken() -> None:
    x = np.linspace(-4, 4, N, dtype=np.float32)
    np.testing.assert_array_equal(compute(["f32"], "f32", CLAMPED, x), np.where(x < 0, 0, 2 * x))


def test_an_if_without_else_runs_its_then_block_only_where_true() -> None:
    text = f"""
func.func @main(%x: memref<{N}xi32>, %out: memref<{N}xi32>) {{
  %lo = arith.constant 0 : index
  %hi = arith.constant {N} : index
  %step = arith.constant 1 : index
  %three = arith.constant 3 : i32
  scf.for %i = %lo to %hi step %step {{
    %v = memref.load %x[%i] : memref<{N}xi32>
    %big = arith.cmpi sgt, %v, %three : i32
    scf.if %big {{
      memref.store %v, %out[%i] : memref<{N}xi32>
    }}
  }}
  func.return
}}
"""
    x = np.arange(N, dtype=np.int32)
    out = np.full(N, -1, np.int32)
    run(text, x, out)
    np.testing.assert_array_equal(out, np.where(x > 3, x, -1))
