"""`Options`: how to compile (optimisation level, layout, passes left out, threads).

A module of its own so that a target's pipeline (`targets/cpu/pipeline.py`)
reads the options without importing the public API that calls it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ember.errors import EmberError
from ember.passes.graph.optimize import DEFAULT_LAYOUT

if TYPE_CHECKING:
    from ember.targets.tuning_records import BestSchedules


@dataclass(frozen=True)
class Options:
    """How to compile: `opt_level` 0, 1 or 2 (see `graph-optimize`), the
    activation `layout` of convolutions at level 2 ("NHWC", "NCHWc", or "none"
    for NCHW), and optimisation
    passes to leave out by name (`disabled`, e.g. ("loop-fuse",); one of
    `OPTIONAL_PASSES`), the `threads` parallel loops are split among
    (`loop-parallelize`; 1 here, so code built from bare `Options` has no
    launches; `ember.compile` and the CLI default to every core), and
    `profile`: time every kernel call (`loop-instrument-kernels`); without
    it the code has no timing in it; `trace` (with `profile`) also appends
    each kernel call to the runtime's trace when one is recorded
    (`ember.targets.cpu.trace`, `ember bench --trace`). For a GPU target, `arch` is the
    compute capability the PTX is for (`sm_90`) and `emulate` runs the
    `gpu`-level kernels on this CPU (every block and thread) instead of on
    a GPU. `records` is a tuning records file (`ember.targets.tuning_records`) whose
    fastest schedules the CPU pipeline (`tensor-apply-records`) and the NPU's
    (`npu-apply-records`) apply; empty: none. `schedules` are the CPU's
    fastest schedules of that file at `threads` threads where the compile
    read them already (`ember.targets.tuning_records.with_best_schedules`):
    the cache key and `tensor-apply-records` use them instead of reading
    the file again."""

    opt_level: int = 2
    layout: str = DEFAULT_LAYOUT
    disabled: tuple[str, ...] = ()
    profile: bool = False
    trace: bool = False
    threads: int = 1
    arch: str = "sm_90"
    emulate: bool = False
    records: str = ""
    schedules: BestSchedules | None = None


DEFAULT_OPTIONS = Options()

OPTIONAL_PASSES = ("graph-canonicalize", "graph-fold-batchnorm", "cse", "graph-layout",
                   "graph-fuse", "convert-conv-to-winograd", "loop-fuse-epilogues", "loop-fuse",
                   "loop-expand-math")  # fmt: skip
"""The passes `Options.disabled` may name (the others are needed to lower)."""

MAX_THREADS = 1024
"""The most threads a compiled model may use (the runtime's pool holds
MAX_THREADS - 1 workers next to the calling thread)."""


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS
    says, else every core)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def resolve_threads(threads: object) -> int:
    """`threads` checked (an int from 1 to MAX_THREADS), or every available
    core for None; anything else is an `EmberError`."""
    if threads is None:
        return min(available_cores(), MAX_THREADS)
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise EmberError(f"threads must be an integer from 1 to {MAX_THREADS}, got {threads!r}")
    return threads
