"""Measuring one schedule of one task: its harness compiled and timed alone.

`measure(Candidate)` parses the task's harness (`ember.targets.cpu.schedule.tasks`),
gives its head op the candidate's schedule (none: the default, as
`tensor-default-schedule` attaches it), fills the weights with random
values, runs the rest of the CPU pipeline (`lower_from`), JIT-compiles it
and calls it on random buffers: a few calls to warm up, then `REPEATS`
timings of enough calls each to last `MIN_SECONDS`, of which the median
is the time and (max - min) / median the spread. Before each call the
caches are left as the model leaves them for this kernel
(`cache_flush.warm_inputs`: its buffers in L2, its weights further out),
and only the call is timed. The buffers it leaves
are compared with the default schedule's (computed once per task in this
process): a candidate whose results differ beyond rounding is reported as
wrong, never as fast.

It is a plain function of picklable values, so it runs the same in this
process, in a worker process (`ember.tuning.runner`, which survives a
candidate that crashes its process) or on a Dask worker.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from ember.context import make_context
from ember.dialects.graph.types import dense_from_array, numpy_dtype
from ember.dialects.loop import ALIGNMENT, WeightOp, aligned_zeros
from ember.dialects.schedule import STRUCTURED_OPS, StructuredOp, parse_schedule, set_schedule
from ember.errors import EmberError
from ember.options import Options
from ember.report import CompileReport
from ember.targets.cpu.schedule.cpu_target import HOST, cpu_target
from ember.targets.cpu.schedule.default_schedule import default_for
from ember.targets.cpu.schedule.tasks import HARNESS_ENTRY, HEAD_ATTR
from ember.targets.tuning_records import identity
from ember.tuning.cache_flush import warm_inputs

MIN_SECONDS = 0.002
"""Each timing runs enough calls to last at least this long."""
REPEATS = 7
"""Timings per measurement (the median is the time)."""
WARM_UP = 2
"""Calls before the first timing."""
SEED = 0
"""The seed of the harness's random weights and buffers."""


@dataclass(frozen=True)
class Candidate:
    """One schedule of one task to measure: the harness text, the schedule's
    text (`#loop.schedule<...>`; empty: the default), the threads."""

    task: str
    harness: str
    schedule: str
    threads: int = 1


@dataclass(frozen=True)
class Measurement:
    """What measuring a candidate gave: `seconds` (median) and `spread`, or
    an `error` (it did not compile, or its results differ from the
    default's)."""

    candidate: Candidate
    schedule: str = ""
    """The schedule that ran (the default's text where the candidate had none)."""
    seconds: float = math.inf
    spread: float = 0.0
    error: str = ""
    compile_seconds: float = 0.0
    version: str = ""
    cpu: str = ""
    """The build and the CPU that measured (`ember.targets.tuning_records.identity`)."""

    @property
    def ok(self) -> bool:
        return not self.error


def head_op(module: ModuleOp) -> StructuredOp:
    """The structured op a harness searches the schedule of (`HEAD_ATTR`)."""
    for op in module.walk():
        if isinstance(op, STRUCTURED_OPS) and HEAD_ATTR in op.attributes:
            return op  # type: ignore[return-value]
    raise EmberError(f"the harness marks no structured op {HEAD_ATTR}")


class Harness:
    """A task's harness compiled with one schedule, with its buffers."""

    def __init__(self, harness: str, schedule: str, threads: int):
        from ember.targets.cpu.pipeline import jit_entry, lower_from

        module = Parser(make_context(), harness).parse_module()
        head = head_op(module)
        del head.attributes[HEAD_ATTR]
        chosen = parse_schedule(schedule) if schedule else default_for(head, cpu_target(HOST))
        set_schedule(head, chosen)
        self.schedule = str(chosen)
        """The schedule that runs (the default's, where none was given)."""
        rng = np.random.default_rng(SEED)
        for op in module.walk():
            if isinstance(op, WeightOp):
                op.properties["value"] = _random_value(op, rng)
        function = next(op for op in module.ops if isinstance(op, FuncOp))
        self.inputs = [_random_buffer(a.type, rng) for a in function.body.block.args]
        report = CompileReport()
        self.weights = lower_from(
            module, "tensor-default-schedule", report, Options(threads=threads)
        )
        self.arena = aligned_zeros(max(report.arena_bytes, ALIGNMENT))
        self._function = jit_entry(module, HARNESS_ENTRY, report)
        self.buffers = [_aligned(b) for b in self.inputs]
        self._pointers = (ctypes.c_void_p * max(1, len(self.buffers)))(
            *[b.ctypes.data for b in self.buffers]
        )

    def __call__(self) -> None:
        self._function(ctypes.addressof(self._pointers), self.weights.ctypes.data,
                       self.arena.ctypes.data)  # fmt: skip

    def results(self) -> list[np.ndarray]:
        """The buffers after one call from the initial values."""
        for buffer, initial in zip(self.buffers, self.inputs, strict=True):
            buffer[...] = initial
        self()
        return [b.copy() for b in self.buffers]


