"""Measuring on a Dask cluster: a LocalCluster of 2 workers on loopback."""

from __future__ import annotations

import os

import pytest

from ember.targets.cpu.schedule.tasks import Task
from ember.targets.tuning_records import identity
from ember.tuning.measure import Candidate, Measurement, measure
from ember.tuning.runner import CRASHED, DaskRunner

pytest.importorskip("dask.distributed", reason="the tune extra: pip install 'ember[tune]'")

DIE = "die"
"""A candidate whose measuring worker exits (as one killed mid-measurement)."""


def measure_or_die(candidate: Candidate) -> Measurement:
    if candidate.schedule == DIE:
        os._exit(1)
    return measure(candidate)


def test_a_local_cluster_measures_and_survives_a_lost_worker(tasks: list[Task]) -> None:
    runner = DaskRunner(workers=2, function=measure_or_die)
    try:
        first, second = tasks[0], tasks[1]
        candidates = [Candidate(first.key, first.harness, ""),
                      Candidate(second.key, second.harness, DIE),
                      Candidate(second.key, second.harness, "")]  # fmt: skip
        results = runner.run(candidates)
    finally:
        runner.close()
    assert "LocalCluster of 2 workers" in runner.description
    ok, lost, after = results
    assert ok.ok and ok.cpu == identity().cpu and ok.version == identity().version
    assert not lost.ok and lost.error.startswith(CRASHED)
    assert after.ok  # the batch goes on without the lost candidate
