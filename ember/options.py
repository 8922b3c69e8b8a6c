"""`Options`: how to compile (optimisation level, layout, passes left out).

A module of its own so that a target's pipeline (`targets/cpu/pipeline.py`)
reads the options without importing the public API that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ember.passes.graph.optimize import DEFAULT_LAYOUT


@dataclass(frozen=True)
class Options:
    """How to compile: `opt_level` 0, 1 or 2 (see `graph-optimize`), the
    activation `layout` of convolutions at level 2 ("NHWC", "NCHWc", or "none"
    for NCHW), and optimisation
    passes to leave out by name (`disabled`, e.g. ("loop-fuse",); one of
    `OPTIONAL_PASSES`). `profile` times every kernel call
    (`loop-instrument-kernels`); without it the code has no timing in it."""

    opt_level: int = 2
    layout: str = DEFAULT_LAYOUT
    disabled: tuple[str, ...] = ()
    profile: bool = False


DEFAULT_OPTIONS = Options()

OPTIONAL_PASSES = ("graph-canonicalize", "graph-fold-batchnorm", "cse", "graph-layout",
                   "graph-fuse", "convert-conv-to-winograd", "loop-fuse")  # fmt: skip
"""The passes `Options.disabled` may name (the others are needed to lower)."""
