"""Traces of a compiled model's runs as Chrome trace-event JSON
(`ember bench MODEL --trace trace.json`; open it in Perfetto or
`chrome://tracing`, as PyTorch's profiler traces are).

A model compiled with `profile` and `trace` (`Options`) appends each kernel
call to the thread pool's trace buffer (`loop.trace` ->
`ember_trace_record`), and the pool appends each chunk of a parallel loop
that a thread runs (`runtime.py`). `TraceRecorder` hands the pool a buffer
for the runs in its `with` block and reads the events back; `chrome_trace`
makes them trace events:

- one track (`tid`) per thread: 0 the thread that called the model, then
  worker 1, 2, ... (`thread_name` metadata names them);
- one complete event (`"ph": "X"`) per model call (`run N`, read from
  Python around the call), per kernel call (named by the model's nodes:
  `n0 + n1 + n2 (kernel 0)`, `KernelCost.title`; its symbol and what it
  computes in `args`) and per chunk of a parallel loop (named after the
  kernel call it ran in: `... chunk`), so idle threads and uneven chunks
  show;
- times in microseconds (`ts`, `dur`) from the first event, converted from
  cycle-counter ticks at the counter's measured rate.

Events past the buffer's capacity are dropped and counted
(`otherData.dropped_events`).
"""

from __future__ import annotations

import bisect
import ctypes
import json
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import IO, Any

import numpy as np

from ember.report import KernelCost
from ember.targets.cpu.jit import thread_pool
from ember.targets.cpu.profile import cycle_counter_rate, cycle_counter_reader
from ember.targets.cpu.runtime import CHUNK_EVENT, TRACE_COUNT, TRACE_FIELDS, TRACE_SET

DEFAULT_CAPACITY = 1 << 20
"""Events a recorder holds (32 MiB): ResNet-50 on 16 threads makes about
3,000 per run."""
RUN_EVENT = -2
"""The kind of a model call's event (kernels are >= 0, chunks `CHUNK_EVENT`)."""
PROCESS_ID = 1


class TraceRecorder:
    """Records the pool's trace events while its `with` block runs; `run`
    calls a model and records the call itself too. One recorder at a time
    per process (the pool has one buffer)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        pool = thread_pool()
        self._set = pool.function(TRACE_SET, None, [ctypes.c_void_p, ctypes.c_int64])
        self._count = pool.function(TRACE_COUNT, ctypes.c_int64, [])
        self._read = cycle_counter_reader()
        self._buffer = np.zeros((capacity, TRACE_FIELDS), dtype=np.int64)
        self._runs: list[tuple[int, int]] = []
        self.events = np.zeros((0, TRACE_FIELDS), dtype=np.int64)
        """(kind, thread, begin, end) per event, once the block has ended."""
        self.dropped = 0

    def __enter__(self) -> TraceRecorder:
        self._runs.clear()
        self._set(self._buffer.ctypes.data, len(self._buffer))
        return self

    def run(self, call: Callable[[], Any]) -> Any:
        """`call()`, recorded as one `run N` event on the caller's track."""
        begin = self._read()
        try:
            return call()
        finally:
            self._runs.append((begin, self._read()))

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        count = int(self._count())
        self._set(None, 0)
        kept = min(count, len(self._buffer))
        self.dropped = count - kept
        runs = np.array([(RUN_EVENT, 0, b, e) for b, e in self._runs], dtype=np.int64)
        self.events = np.concatenate([runs.reshape(-1, TRACE_FIELDS), self._buffer[:kept].copy()])


def _thread_name(tid: int) -> str:
    return "caller" if tid == 0 else f"worker {tid}"


def chrome_trace(
    events: np.ndarray, kernels: Sequence[KernelCost], name: str = "ember", dropped: int = 0
) -> dict[str, Any]:
    """The trace-event JSON object of `events` ((kind, thread, begin, end)
    rows, `TraceRecorder.events`), kernel kinds naming rows of `kernels`."""
    rate = cycle_counter_rate()
    origin = int(events[:, 2].min()) if len(events) else 0

    def micros(ticks: int) -> float:
        return round(ticks * 1e6 / rate, 3)

    launches = sorted((int(b), int(e), int(k)) for k, _, b, e in events if k >= 0)
    starts = [b for b, _, _ in launches]

    def enclosing(begin: int) -> str:
        index = bisect.bisect_right(starts, begin) - 1
        if index >= 0 and launches[index][1] >= begin:
            return kernels[launches[index][2]].title
        return "parallel loop"

    trace: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": PROCESS_ID, "tid": 0, "args": {"name": name}}
    ]
    threads = sorted({int(t) for t in events[:, 1]} | {0})
    trace += [{"name": "thread_name", "ph": "M", "pid": PROCESS_ID, "tid": tid,
               "args": {"name": _thread_name(tid)}} for tid in threads]  # fmt: skip
    runs = 0
    for kind, tid, begin, end in events.tolist():
        event: dict[str, Any] = {"ph": "X", "pid": PROCESS_ID, "tid": tid,
                                 "ts": micros(begin - origin), "dur": micros(end - begin)}  # fmt: skip
        if kind == RUN_EVENT:
            event.update(name=f"run {runs}", cat="run")
            runs += 1
        elif kind == CHUNK_EVENT:
            event.update(name=f"{enclosing(begin)} chunk", cat="chunk")
        else:
            cost = kernels[kind]
            event.update(name=cost.title, cat="kernel",
                         args={"kernel": cost.name, "what": cost.label})  # fmt: skip
        trace.append(event)
    return {"traceEvents": trace, "displayTimeUnit": "ms",
            "otherData": {"dropped_events": dropped}}  # fmt: skip


def write_trace(trace: dict[str, Any], stream: IO[str]) -> None:
    json.dump(trace, stream)
    stream.write("\n")


__all__ = ["DEFAULT_CAPACITY", "TraceRecorder", "chrome_trace", "write_trace"]
