"""`ember tune` and `--records` from the command line; a killed search resumes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ember.targets.tuning_records import Records
from ember.tuning.search import SAMPLES
from tests.tools.test_cli import assert_one_line_error, run


def test_list_prints_the_tasks(model_path: Path, tmp_path: Path) -> None:
    result = run(
        "ember", "tune", str(model_path), "--list", "--records", str(tmp_path / "r.sqlite")
    )
    assert result.returncode == 0, result.stderr
    assert "3 tasks (4 ops)" in result.stdout
    assert (
        "  2 " in result.stdout
        and "linalg.matmul [8x48x48] (fc1, relu1, fc2, ...)" in result.stdout
    )


@pytest.mark.slow
def test_tune_then_run_with_the_records(model_path: Path, tmp_path: Path) -> None:
    records = str(tmp_path / "r.sqlite")
    tuned = run("ember", "tune", str(model_path), "--records", records, "--trials", "2",
                "--batch", "2", "--in-process", "-q", "--no-check")  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    assert "model estimate:" in tuned.stdout and "speedup" in tuned.stdout
    assert "model measured: " not in tuned.stdout  # --no-check
    checked = run("ember", "run", str(model_path), "--records", records, "--threads", "1",
                  "--check", "-q")  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert "-> ok" in checked.stdout
    listed = run("ember", "tune", str(model_path), "--list", "--records", records)
    assert " ms " in listed.stdout  # the default's and the best time per task


def test_records_turned_off_is_one_error(model_path: Path) -> None:
    env = {**os.environ, "EMBER_RECORDS": "0"}
    result = subprocess.run([sys.executable, "-m", "ember.cli", "tune", str(model_path)],
                            capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert_one_line_error(result, "tuning records are off", "--records FILE")


def test_a_records_file_that_is_not_one_is_one_error(model_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database " * 100)
    result = run("ember", "run", str(model_path), "--records", str(bad), "-q")
    assert_one_line_error(result, "bad.sqlite", "not a tuning records file")


def _rows(path: Path) -> list[tuple[str, str]]:
    try:
        with sqlite3.connect(path, timeout=10) as connection:
            return connection.execute("SELECT task, schedule FROM records").fetchall()
    except sqlite3.OperationalError:  # not made yet
        return []


@pytest.mark.slow  # a search killed mid-way and run again: 10-15 s
def test_a_killed_search_loses_nothing_and_resumes(model_path: Path, tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    command = [sys.executable, "-m", "ember.cli", "tune", str(model_path), "--records",
               str(records), "--trials", "4", "--batch", "2", "--in-process", "-q"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(_rows(records)) < 8 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    before = _rows(records)
    assert len(before) >= 8
    Records(records).of_task(before[0][0])  # the file is whole
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    after = _rows(records)
    assert set(before) <= set(after)
    # Each schedule measured once, or up to SAMPLES times where the last step confirms.
    assert all(after.count(pair) <= SAMPLES for pair in set(after))
    assert max(len({s for t, s in after if t == task}) for task, _ in after) <= 4


def test_stale_records_are_ignored_with_a_note(model_path: Path, tmp_path: Path) -> None:
    from ember.targets.tuning_records import Identity, Record, identity

    records = Records(tmp_path / "r.sqlite")
    older = Identity("ember 0.0.1, llvm 1.0", identity().cpu)
    records.add(Record("0" * 20, "#loop.schedule<order = [0]>", True, 1e-3, 0.0, "", 1), older)
    result = run("ember", "tune", str(model_path), "--list", "--records", str(records.path))
    assert result.returncode == 0
    assert "1 records of this CPU from another Ember build are ignored" in result.stderr
    assert result.stdout.splitlines()[2].split()[3:5] == ["-", "-"]  # nothing shows as measured
