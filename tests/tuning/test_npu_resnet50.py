"""ResNet-50 in int8 tuned for the NPU: the matrix unit's mean utilisation
over its convolutions, each product alone in the cycle model (slow: about 5
minutes; `python -m benchmarks.npu_tune` prints the table)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ember
from benchmarks.npu_tune import mean_utilization, resnet50_int8
from ember.targets.npu.tasks import model_tasks
from ember.targets.tuning_records import Records
from ember.tuning.npu_search import tune_npu

BAR = 0.70
"""The mean utilisation tuning must reach on the convolutions."""


@pytest.mark.slow
def test_tuned_resnet50_convolutions_reach_the_bar(tmp_path: Path) -> None:
    tasks = model_tasks(ember.import_onnx(str(resnet50_int8(tmp_path))))
    assert sum(t.count for t in tasks if t.op_name == "graph.qlinear_conv") == 53
    states = tune_npu(tasks, Records(tmp_path / "r.sqlite"), trials=8)
    for state in states:
        assert state.best[1] is not None and state.default_cycles is not None
        assert state.best[1] <= state.default_cycles
    assert mean_utilization(states, tuned=True) >= max(BAR, mean_utilization(states, tuned=False))
