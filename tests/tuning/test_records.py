"""The records table: round trip, machines and builds kept apart, concurrent writers."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

from ember.errors import EmberError
from ember.targets.tuning_records import Identity, Record, Records, identity, resolve_path

HERE = Identity("ember 9, llvm 1", "cpu-a/0000")
OTHER_CPU = Identity("ember 9, llvm 1", "cpu-b/0000")
OLD_BUILD = Identity("ember 8, llvm 1", "cpu-a/0000")


def record(task: str, schedule: str, seconds: float, threads: int = 1, error: str = "") -> Record:
    return Record(task, schedule, schedule == "default", None if error else seconds, 0.01, error,
                  threads, "linalg.matmul", (8, 16, 32), ("fc0",))  # fmt: skip


def test_a_record_comes_back_as_it_went_in(tmp_path: Path) -> None:
    records = Records(tmp_path / "r.sqlite")
    records.add(record("t1", "default", 2e-3), HERE)
    records.add(record("t1", "fast", 1e-3), HERE)
    records.add(record("t1", "broken", 0, error="does not compile: ..."), HERE)
    (back, *_) = records.of_task("t1", HERE)
    assert back == record("t1", "default", 2e-3)
    assert len(records.of_task("t1", HERE)) == 3
    best = records.best(1, HERE)
    assert best["t1"].schedule == "fast" and best["t1"].extents == (8, 16, 32)


def test_a_schedule_measured_again_counts_by_its_median(tmp_path: Path) -> None:
    records = Records(tmp_path / "r.sqlite")
    for seconds in (1e-3, 5e-3, 6e-3):  # fast once, by chance
        records.add(record("t1", "lucky", seconds), HERE)
    records.add(record("t1", "steady", 3e-3), HERE)
    best = records.best(1, HERE)["t1"]
    assert best.schedule == "steady" and best.seconds == 3e-3
    records.add(record("t1", "steady", 9e-3), HERE)  # median 6e-3, lucky's 5e-3
    assert records.best(1, HERE)["t1"].schedule == "lucky"


def test_the_default_stays_unless_another_is_clearly_faster(tmp_path: Path) -> None:
    records = Records(tmp_path / "r.sqlite")
    records.add(record("t1", "default", 1.00e-3), HERE)
    records.add(record("t1", "within-noise", 0.99e-3), HERE)
    assert records.best(1, HERE)["t1"].schedule == "default"
    records.add(record("t1", "faster", 0.90e-3), HERE)
    assert records.best(1, HERE)["t1"].schedule == "faster"


def test_records_of_another_cpu_or_build_do_not_count(tmp_path: Path) -> None:
    records = Records(tmp_path / "r.sqlite")
    records.add(record("t1", "default", 2e-3), HERE)
    records.add(record("t1", "other-cpu", 1e-4), OTHER_CPU)
    records.add(record("t1", "old-build", 1e-4), OLD_BUILD)
    assert records.best(1, HERE)["t1"].schedule == "default"
    assert records.of_task("t1", HERE) == [record("t1", "default", 2e-3)]
    assert records.stale_count(HERE) == 1  # ember tune says so
    assert records.best(1, OTHER_CPU)["t1"].schedule == "other-cpu"


def test_the_compile_s_thread_count_is_preferred(tmp_path: Path) -> None:
    records = Records(tmp_path / "r.sqlite")
    records.add(record("t1", "one-thread", 1e-3, threads=1), HERE)
    records.add(record("t1", "two-threads", 2e-3, threads=2), HERE)
    assert records.best(2, HERE)["t1"].schedule == "two-threads"
    assert records.best(1, HERE)["t1"].schedule == "one-thread"
    assert records.best(4, HERE)["t1"].schedule == "one-thread"  # the fastest of any


def _write_many(path: str, writer: int) -> None:
    records = Records(path)
    for i in range(25):
        records.add(record(f"t{writer}", f"s{i}", 1e-3 + i * 1e-6), HERE)


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "r.sqlite")
    Records(path)
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(path, w)) for w in range(3)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(60)
        assert process.exitcode == 0
    records = Records(path)
    assert [len(records.of_task(f"t{w}", HERE)) for w in range(3)] == [25, 25, 25]


def test_a_file_that_is_not_records_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database " * 100)
    with pytest.raises(EmberError, match="not a tuning records file"):
        Records(path)


def test_the_default_file_is_used_only_where_it_exists(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("EMBER_RECORDS", str(tmp_path / "user.sqlite"))
    assert resolve_path(None) is None
    Records(tmp_path / "user.sqlite")
    assert resolve_path(None) == tmp_path / "user.sqlite"
    assert resolve_path(False) is None and resolve_path("none") is None
    monkeypatch.setenv("EMBER_RECORDS", "0")
    assert resolve_path(None) is None
    assert resolve_path(str(tmp_path / "x.sqlite")) == tmp_path / "x.sqlite"


def test_without_a_records_file_sqlite_is_never_imported(tmp_path: Path) -> None:
    """`import ember` and learning that there is no records file load no sqlite3."""
    code = ("import sys, ember\n"
            "from ember.targets.tuning_records import resolve_path\n"
            "assert resolve_path(None) is None\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sqlite3'))")  # fmt: skip
    env = {"EMBER_RECORDS": str(tmp_path / "absent.sqlite"), "PATH": "/usr/bin:/bin"}
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, check=True)  # fmt: skip
    assert found.stdout.strip() == "[]"


def test_this_process_has_an_identity() -> None:
    who = identity()
    assert who.version.startswith("ember ") and "/" in who.cpu


def test_without_a_margin_any_faster_schedule_replaces_the_default(tmp_path: Path) -> None:
    """The NPU's cycle model has no noise: its records are read with no margin."""
    records = Records(tmp_path / "r.sqlite")
    records.add(record("t1", "default", 1.00e-3), HERE)
    records.add(record("t1", "faster", 0.99e-3), HERE)
    assert records.best(1, HERE)["t1"].schedule == "default"
    assert records.best(1, HERE, margin=0.0)["t1"].schedule == "faster"
