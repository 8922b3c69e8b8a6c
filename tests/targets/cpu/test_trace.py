"""Chrome traces of compiled runs (targets/cpu/trace.py, the pool's trace
buffer in runtime.py): the structure Perfetto's JSON importer reads, one
slice per kernel call and per parallel chunk. No timing is checked."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest

import ember
from ember.targets.cpu.trace import TraceRecorder, chrome_trace, write_trace
from tests.targets.cpu.test_profile import _inputs, matmul_relu

REQUIRED = ("ph", "ts", "dur", "pid", "tid", "name")
"""The keys of a complete event (`"ph": "X"`) in the trace-event format."""
RUNS = 3


@pytest.fixture(scope="module")
def traced() -> tuple[Any, dict[str, Any], int]:
    """A model on two threads, traced over RUNS runs: (model, trace, kernel calls)."""
    compiled = ember.compile(matmul_relu(), threads=2, profile=True, trace=True)
    a, b = _inputs()
    compiled.reset_profile()
    with TraceRecorder() as recorder:
        for _ in range(RUNS):
            recorder.run(lambda: compiled(a, b))
    calls = sum(row.calls for row in compiled.profile())
    stream = io.StringIO()
    write_trace(chrome_trace(recorder.events, compiled.report.kernel_costs, "mm",
                             recorder.dropped), stream)  # fmt: skip
    return compiled, json.loads(stream.getvalue()), calls


def _slices(trace: dict[str, Any], category: str) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == category]


def test_every_slice_has_the_required_keys(traced: tuple[Any, dict[str, Any], int]) -> None:
    _, trace, _ = traced
    events = trace["traceEvents"]
    for event in events:
        assert event["ph"] in ("X", "M"), event
        if event["ph"] == "X":
            assert all(key in event for key in REQUIRED), event
            assert event["dur"] >= 0 and event["ts"] >= 0
            assert isinstance(event["tid"], int) and event["pid"] == 1
    assert trace["otherData"]["dropped_events"] == 0


def test_one_slice_per_run_and_per_kernel_call(traced: tuple[Any, dict[str, Any], int]) -> None:
    compiled, trace, calls = traced
    assert len(_slices(trace, "run")) == RUNS
    kernels = _slices(trace, "kernel")
    assert len(kernels) == calls > 0  # the profile's counters saw the same calls
    titles = {cost.title for cost in compiled.report.kernel_costs}
    assert {k["name"] for k in kernels} <= titles
    assert all(k["tid"] == 0 for k in kernels)  # called from the caller's thread


def test_parallel_chunks_have_thread_tracks(traced: tuple[Any, dict[str, Any], int]) -> None:
    compiled, trace, _ = traced
    chunks = _slices(trace, "chunk")
    assert chunks, "the parallel loops ran no chunk"
    titles = {cost.title for cost in compiled.report.kernel_costs}
    assert all(c["name"].removesuffix(" chunk") in titles for c in chunks)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}  # fmt: skip
    assert names[0] == "caller"
    assert {c["tid"] for c in chunks} <= set(names)
    assert all(names[tid] == f"worker {tid}" for tid in names if tid)


def test_nothing_is_recorded_outside_a_recorder(traced: tuple[Any, dict[str, Any], int]) -> None:
    compiled, _, _ = traced
    a, b = _inputs()
    compiled(a, b)  # between recordings: the pool has no buffer
    with TraceRecorder(capacity=1) as recorder:
        pass
    assert len(recorder.events) == 0 and recorder.dropped == 0


def test_a_full_buffer_counts_what_it_drops(traced: tuple[Any, dict[str, Any], int]) -> None:
    compiled, _, _ = traced
    a, b = _inputs()
    with TraceRecorder(capacity=2) as recorder:
        recorder.run(lambda: compiled(a, b))
    assert len(recorder.events) == 3  # the run, then the first two events
    assert recorder.dropped > 0
    assert np.all(recorder.events[1:, 3] >= recorder.events[1:, 2])
