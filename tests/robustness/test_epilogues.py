"""Adversarial input for epilogues in registers: a hand-written
`loop.epilogue` mark that asks for more than the ops after a contraction
allow, or is not a count, is one `error:` line from `ember-opt` (exit status
1), never a traceback or wrong code; a mark that fits is obeyed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ember.opt import main

MATMUL_RELU = """func.func @f(%a: memref<4x3xf32>, %b: memref<3x16xf32>, %out: memref<4x16xf32>) {{
  %y = memref.alloc() : memref<4x16xf32>
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4x16xf32>)
  linalg.matmul {{schedule = #loop.schedule<order = [0, 2, 1], parallel = [0, 1], vector = 8, micro = [0, 1, 2, 16]>, loop.epilogue = {mark}}} ins(%a, %b : memref<4x3xf32>, memref<3x16xf32>) outs(%y : memref<4x16xf32>)
  linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} ins(%y : memref<4x16xf32>) outs(%out : memref<4x16xf32>) {{
  ^bb0(%0: f32, %1: f32):
    %2 = {body} : f32
    linalg.yield %2 : f32
  }}
  func.return
}}
"""

RELU = "arith.maximumf %0, %zero_in"
EXP = "math.exp %0"


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.search(r"error: ", lines[0]), err
    return lines[0]


def _write(tmp_path: Path, mark: str, body: str) -> Path:
    text = MATMUL_RELU.format(mark=mark, body=body)
    text = text.replace("%zero_in", "%c")
    text = text.replace(
        "    %2 = arith.maximumf",
        "    %c = arith.constant 0.000000e+00 : f32\n    %2 = arith.maximumf",
    )
    path = tmp_path / "epilogue.mlir"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "mark, body",
    [("2 : i64", RELU), ("1 : i64", EXP), ("0 : i64", RELU), ("-3 : i64", RELU), ('"relu"', RELU)],
    ids=["longer than the chain", "exp in the body", "zero", "negative", "not a count"],
)
def test_a_mark_that_does_not_fit_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mark: str, body: str
) -> None:
    assert main([str(_write(tmp_path, mark, body)), "-p", "loop-generate"]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "loop.epilogue" in line and "linalg.matmul" in line


def test_a_mark_that_fits_is_obeyed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(_write(tmp_path, "1 : i64", RELU)), "-p", "loop-generate"]) == 0
    out = capsys.readouterr().out
    assert "linalg.generic" not in out and "memref.alloc" not in out
    assert "arith.maximumf" in out and "vector<8xf32>" in out
