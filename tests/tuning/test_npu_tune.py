"""Tuning for the NPU: schedules measured in the cycle model, recorded, and
applied by a compile (`--records`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.context import Context

import ember
from ember.dialects.npu.machine import NpuParams
from ember.dialects.npu.schedule import SCHEDULE_ATTR
from ember.lowering.graph_to_npu.matmul import MatmulSchedule, default_schedule
from ember.targets.npu.apply_records import TUNED_ATTR, NpuApplyRecordsPass
from ember.targets.npu.compile import DeviceStep, partition_model
from ember.targets.npu.measure import CLOCK_HZ, measure, npu_identity
from ember.targets.npu.tasks import model_tasks
from ember.targets.tuning_records import Records, identity
from ember.tuning.npu_search import npu_summary, tune_npu
from tests.support.models import random_inputs
from tests.tools.test_cli import assert_one_line_error, run

TRIALS = 10


def _tune(model: Path, records: Path) -> list:  # type: ignore[type-arg]
    return tune_npu(model_tasks(ember.import_onnx(str(model))), Records(records), TRIALS)


def test_a_measurement_is_the_cycle_model_of_the_product_alone(int8_cnn: Path) -> None:
    params = NpuParams()
    (task, *_) = model_tasks(ember.import_onnx(str(int8_cnn)))
    default = default_schedule(task.product, params)
    found = measure(task, default, params)
    assert found.ok and found.cycles == measure(task, default, params).cycles  # deterministic
    assert found.utilization == task.macs / (found.cycles * 16 * 16)
    assert found.seconds == found.cycles / CLOCK_HZ
    too_big = measure(task, MatmulSchedule(1, 30, 2, 3), params)
    assert not too_big.ok and "overflow the accumulator" in too_big.error


def test_tuning_is_never_slower_than_the_default_and_is_recorded(int8_cnn: Path,
                                                                  tmp_path: Path) -> None:  # fmt: skip
    states = _tune(int8_cnn, tmp_path / "r.sqlite")
    assert len(states) == 4
    for state in states:
        assert len(state.measured) == TRIALS
        assert state.best[1] is not None and state.default_cycles is not None
        assert state.best[1] <= state.default_cycles
    total = npu_summary(states)
    assert total.tuned_cycles < total.default_cycles
    assert total.tuned_utilization > total.default_utilization
    records = Records(tmp_path / "r.sqlite")
    who = npu_identity(NpuParams())
    assert who.cpu.startswith("npu/") and who != identity()
    best = records.best(1, who, margin=0.0)
    assert {s.task.key: s.best[0] for s in states} == {k: r.schedule for k, r in best.items()}
    assert records.best(1) == {}  # not this CPU's records
    for state in states:
        rows = records.of_task(state.task.key, who)
        assert [r.schedule for r in rows if r.is_default] == [state.default]
        assert all(r.spread == 0.0 for r in rows if not r.error)


def test_a_search_resumes_from_its_records(int8_cnn: Path, tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    first = _tune(int8_cnn, path)
    again = _tune(int8_cnn, path)
    assert [s.measured for s in again] == [s.measured for s in first]
    rows = sum(len(Records(path).of_task(s.task.key, npu_identity(NpuParams()))) for s in first)
    assert rows == 4 * TRIALS


def test_records_applied_change_the_program_not_the_outputs(int8_cnn: Path,
                                                            tmp_path: Path) -> None:  # fmt: skip
    states = _tune(int8_cnn, tmp_path / "r.sqlite")
    tuned = {s.task.key for s in states if s.best[0] != s.default}
    assert tuned
    inputs = random_inputs(onnx.load(int8_cnn), seed=4)
    default = ember.compile(str(int8_cnn), target="npu", records=False)
    recorded = ember.compile(str(int8_cnn), target="npu", records=str(tmp_path / "r.sqlite"))

    def programs(model: object) -> list[list[object]]:
        return [step.kernel.program for step in model.steps  # type: ignore[attr-defined]
                if isinstance(step, DeviceStep)]  # fmt: skip

    assert programs(default) != programs(recorded)
    assert recorded.report.cycles < default.report.cycles
    schedules = [layer.schedule for s in recorded.report.segments for layer in s.layers]
    assert schedules != [layer.schedule for s in default.report.segments for layer in s.layers]
    assert sum(schedule.endswith("(tuned)") for schedule in schedules) == 4
    np.testing.assert_array_equal(recorded.run(inputs)[0], default.run(inputs)[0])


def test_the_pass_marks_what_it_takes_from_the_records(int8_cnn: Path, tmp_path: Path) -> None:
    states = _tune(int8_cnn, tmp_path / "r.sqlite")
    module = ember.import_onnx(str(int8_cnn))
    partition_model(module)
    NpuApplyRecordsPass(str(tmp_path / "r.sqlite")).apply(Context(), module)
    marked = {op.attributes[TUNED_ATTR].data: str(op.attributes[SCHEDULE_ATTR])  # type: ignore[attr-defined]
              for op in module.walk() if TUNED_ATTR in op.attributes}  # fmt: skip
    assert marked == {s.task.key: s.best[0] for s in states}


def test_tune_and_list_from_the_command_line(int8_cnn: Path, tmp_path: Path) -> None:
    records = str(tmp_path / "r.sqlite")
    tuned = run("ember", "tune", str(int8_cnn), "--target", "npu", "--records", records,
                "--trials", "4", "-q")  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    assert "model's products:" in tuned.stdout and "mean utilisation" in tuned.stdout
    listed = run("ember", "tune", str(int8_cnn), "--target", "npu", "--records", records,
                 "--list")  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "4 tasks (4 products)" in listed.stdout
    assert "graph.qlinear_conv [12x27x440 int8] (r1_QuantizeLinear)" in listed.stdout


@pytest.mark.slow
def test_run_with_npu_records_from_the_command_line(int8_cnn: Path, tmp_path: Path) -> None:
    records = str(tmp_path / "r.sqlite")
    _tune(int8_cnn, tmp_path / "r.sqlite")
    checked = run("ember", "run", str(int8_cnn), "--target", "npu", "--records", records,
                  "--check", "-q")  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert "-> ok" in checked.stdout


def test_cpu_measurement_flags_with_the_npu_are_one_error(int8_cnn: Path, tmp_path: Path) -> None:
    result = run("ember", "tune", str(int8_cnn), "--target", "npu", "--records",
                 str(tmp_path / "r.sqlite"), "--threads", "4")  # fmt: skip
    assert_one_line_error(result, "--threads applies to --target cpu")
