"""Adversarial loop-level IR for the loop passes and convert-loop-to-llvm:
what they cannot handle is one line on stderr naming the pass and the
reason, exit status 1, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.robustness.test_ember_opt import assert_one_line_error, run_opt

CASES = [
    (  # the arena holds buffers whose sizes are the model's symbols, not any index
        "func.func @f(%n: index) {\n  %a = memref.alloc(%n) : memref<?xf32>\n  func.return\n}",
        "loop-plan-memory",
        "not an expression over the symbols",
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
    (  # the packed entry ABI passes sizes, not strides
        "func.func @f(%a: memref<?xf32, strided<[?]>>) attributes {ember.packed_buffers} {\n"
        "  func.return\n}",
        "convert-loop-to-llvm",
        "row-major memrefs",
    ),
    (  # a parallel loop's reduction is not lowered (an scf.for's iter_args are)
        "func.func @f(%a: memref<4xf32>) {\n  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n  %z = arith.constant 0.0 : f32\n"
        '  %s = "scf.parallel"(%c0, %c1, %c1, %z) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}>'
        " ({\n  ^bb0(%i: index):\n"
        "    scf.reduce(%z : f32) {\n    ^bb0(%l: f32, %r: f32):\n"
        "      %x = arith.addf %l, %r : f32\n      scf.reduce.return %x : f32\n    }\n"
        "  }) : (index, index, index, f32) -> f32\n  func.return\n}",
        "convert-loop-to-llvm",
        "scf.reduce.return",
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
