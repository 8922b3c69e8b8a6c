"""Reading a profile back: the counters `loop-instrument-kernels` keeps.

A model compiled with a profile counts, per kernel function, its calls and
the cycle-counter ticks spent in them, in two int64 per kernel at the end of
its arena (`CompileReport.profile_offset`, `CompileReport.kernel_costs`).
The ticks become seconds at the counter's rate, measured here once per
process against `time.perf_counter` (the x86 time-stamp counter ticks at a
constant rate, whatever the clock speed of the moment).
"""

from __future__ import annotations

import ctypes
import functools
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm
import numpy as np

from ember.errors import EmberError
from ember.report import KernelCost, kernel_title
from ember.targets.cpu.jit import JitModule

COUNTER_ARCHES = ("x86_64", "i386", "i686")
"""Hosts whose cycle counter user code may read at a constant rate (the
time-stamp counter); elsewhere (AArch64's PMCCNTR_EL0) reading it can trap."""


def check_profile_supported() -> None:
    """A profile on a host without a readable constant-rate counter is an
    error up front, never a trap in generated code."""
    triple = llvm.get_process_triple()
    if not triple.startswith(COUNTER_ARCHES):
        raise EmberError(f"profile=True reads x86's time-stamp counter; this host is {triple}")


_COUNTER_IR = """
declare i64 @llvm.readcyclecounter()
define i64 @ember_read_cycle_counter() {
  %ticks = call i64 @llvm.readcyclecounter()
  ret i64 %ticks
}
"""


@functools.cache
def cycle_counter_reader() -> Callable[[], int]:
    """A function that reads the counter `loop.timestamp` reads, from Python."""
    module = JitModule(_COUNTER_IR)
    read = module.function("ember_read_cycle_counter", ctypes.c_int64, [])
    read.module = module  # the JIT code lives as long as the function
    return read  # type: ignore[no-any-return]


@functools.cache
def cycle_counter_rate() -> float:
    """Ticks per second of the counter `loop.timestamp` reads: the median of
    three 20 ms windows timed by `time.perf_counter`."""
    read = cycle_counter_reader()
    rates = []
    for _ in range(3):
        t0, c0 = time.perf_counter(), read()
        time.sleep(0.02)
        c1, t1 = read(), time.perf_counter()
        rates.append((c1 - c0) / (t1 - t0))
    return statistics.median(rates)


@dataclass(frozen=True)
class KernelProfile:
    """One kernel function's calls and time since the counters were zeroed,
    with its static cost per call (`flops` -1 when unknown) and the model's
    nodes it runs (`source`)."""

    name: str
    label: str
    calls: int
    seconds: float
    flops: int
    bytes: int
    source: str = ""

    @property
    def title(self) -> str:
        """`conv1 + relu1 (kernel 3)`: the model's nodes it runs (`KernelCost.title`)."""
        return kernel_title(self.name, self.source)

    @property
    def seconds_per_call(self) -> float:
        return self.seconds / self.calls if self.calls else 0.0

    @property
    def gflops(self) -> float | None:
        """Achieved GFLOP/s over all its calls (None: unknown or not timed)."""
        if self.flops < 0 or self.seconds <= 0:
            return None
        return self.flops * self.calls / self.seconds / 1e9

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity: flops per byte of its buffers."""
        return self.flops / self.bytes if self.flops >= 0 and self.bytes > 0 else None


def counters(arena: np.ndarray, offset: int, count: int) -> np.ndarray:
    """The (calls, ticks) counters of `count` kernels: a view into `arena`."""
    return arena[offset : offset + count * 16].view(np.int64).reshape(count, 2)


def read_profile(
    arena: np.ndarray, offset: int, costs: Sequence[KernelCost]
) -> list[KernelProfile]:
    """One row per kernel function, slowest first."""
    rate = cycle_counter_rate()
    values = counters(arena, offset, len(costs))
    rows = [KernelProfile(cost.name, cost.label, int(calls), int(ticks) / rate, cost.flops,
                          cost.bytes, cost.source)
            for cost, (calls, ticks) in zip(costs, values, strict=True)]  # fmt: skip
    return sorted(rows, key=lambda row: -row.seconds)


__all__ = [
    "COUNTER_ARCHES",
    "KernelProfile",
    "check_profile_supported",
    "counters",
    "cycle_counter_rate",
    "cycle_counter_reader",
    "read_profile",
]
