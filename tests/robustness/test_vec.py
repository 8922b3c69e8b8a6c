"""Adversarial input for the vectorisation work: bad `cpu` options
of `tensor-default-schedule`, and kernel IR that `loop-mark-noalias` meets
where it cannot prove anything (calls with unknown, dynamic or aliasing
buffers) give one error line or leave the arguments unmarked; never a
traceback, never a wrong mark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.robustness.test_ember_opt import assert_one_line_error, run_opt

EMPTY = "func.func @f() {\n  func.return\n}\n"


_KNOWN = "expected one of host, generic, x86-64, haswell, znver3, skylake-avx512, znver4"
BAD_CPUS = [
    # (cpu, who reports it: the input file or the command line, what it says)
    ("pentium", "FILE", f"tensor-default-schedule: unknown CPU 'pentium' for schedules: {_KNOWN}"),
    ("HASWELL", "FILE", f"tensor-default-schedule: unknown CPU 'HASWELL' for schedules: {_KNOWN}"),
    ("12", "ember-opt", "tensor-default-schedule: option cpu expects str, got 12"),
    ("", "ember-opt", "-p 'tensor-default-schedule{cpu=}': column 29: Unknown argument value"),
]  # fmt: skip


@pytest.mark.parametrize("cpu, where, message", BAD_CPUS, ids=[c for c, _, _ in BAD_CPUS])
def test_bad_cpu_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, cpu: str,
                             where: str, message: str) -> None:  # fmt: skip
    """The message that names the mistake, not any one line (an internal
    error is one line too)."""
    source = tmp_path / "in.mlir"
    source.write_text(EMPTY)
    code, _, err = run_opt(capsys, str(source), "-p", f"tensor-default-schedule{{cpu={cpu}}}")
    reporter = re.escape(str(source) if where == "FILE" else where)
    assert_one_line_error(code, err, reporter, message)
    assert "internal error" not in err


@pytest.mark.parametrize("cpu", ["host", "generic", "haswell", "znver4"])
def test_good_cpu_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path, cpu: str) -> None:
    source = tmp_path / "in.mlir"
    source.write_text(EMPTY)
    code, out, err = run_opt(capsys, str(source), "-p", f"tensor-default-schedule{{cpu={cpu}}}")
    assert code == 0 and "func.func @f" in out, err


# Kernels whose buffers cannot be proven apart at their call: each must stay unmarked.
UNPROVABLE = {
    "dynamic-offset": """
func.func @main(%arena: memref<64xi8> {ember.arena}, %i: index) attributes {ember.packed_buffers} {
  %c0 = arith.constant 0 : index
  %t = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  %u = memref.view %arena[%i][] : memref<64xi8> to memref<4xf32>
  func.call @k(%t, %u) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}""",
    "dynamic-size": """
func.func @main(%arena: memref<64xi8> {ember.arena}, %n: index) attributes {ember.packed_buffers} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %t = memref.view %arena[%c0][%n] : memref<64xi8> to memref<?xf32>
  %u = memref.view %arena[%c32][] : memref<64xi8> to memref<4xf32>
  func.call @k(%t, %u) : (memref<?xf32>, memref<4xf32>) -> ()
  func.return
}""",
    "same-buffer-twice": """
func.func @main(%x: memref<4xf32>) attributes {ember.packed_buffers} {
  func.call @k(%x, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}""",
    "plain-caller": """
func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
  func.call @k(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}""",
}


@pytest.mark.parametrize("name", UNPROVABLE)
def test_unprovable_buffers_stay_unmarked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    source = tmp_path / "in.mlir"
    first = UNPROVABLE[name].split("func.call @k(")[1].split(":")[1]
    types = first.split("->")[0].strip().strip("()").split(", ")
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    kernel = f"func.func private @k({args}) attributes {{ember.kernel}} {{\n  func.return\n}}\n"
    source.write_text(UNPROVABLE[name] + "\n" + kernel)
    code, out, err = run_opt(capsys, str(source), "-p", "loop-mark-noalias")
    assert code == 0, err
    assert "llvm.noalias" not in out
