"""The cycle model against SCALE-Sim's analytical weight-stationary model
(benchmarks/npu_cycles.py), with a DMA that never stalls."""

from __future__ import annotations

import pytest

from benchmarks.npu_cycles import compare, main, scale_sim_ws_cycles
from ember.dialects.npu.machine import F32, INT8


def test_the_published_formula() -> None:
    # one fold: fill 16, stream 100 rows with the skew of 16 + 16 - 2
    assert scale_sim_ws_cycles(100, 16, 16, 16, 16) == 2 * 16 + 16 + 100 - 2
    assert scale_sim_ws_cycles(100, 32, 48, 16, 16) == 6 * (2 * 16 + 16 + 100 - 2)
    assert scale_sim_ws_cycles(100, 32, 48, 16, 16, overlapped=True) == 6 * 100 + 46


@pytest.mark.parametrize("size", [64, 160])
@pytest.mark.parametrize("elem", [INT8, F32])
def test_the_cycle_model_agrees_with_the_overlapped_analytical_one(size: int, elem) -> None:
    c = compare(size, elem)
    assert abs(c.apart(c.overlapped)) < 0.02
    assert c.ember < c.analytical  # the folds' fills are hidden
    assert c.ideal <= c.ember <= c.ember_with_dma < c.single_buffer


def test_the_table_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--sizes", "32"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| M=K=N |") and len(lines) == 4
