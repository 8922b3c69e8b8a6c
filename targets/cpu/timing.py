"""Seconds spent in each compile phase, so callers can report where time goes.

Plain attributes, no printing: benchmarks and `--time-passes`-style reports
read them and decide what to show.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

Phase = Literal["parse", "optimize", "codegen", "link"]


@dataclass
class CompileTimes:
    """Wall-clock seconds per phase of turning LLVM IR into callable code."""

    parse_s: float = 0.0
    optimize_s: float = 0.0
    codegen_s: float = 0.0
    link_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.parse_s + self.optimize_s + self.codegen_s + self.link_s

    @contextmanager
    def measure(self, phase: Phase) -> Iterator[None]:
        """Add the time spent inside the `with` block to `phase`."""
        start = time.perf_counter()
        try:
            yield
        finally:
            field = f"{phase}_s"
            setattr(self, field, getattr(self, field) + time.perf_counter() - start)
