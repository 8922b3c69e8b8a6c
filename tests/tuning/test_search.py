"""The search, resumed from its records, and the records applied to a compile."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ember
from ember.dialects.schedule import ScheduleError, schedule_of
from ember.options import Options
from ember.report import CompileReport
from ember.targets.cpu.schedule.apply_records import TUNED_ATTR, ApplyRecordsPass
from ember.targets.cpu.schedule.tasks import Task, task_heads
from ember.targets.tuning_records import Record, Records
from ember.tuning.runner import InProcessRunner
from ember.tuning.search import Search, Settings, TaskState
from tests.tuning.conftest import bufferized, small_model

pytestmark = pytest.mark.slow  # one search of the test model, shared: 13 s on two cores


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory,
             tasks: list[Task]) -> tuple[Path, list[TaskState]]:  # fmt: skip
    path = tmp_path_factory.mktemp("records") / "records.sqlite"
    seen: list[str] = []
    search = Search(tasks, Records(path), InProcessRunner(), Settings(trials=5, batch=2),
                    lambda state, measurement, summary: seen.append(state.task.key))  # fmt: skip
    states = search.run()
    assert search.model.fitted  # more than MIN_SAMPLES measurements came in
    assert set(seen) == {t.key for t in tasks}
    return path, states


def test_every_task_has_its_default_and_its_trials(searched: tuple[Path, list[TaskState]]) -> None:
    path, states = searched
    records = Records(path)
    for state in states:
        rows = records.of_task(state.task.key)
        assert sum(r.is_default for r in rows) >= 1
        assert len({r.schedule for r in rows}) <= 5
        assert state.best[1] <= state.default_seconds  # type: ignore[operator]
        # the result is confirmed: the winner and the default measured three times
        for schedule in {state.best[0], str(state.space.default_schedule)}:
            assert len(state.samples[schedule]) >= 3


def test_a_search_resumes_from_its_records(searched: tuple[Path, list[TaskState]],
                                           tasks: list[Task], tmp_path: Path) -> None:  # fmt: skip
    path, _ = searched
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(path.read_bytes())
    records = Records(copy)
    before = {t.key: len(records.of_task(t.key)) for t in tasks}
    Search(tasks, records, InProcessRunner(), Settings(trials=5, batch=2)).run()
    assert {t.key: len(records.of_task(t.key)) for t in tasks} == before  # nothing measured again
    Search(tasks, records, InProcessRunner(), Settings(trials=6, batch=2)).run()
    for task in tasks:
        schedules = {r.schedule for r in records.of_task(task.key)}
        assert len(schedules) <= 6


def test_recorded_schedules_are_applied_and_compute_the_same(
    searched: tuple[Path, list[TaskState]],
) -> None:
    path, states = searched
    module = bufferized()
    ApplyRecordsPass(str(path), threads=1).apply(None, module)  # type: ignore[arg-type]
    heads = list(task_heads(module))
    best = Records(path).best(1)
    assert all(TUNED_ATTR in h.attributes for h in heads)
    assert {str(schedule_of(h)) for h in heads} <= {r.schedule for r in best.values()}
    x = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
    tuned = ember.compile(small_model(), threads=1, records=str(path), cache=False)(x)[0]
    plain = ember.compile(small_model(), threads=1, records=False, cache=False)(x)[0]
    np.testing.assert_allclose(tuned, plain, rtol=1e-5, atol=1e-6)


def test_a_cached_compile_reads_its_records_once(
    searched: tuple[Path, list[TaskState]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schedules the cache's key hashes are the ones the pipeline applies:
    one read of the file per compile, whether it misses the cache or hits."""
    path, _ = searched
    reads: list[Path] = []
    best = Records.best

    def counted(self: Records, *args: Any, **kwargs: Any) -> dict[str, Record]:
        reads.append(self.path)
        return best(self, *args, **kwargs)

    monkeypatch.setattr(Records, "best", counted)
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "cache"))
    for hit in (False, True):
        report = CompileReport()
        ember.compile(small_model(), threads=1, records=str(path), cache=True, report=report)
        assert report.cache_hit == hit and reads == [path]
        reads.clear()


def test_a_record_that_does_not_fit_names_the_op(tmp_path: Path, tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.op_name == "linalg.matmul")
    records = Records(tmp_path / "bad.sqlite")
    records.add(Record(task.key, "#loop.schedule<order = [0, 1]>", False, 1e-3, 0.0, "", 1,
                       task.op_name, task.extents))  # fmt: skip
    with pytest.raises(ScheduleError, match=r"linalg.matmul .*does not fit"):
        ApplyRecordsPass(str(records.path)).apply(None, bufferized())  # type: ignore[arg-type]


def test_a_new_record_changes_the_compile_cache_key(tmp_path: Path, tasks: list[Task]) -> None:
    from ember.cache import records_digest

    task = tasks[0]
    records = Records(tmp_path / "r.sqlite")
    assert records_digest(Options()) is None
    records.add(Record(task.key, "#loop.schedule<order = [0, 1, 2]>", True, 2e-3, 0.0, "", 1))
    before = records_digest(Options(records=str(records.path)))
    records.add(Record(task.key, "#loop.schedule<order = [1, 0, 2]>", False, 1e-3, 0.0, "", 1))
    assert records_digest(Options(records=str(records.path))) not in (before, None)


def test_the_cache_key_hashes_the_schedules_the_compile_read(
    tmp_path: Path, tasks: list[Task]
) -> None:
    """Read once (`with_best_schedules`), the records' schedules give the key
    and the pipeline's apply pass; a record added after is not read again."""
    from ember.cache import records_digest
    from ember.targets.cpu.pipeline import cpu_passes
    from ember.targets.cpu.schedule.apply_records import ApplyReadRecordsPass
    from ember.targets.tuning_records import with_best_schedules

    task = tasks[0]
    records = Records(tmp_path / "r.sqlite")
    records.add(Record(task.key, "#loop.schedule<order = [0, 1, 2]>", True, 2e-3, 0.0, "", 1))
    options = with_best_schedules(Options(records=str(records.path)))
    assert options.schedules is not None and with_best_schedules(options) is options
    digest = records_digest(options)
    records.add(Record(task.key, "#loop.schedule<order = [1, 0, 2]>", False, 1e-3, 0.0, "", 1))
    assert records_digest(options) == digest != records_digest(replace(options, schedules=None))
    applied = [p for _, p in cpu_passes(options) if p.name == "tensor-apply-records"]
    assert applied == [ApplyReadRecordsPass(str(records.path), 1, options.schedules)]
    # read at another thread count: read again, by the pass
    two = replace(options, threads=2)
    assert with_best_schedules(two).schedules not in (None, options.schedules)
    applied = [p for _, p in cpu_passes(two) if p.name == "tensor-apply-records"]
    assert applied == [ApplyRecordsPass(str(records.path), 2)]
