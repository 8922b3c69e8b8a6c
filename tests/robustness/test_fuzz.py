"""Seeded mutations of a real model (bytes and protobuf fields, see
`tests/robustness/fuzz.py`) never end in a traceback, a crash or a hang:
every case gives a result or a one-line `EmberError`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run_cases(cases: str, timeout: float) -> None:
    command = [sys.executable, "-m", "tests.robustness.fuzz", cases]
    try:
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout.decode() if isinstance(expired.stdout, bytes) else expired.stdout
        started = [line for line in (output or "").splitlines() if line.startswith("case ")]
        pytest.fail(f"hang: no answer within {timeout} s, in {started[-1] if started else '?'}")
    last = [line for line in result.stdout.splitlines() if line.startswith("case ")]
    where = last[-1] if last else "before the first case"
    assert result.returncode != 3, result.stdout[result.stdout.find("BUG") :]
    assert result.returncode == 0, (
        f"crash (status {result.returncode}) in {where}:\n{result.stderr[-2000:]}"
    )
    outcomes = [line.strip() for line in result.stdout.splitlines() if line.startswith("  ")]
    assert len(outcomes) == len(last), "every case ends in a result or a diagnostic"
    # The mutations must leave enough models valid to exercise the compiler too.
    assert any(o.startswith("ok") for o in outcomes) and any(
        o.startswith("error") for o in outcomes
    )


@pytest.mark.slow
def test_mutated_models() -> None:
    _run_cases("0:60", timeout=240)


@pytest.mark.slow
def test_many_mutated_models() -> None:
    _run_cases("60:1000", timeout=2400)
