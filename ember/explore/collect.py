"""Compiling a model for the explorer: the target's own compile, watched
pass by pass (`snapshots.py`), then, for a target whose kernels are
profiled (the CPU's `loop-instrument-kernels`), a few runs on random
inputs that time every kernel, and the machine's limits for the roofline;
for a target with a cycle model (the NPU), its per-layer cycles.

A target that compiles outside the pass runner (the NPU's partition and
programs) has its pipeline (`Target.pipeline`) run once more on a copy of
the graph IR, up to its first lowering, watched the same way, for the
pipeline view.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.context import Context

from ember.benchmarking import ProfileReport
from ember.dialects.graph.symbolic import Range
from ember.errors import EmberError
from ember.explore.kernel_map import inherit_kernels
from ember.explore.snapshots import Snapshots
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource
from ember.inputs import random_array
from ember.options import Options
from ember.report import CompileReport
from ember.targets.registry import target_named
from ember.targets.target import Target

PROFILED_PASS = "loop-instrument-kernels"
"""A target whose pipeline with `Options.profile` has this pass times its kernels."""

RUNS = 10


@dataclass
class Exploration:
    """Everything a report shows about one model compiled for one target."""

    model: str
    target: str
    options: Options
    snapshots: Snapshots
    report: CompileReport
    profile: ProfileReport | None = None
    npu: Any = None
    """The NPU's `NpuReport` (`targets/npu/report.py`), for a target with a cycle model."""
    dma_bytes_per_cycle: int = 0
    notes: list[str] = field(default_factory=list)
    compiled: Any = None
    """The compiled model."""


def watched_report(report: CompileReport | None = None) -> CompileReport:
    """`report` (or a new one) with a `Snapshots` observer: a compile it
    goes to is watched pass by pass (`exploration_of` reads it back)."""
    report = report or CompileReport()
    if not isinstance(report.observer, Snapshots):
        report.observer = Snapshots()
    return report


def exploration_of(name: str, target: str, options: Options, report: CompileReport,
                   profile: ProfileReport | None = None) -> Exploration:  # fmt: skip
    """What a compile with a `watched_report` saw (`ember compile --html`,
    `ember bench --html`), with the profile of its runs if any."""
    snapshots = report.observer
    assert isinstance(snapshots, Snapshots), "compile with watched_report()"
    found = Exploration(name, target, options, snapshots, report, profile)
    if profile is None:
        found.notes.append("no profile: kernels timed with `ember explore` or `ember bench "
                           "--profile --html`")  # fmt: skip
    _inherit(snapshots)
    return found


def _inherit(snapshots: Snapshots) -> None:
    if snapshots.graph_before is not None and snapshots.graph_after is not None:
        inherit_kernels(snapshots.graph_before, snapshots.graph_after)


def profiles_kernels(target: Target, options: Options) -> bool:
    """Whether `target` times each kernel when compiled with a profile."""
    try:
        pipeline = target.pipeline(replace(options, profile=True))
    except EmberError:  # a host without a readable cycle counter
        return False
    return any(p.name == PROFILED_PASS for _, p in pipeline)


def explore_model(model: ModelSource, name: str, target: str = "cpu",
                  options: Options | None = None, runs: int = RUNS,
                  input_shapes: Mapping[str, Sequence[int]] | None = None,
                  dims: Mapping[str, Range] | None = None,
                  report: CompileReport | None = None) -> Exploration:  # fmt: skip
    """Compiles `model` (called `name` in the report) for `target`, watched;
    runs it `runs` times where its kernels are profiled."""
    options = options or Options()
    chosen = target_named(target)
    report = watched_report(report)
    snapshots = report.observer
    assert isinstance(snapshots, Snapshots)
    with report.stage("import"):
        module = import_onnx(model, input_shapes, dims)
    snapshots.start(module)
    profiled = profiles_kernels(chosen, options)
    if profiled:
        options = replace(options, profile=True)
    found = Exploration(name, target, options, snapshots, report)
    if chosen.cycle_model:
        _watch_pipeline(chosen, module.clone(), options, snapshots)
    compiled = chosen.compile(module, report, options)
    found.compiled = compiled
    if chosen.cycle_model:
        found.npu = compiled.report
        found.dma_bytes_per_cycle = _dma_rate()
        found.notes.append(f"the {target} target's programs are timed by its cycle model: see "
                           "the cycles per layer below; the host's share is not profiled")  # fmt: skip
    elif profiled and not _static_inputs(compiled):
        found.notes.append("no profile: the model's inputs have symbolic dims (give their sizes "
                           "with --dim NAME=SIZE or --input-shape NAME=DIMS to time its kernels)")  # fmt: skip
    elif profiled:
        with report.stage("profile"):
            found.profile = _profile(compiled, runs, options.threads)
    else:
        found.notes.append(f"the {target} target does not time its kernels: no profile")
    _inherit(snapshots)
    return found


LOWERING_PREFIX = "convert-"
"""Lowerings between levels are named so (`convert-graph-to-npu`)."""


def _watch_pipeline(target: Target, module: Any, options: Options, snapshots: Snapshots) -> None:
    """The target's passes up to its first lowering, watched: the lowering
    to the device's instruction stream (400k instructions for SqueezeNet
    on the NPU) would cost more to build as IR and print than the compile,
    and its result is summarised per layer anyway."""
    context = Context()
    for _, compiler_pass in target.pipeline(options):
        if compiler_pass.name.startswith(LOWERING_PREFIX):
            snapshots.skipped(compiler_pass.name, "not shown: its programs are summarised in "
                              "the NPU section (cycles per layer)")  # fmt: skip
            break
        snapshots.before(compiler_pass.name, module)
        compiler_pass.apply(context, module)
        snapshots.after(compiler_pass.name, module)


def _dma_rate() -> int:
    from ember.dialects.npu.machine import NpuParams

    return NpuParams().dma_bytes_per_cycle


def _static_inputs(compiled: Any) -> bool:
    return all(isinstance(d, int) for spec in compiled.inputs for d in spec.dims)


def _profile(compiled: Any, runs: int, threads: int) -> ProfileReport:
    """Every kernel's time over `runs` runs on seeded random inputs (after
    one untimed run), with the machine's limits."""
    from ember.machine_limits import measure_machine_limits

    rng = np.random.default_rng(0)
    inputs = {spec.name: random_array(list(spec.dims), spec.dtype, rng) for spec in compiled.inputs}
    compiled.run(inputs)
    compiled.reset_profile()
    total = 0.0
    for _ in range(runs):
        start = time.perf_counter()
        compiled.run(inputs)
        total += time.perf_counter() - start
    return ProfileReport(compiled.profile(), total, runs, measure_machine_limits(), threads)


__all__ = ["Exploration", "exploration_of", "explore_model", "profiles_kernels", "watched_report"]
