"""docs/schedules.md holds to the tree: its Python example runs and makes the
loops it describes, its hand-written schedule is the lit test's, and the
loop nest it shows is what bufferization prints for it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from ember.opt import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "schedules.md"
LIT = ROOT / "tests" / "filecheck" / "passes" / "loop" / "generate-schedule.mlir"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_the_python_example_tiles_and_unrolls() -> None:
    (source,) = _blocks("python")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, str(DOC), "exec"), {})
    text = printed.getvalue()
    # m: full tiles 0 to 8 step 4, remainder of 2 from 8; n: 0 to 12 step 4, then 12 to 13.
    for bounds in ((0, 8, 4), (0, 2, 1), (0, 12, 4), (12, 13, 1)):
        constants = ", ".join(rf"%c{b}(_\d+)?" for b in bounds)
        assert re.search(rf'"scf.parallel"\({constants}\)', text), bounds
    assert "loop.vector_width = 8" in text


def test_the_hand_written_schedule_is_the_lit_tests() -> None:
    (matmul,) = [b for b in _blocks("mlir") if "linalg.matmul" in b and "tiles = [4, 5, 3]" in b]
    assert matmul.strip() in LIT.read_text()


def test_the_loop_nest_shown_is_what_bufferization_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (matmul,) = [b for b in _blocks("mlir") if "linalg.matmul" in b and "tiles = [4, 5, 3]" in b]
    (shown,) = [b for b in _blocks("mlir") if b.startswith("scf.for")]
    function = (
        "func.func @main(%a: tensor<10x7xf32>, %b: tensor<7x13xf32>) -> tensor<10x13xf32> {\n"
        "  %f_value = arith.constant 0.000000e+00 : f32\n"
        "  %f_init = tensor.empty() : tensor<10x13xf32>\n"
        "  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<10x13xf32>)"
        " -> tensor<10x13xf32>\n"
        f"  {matmul.strip()}\n  func.return %m : tensor<10x13xf32>\n}}\n"
    )
    path = tmp_path / "matmul.mlir"
    path.write_text(function)
    assert main([str(path), "-p", "convert-tensor-to-loop,loop-generate"]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    for line in shown.splitlines():
        if line.strip().startswith("..."):
            break
        assert line.strip() in lines, line


PACK_LIT = ROOT / "tests" / "filecheck" / "passes" / "loop" / "generate-pack.mlir"


def test_the_packing_shown_is_what_loop_generate_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """The packing example's schedule is the lit test's first function, and
    the copy and the reads it shows are what loop-generate makes of it."""
    schedule = re.search(r"`(#loop\.schedule<[^`]*pack = \[1\]>)`", DOC.read_text())
    assert schedule is not None
    (divide, *_) = PACK_LIT.read_text().split("// -----")
    assert f"linalg.matmul {{schedule = {schedule.group(1)}}}" in divide
    shown = [b for b in _blocks("mlir") if "%b_packed" in b]
    assert len(shown) == 2
    assert main([str(PACK_LIT), "-p", "loop-generate", "--split-input-file"]) == 0
    (printed, *_) = capsys.readouterr().out.split("// -----")
    lines = [line.strip() for line in printed.splitlines()]
    for block in shown:
        for line in block.splitlines():
            if line.strip() != "...":
                assert line.strip() in lines, line


MICRO_LIT = ROOT / "tests" / "filecheck" / "passes" / "loop" / "generate-micro.mlir"


def test_the_micro_kernel_shown_is_what_loop_generate_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The micro-kernel example's schedule is the lit test's first function,
    and the block it shows is what loop-generate makes of it."""
    schedule = re.search(r"`(#loop\.schedule<[^`]*micro = \[0, 1, 4, 16\]>)`", DOC.read_text())
    assert schedule is not None
    (first, *_) = MICRO_LIT.read_text().split("// -----")
    assert f"linalg.matmul {{schedule = {schedule.group(1)}}}" in first
    (shown,) = [b for b in _blocks("mlir") if "vector.fma" in b]
    assert main([str(MICRO_LIT), "-p", "loop-generate", "--split-input-file"]) == 0
    (printed, *_) = capsys.readouterr().out.split("// -----")
    lines = [line.strip() for line in printed.splitlines()]
    for line in shown.splitlines():
        if line.strip() not in ("...", "}"):
            assert line.strip() in lines, line