def _random_value(op: WeightOp, rng: np.random.Generator) -> DenseIntOrFPElementsAttr:
    shaped = op.value.get_type()
    dtype = numpy_dtype(shaped.get_element_type())
    return dense_from_array(_random_array(tuple(shaped.get_shape()), dtype, rng))


def _random_buffer(memref_type: object, rng: np.random.Generator) -> np.ndarray:
    assert isinstance(memref_type, MemRefType)
    shape = tuple(memref_type.get_shape())
    return _aligned(_random_array(shape, numpy_dtype(memref_type.element_type), rng))


def _aligned(array: np.ndarray) -> np.ndarray:
    """A copy of `array` at an `ALIGNMENT`-aligned address (as the arena's buffers are)."""
    raw = aligned_zeros(max(array.nbytes, ALIGNMENT))[: array.nbytes]
    copy = raw.view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def _random_array(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, 8, shape).astype(dtype)


def time_calls(call: Callable[[], None],
               before: Callable[[], None] | None = None) -> tuple[float, float]:  # fmt: skip
    """(median seconds per call, spread) of `call` (see the module
    docstring); `before` runs ahead of each call, untimed (a cache flush)."""

    def timed() -> float:
        if before is not None:
            before()
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    for _ in range(WARM_UP):
        timed()
    number = max(1, math.ceil(MIN_SECONDS / max(timed(), 1e-7)))
    samples = [sum(timed() for _ in range(number)) / number for _ in range(REPEATS)]
    median = float(np.median(samples))
    return median, (max(samples) - min(samples)) / median


def same_results(found: list[np.ndarray], expected: list[np.ndarray]) -> str:
    """Empty if `found` matches `expected` up to rounding (sums may be taken
    in another order), else what differs."""
    for number, (a, b) in enumerate(zip(found, expected, strict=True)):
        if a.dtype.kind != "f":
            if not np.array_equal(a, b):
                return f"buffer {number} differs from the default schedule's"
            continue
        wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
        scale = max(1.0, float(np.nanmax(np.abs(wide_b), initial=0.0)))
        if not np.allclose(wide_a, wide_b, rtol=1e-3, atol=1e-4 * scale, equal_nan=True):
            worst = float(np.nanmax(np.abs(wide_a - wide_b)))
            return f"buffer {number} differs from the default schedule's by up to {worst:.3g}"
    return ""


_REFERENCES: dict[tuple[str, int], list[np.ndarray]] = {}
"""The default schedule's results per (task, threads), in this process."""


def reference_results(candidate: Candidate) -> list[np.ndarray]:
    """The default schedule's buffers after one call, for `candidate`'s task."""
    key = (candidate.task, candidate.threads)
    if key not in _REFERENCES:
        if len(_REFERENCES) > 8:
            _REFERENCES.clear()
        _REFERENCES[key] = Harness(candidate.harness, "", candidate.threads).results()
    return _REFERENCES[key]


def measure(candidate: Candidate) -> Measurement:
    """Compiles, checks and times `candidate` (see the module docstring)."""
    who = identity()
    result = Measurement(candidate, candidate.schedule, version=who.version, cpu=who.cpu)
    start = time.perf_counter()
    try:
        harness = Harness(candidate.harness, candidate.schedule, candidate.threads)
    except EmberError as error:
        return replace(result, error=f"does not compile: {error}")
    result = replace(result, schedule=harness.schedule,
                     compile_seconds=time.perf_counter() - start)  # fmt: skip
    if candidate.schedule:
        problem = same_results(harness.results(), reference_results(candidate))
        if problem:
            return replace(result, error=problem)
    seconds, spread = time_calls(harness, warm_inputs(harness.buffers))
    return replace(result, seconds=seconds, spread=spread)


__all__ = [
    "Candidate",
    "Harness",
    "Measurement",
    "head_op",
    "measure",
    "same_results",
    "time_calls",
]
