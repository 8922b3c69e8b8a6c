"""`CompileReport`: what a compile cost (seconds per stage and pass) and produced.

A module of its own so that a target's pipeline fills the report without
importing the public API that calls it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

StageListener = Callable[[str, float | None], None]
"""Told `(stage, None)` when a compile stage starts and `(stage, seconds)`
when it ends (the CLI prints progress with it)."""


class PassObserver(Protocol):
    """Shown the module before and after each pass a target's pipeline runs
    through `apply_passes` (`ember explore` snapshots the IR with it); it
    must not change the module."""

    def before(self, pass_name: str, module: ModuleOp) -> None: ...

    def after(self, pass_name: str, module: ModuleOp) -> None: ...


@dataclass(frozen=True)
class KernelCost:
    """What one call of a kernel function costs, counted statically at the
    loop level (`loop-instrument-kernels`): float operations (`flops`, -1
    when a loop bound is not a constant) and the bytes of the buffers it
    takes (`bytes`, each counted once: the least traffic a call needs);
    `label` says what it computes (its main float ops, loop depth, output);
    `source` names the model's nodes it runs (`conv1 + relu1`, and how many
    other call sites share the function: `ember.dialects.source_names`),
    '' when they are unknown."""

    name: str
    label: str
    flops: int
    bytes: int
    source: str = ""

    @property
    def title(self) -> str:
        """How reports name the kernel: `conv1 + relu1 (kernel 3)`, else its symbol."""
        return kernel_title(self.name, self.source)


KERNEL_NUMBER = re.compile(r"_kernel(\d+)")


def kernel_title(symbol: str, source: str) -> str:
    """`{source} (kernel N)` for kernel function `symbol` (`main_kernel3_conv1`),
    or `symbol` when the source is unknown."""
    if not source:
        return symbol
    number = KERNEL_NUMBER.search(symbol)
    return f"{source} (kernel {number.group(1)})" if number else f"{source} ({symbol})"


@dataclass
class CompileReport:
    """What compiling cost and produced: seconds per stage (`seconds`: import,
    graph, tensor, loop, llvm, llvm-jit), per pass or LLVM phase within them
    (`pass_seconds`, by pass name), CPU seconds per pass (`pass_cpu_seconds`,
    the LLVM phases together as `llvm-jit`: on a busy machine CPU time shows
    how compile time scales better than wall time), memory, code size.
    With a profile, `kernel_costs` lists the timed kernel functions in the
    order of their counters, which lie at byte `profile_offset` of the arena
    (two int64 per kernel: calls, cycles)."""

    seconds: dict[str, float] = field(default_factory=dict)
    pass_seconds: dict[str, float] = field(default_factory=dict)
    pass_cpu_seconds: dict[str, float] = field(default_factory=dict)
    arena_bytes: int = 0
    naive_bytes: int = 0
    arena_formula: str = ""
    """The arena's bytes as an expression over the symbols, for a model
    compiled for every size of them (then `arena_bytes` is 0)."""
    weights_bytes: int = 0
    kernel_costs: tuple[KernelCost, ...] = ()
    profile_offset: int | None = None
    cache_key: str = ""
    """The compile cache's key for the model (`ember/cache.py`), if it was looked up."""
    cache_hit: bool = False
    """Whether the model was loaded from the cache rather than compiled."""
    listener: StageListener | None = field(default=None, repr=False, compare=False)
    observer: PassObserver | None = field(default=None, repr=False, compare=False)
    """Shown the module around each pass (`PassObserver`)."""

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())

    @contextmanager
    def timed_pass(self, name: str) -> Iterator[None]:
        """Adds the wall and CPU seconds of the `with` block to pass `name`."""
        start, cpu_start = time.perf_counter(), time.process_time()
        yield
        self.pass_seconds[name] = self.pass_seconds.get(name, 0.0) + time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        self.pass_cpu_seconds[name] = self.pass_cpu_seconds.get(name, 0.0) + cpu

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Times the work in the `with` block as (part of) stage `name`."""
        if self.listener is not None:
            self.listener(name, None)
        start = time.perf_counter()
        yield
        elapsed = time.perf_counter() - start
        self.seconds[name] = self.seconds.get(name, 0.0) + elapsed
        if self.listener is not None:
            self.listener(name, elapsed)
