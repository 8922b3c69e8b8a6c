"""Adversarial buffer-level input for `loop-generate` and the buffer form of
`ember_linalg.gather`: whatever a hand-written op on memrefs holds,
`ember-opt` answers with loops or one `error:` line (exit status 1), never a
traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ember.opt import main

GATHER = (
    "func.func @f(%t: {data}, %i: {indices}, %o: memref<2x4xf32>) {{\n  {op}\n  func.return\n}}\n"
)

MATMUL = """func.func @f(%a: memref<4x8xf32>, %b: memref<8x5xf32>, %c: memref<4x5xf32>) {{
  linalg.matmul {{schedule = {schedule}}} ins(%a, %b : memref<4x8xf32>, memref<8x5xf32>) outs(%c : memref<4x5xf32>)
  func.return
}}
"""


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.search(r"error: ", lines[0]), err
    return lines[0]


@pytest.mark.parametrize(
    "data, indices, op, message",
    [
        # a tensor and a memref mixed
        ("tensor<9x4xf32>", "memref<2xi64>",
         "ember_linalg.gather %t[%i] outs(%o : memref<2x4xf32>) {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : tensor<9x4xf32>, memref<2xi64>",
         "must both be tensors (with a result) or both memrefs"),
        # memrefs with no destination
        ("memref<9x4xf32>", "memref<2xi64>",
         "%r = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : memref<9x4xf32>, memref<2xi64> -> tensor<2x4xf32>",
         "must both be tensors (with a result) or both memrefs"),
        # a destination of the wrong shape
        ("memref<9x3xf32>", "memref<2xi64>",
         "ember_linalg.gather %t[%i] outs(%o : memref<2x4xf32>) {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0, d1)>} : memref<9x3xf32>, memref<2xi64>",
         "reaches outside (9, 3)"),
    ],
    ids=["mixed", "no destination", "wrong shape"],
)  # fmt: skip
def test_a_malformed_gather_on_buffers_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: str, indices: str, op: str,
    message: str,
) -> None:  # fmt: skip
    path = tmp_path / "gather.mlir"
    path.write_text(GATHER.format(data=data, indices=indices, op=op))
    assert main([str(path), "-p", "loop-generate"]) == 1
    assert message in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    "schedule",
    ["#loop.schedule<order = [0, 1]>", "#loop.schedule<order = [0, 1, 2], parallel = [2]>",
     "[0, 1, 2]", "#loop.schedule<order = [2, 1, 0], tiles = [0, 0, 9999999999999], unroll = 64>"],
)  # fmt: skip
def test_a_buffer_level_schedule_compiles_or_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schedule: str
) -> None:
    path = tmp_path / "matmul.mlir"
    path.write_text(MATMUL.format(schedule=schedule))
    code = main([str(path), "-p", "loop-generate"])
    out, err = capsys.readouterr()
    if code == 0:
        assert "scf.for" in out and "linalg.matmul" not in out
    else:
        assert code == 1
        assert "linalg.matmul into %c in @f" in _one_error_line(err)
