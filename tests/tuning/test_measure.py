"""Measuring a candidate: compiled alone, checked against the default, timed."""

from __future__ import annotations

import math

import numpy as np

from ember.dialects.schedule import parse_schedule
from ember.targets.cpu.schedule.tasks import Task
from ember.tuning.measure import Candidate, measure, same_results, time_calls


def test_the_default_is_measured(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.op_name == "linalg.matmul")
    result = measure(Candidate(task.key, task.harness, ""))
    assert result.ok and 0 < result.seconds < 1 and result.spread >= 0
    assert parse_schedule(result.schedule).micro_kernel is not None  # the default contraction
    assert result.cpu and result.version


def test_a_candidate_is_checked_and_timed(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.extents == (8, 48, 32))
    plain = "#loop.schedule<order = [0, 2, 1], tiles = [4, 16, 0], parallel = [0, 1], unroll = 2>"
    result = measure(Candidate(task.key, task.harness, plain))
    assert result.ok, result.error
    assert result.schedule == plain and math.isfinite(result.seconds)


def test_a_schedule_that_does_not_fit_is_an_error_not_a_time(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.op_name == "linalg.matmul")
    wrong = "#loop.schedule<order = [0, 1]>"  # two dims for a three-dim op
    result = measure(Candidate(task.key, task.harness, wrong))
    assert not result.ok and "does not compile" in result.error
    assert result.seconds == math.inf


def test_results_that_differ_beyond_rounding_are_caught() -> None:
    expected = [np.linspace(-3, 3, 64, dtype=np.float32).reshape(8, 8)]
    rounded = [expected[0] * np.float32(1 + 1e-6)]
    assert same_results(rounded, expected) == ""
    wrong = [expected[0].copy()]
    wrong[0][3, 4] += 0.5
    assert "differs from the default schedule's by up to 0.5" in same_results(wrong, expected)
    assert same_results([np.array([1, 2])], [np.array([1, 3])]) != ""


def test_timing_takes_the_median_of_repeated_batches() -> None:
    calls = []
    seconds, spread = time_calls(lambda: calls.append(1))
    assert seconds > 0 and spread >= 0 and len(calls) > 7


def test_warming_the_inputs_leaves_the_data_as_it_was() -> None:
    from ember.tuning.cache_flush import warm_inputs

    data = np.arange(100_000, dtype=np.float32)
    odd = np.arange(7, dtype=np.uint8)  # not a whole number of float32s
    prepare = warm_inputs([data, odd, np.empty(0, dtype=np.float32)])
    prepare()
    prepare()
    assert np.array_equal(data, np.arange(100_000, dtype=np.float32))
    assert np.array_equal(odd, np.arange(7, dtype=np.uint8))


def test_each_call_may_be_preceded_by_an_untimed_step() -> None:
    order: list[str] = []
    time_calls(lambda: order.append("call"), before=lambda: order.append("flush"))
    assert order[:4] == ["flush", "call", "flush", "call"]
    assert order.count("flush") == order.count("call")
