"""Adversarial loop-level IR for the loop passes and convert-loop-to-llvm:
what they cannot handle is one line on stderr naming the pass and the
reason, exit status 1, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.robustness.test_ember_opt import assert_one_line_error, run_opt

CASES = [
    (  # the arena holds static buffers only
        "func.func @f(%n: index) {\n  %a = memref.alloc(%n) : memref<?xf32>\n  func.return\n}",
        "loop-plan-memory",
        "dynamic size",
    ),
    (  # an alloc has no address before loop-plan-memory
        "func.func @f() {\n  %a = memref.alloc() : memref<4xf32>\n  func.return\n}",
        "convert-loop-to-llvm",
        "run loop-plan-memory first",
    ),
    (  # a weight has no address before loop-pack-weights
        "func.func @f() {\n  %w = loop.weight dense<1.0> : tensor<2xf32> -> memref<2xf32>\n"
        "  func.return\n}",
        "convert-loop-to-llvm",
        "run loop-pack-weights first",
    ),
    (  # the packed entry ABI has no room for sizes
        "func.func @f(%a: memref<?xf32>) attributes {ember.packed_buffers} {\n  func.return\n}",
        "convert-loop-to-llvm",
        "static memrefs",
    ),
    (  # loop-carried values are not lowered
        "func.func @f(%a: memref<4xf32>) {\n  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n  %z = arith.constant 0.0 : f32\n"
        "  %s = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %z) -> (f32) {\n"
        "    scf.yield %acc : f32\n  }\n  func.return\n}",
        "convert-loop-to-llvm",
        "loop-carried values",
    ),
    (  # memref.dim needs a known dim
        "func.func @f(%a: memref<?xf32>, %d: index) {\n  %n = memref.dim %a, %d : memref<?xf32>\n"
        "  func.return\n}",
        "convert-loop-to-llvm",
        "constant dim",
    ),
]


@pytest.mark.parametrize("text, passes, fragment", CASES)
def test_loop_level_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, passes: str, fragment: str
) -> None:
    path = tmp_path / "input.mlir"
    path.write_text(text)
    code, _, err = run_opt(capsys, str(path), "-p", passes)
    assert_one_line_error(code, err, re.escape(str(path)), fragment)
