"""The CPU target's pipeline: graph IR -> `llvm` dialect -> native code.

Each step is a registered pass (`ember-opt -p ...` runs the same ones),
grouped in stages that `CompileReport` times:

    graph    graph-optimize{level=N}                  (-O0/-O1/-O2)
    tensor   [convert-conv-to-winograd at -O2,] convert-graph-to-tensor
                                                      (structured ops)
    loop     convert-tensor-to-loop (structured ops on buffers),
             [tensor-apply-records with tuning records,]
             tensor-default-schedule (each op's schedule, visible in the IR),
             [loop-fuse-epilogues at -O2,] loop-generate (their loops,
             epilogues in the micro-kernels), [loop-fuse at -O2,]
             loop-expand-math (f32 exp/tanh/erf as vectorisable arith),
             loop-pack-weights, loop-plan-memory, loop-outline-kernels,
             [loop-instrument-kernels with a profile (and trace)]
             [loop-parallelize{threads=N} when N > 1]
             loop-mark-noalias (kernel arguments LLVM may treat as noalias)
    llvm     convert-loop-to-llvm
    then     llvmlite -> LLVM -O2 for the host CPU: JIT (`jit_entry`) or a
             shared library (`ember.deploy`)

The module is verified before the first pass and after the graph, tensor
and loop stages, so a rule that only an op's verifier checks (a slice in
bounds, a reshape keeping the element count) holds in compiled code as it
does in `ember-opt`; the first op that breaks one is a `CompileError`
naming the op and the stage.

The model's entry function takes the packed ABI of `convert-loop-to-llvm`:
`void f(void *const buffers[], const void *weights, void *arena)`,
`buffers` holding the inputs' then the outputs' data pointers.
"""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import groupby
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.errors import (
    EmberError,
)
from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass
from ember.lowering.graph_to_tensor.winograd import ConvertConvToWinogradPass
from ember.lowering.loop_to_llvm import PACKED_BUFFERS_ATTR, ConvertLoopToLLVMPass
from ember.lowering.tensor_to_loop import ConvertTensorToLoopPass
from ember.options import DEFAULT_OPTIONS, OPTIONAL_PASSES, Options
from ember.passes.graph.optimize import graph_passes
from ember.passes.loop.expand_math import ExpandMathPass
from ember.passes.loop.fuse import FuseLoopsPass
from ember.passes.loop.fuse_epilogues import FuseEpiloguesPass
from ember.passes.loop.generate import LoopGeneratePass
from ember.passes.loop.outline_kernels import OutlineKernelsPass
from ember.passes.loop.pack_weights import PackWeightsPass, weights_blob
from ember.passes.loop.plan_memory import PlanMemoryPass
from ember.report import CompileReport, KernelCost
from ember.targets.cpu.instrument_kernels import (
    PROFILE_ATTR,
    PROFILE_OFFSET_ATTR,
    InstrumentKernelsPass,
)
from ember.targets.cpu.jit import JitModule
from ember.targets.cpu.llvm_module import to_llvmlite
from ember.targets.cpu.machine import LLVM_OPT_LEVEL
from ember.targets.cpu.mark_noalias import MarkNoAliasPass
from ember.targets.cpu.module_parts import part_count, split_module
from ember.targets.cpu.parallel_codegen import PartObject, compile_part, start_workers
from ember.targets.cpu.parallelize import ParallelizePass
from ember.targets.cpu.profile import check_profile_supported
from ember.targets.cpu.schedule.apply_records import apply_records_pass
from ember.targets.cpu.schedule.default_schedule import DefaultSchedulePass
from ember.targets.cpu.streamed_codegen import compile_streamed
from ember.targets.cpu.timing import CompileTimes
from ember.targets.stages import apply_passes, verifies_after, verify_stage

VERIFIED_AFTER = ("graph", "tensor", "loop")
"""The stages after which the module is verified (and once before the first)."""

GENERATED_STAGES = ("loop",)
"""Of those, the ones verified only where `EMBER_VERIFY=all` asks
(`targets.stages.verifies_after`): loop nests only loop-generate makes."""


def cpu_passes(options: Options = DEFAULT_OPTIONS) -> list[tuple[str, ModulePass]]:
    """The CPU pipeline as (stage, pass) pairs, in order."""
    unknown = sorted(set(options.disabled) - set(OPTIONAL_PASSES))
    if unknown:
        raise EmberError(
            f"cannot disable {', '.join(unknown)}: optional passes are {', '.join(OPTIONAL_PASSES)}"
        )
    try:
        graph = graph_passes(options.opt_level, options.layout, options.disabled)
    except DiagnosticException as error:
        raise EmberError(str(error)) from None
    if options.profile:
        check_profile_supported()

    def at_level_2(compiler_pass: ModulePass) -> list[ModulePass]:
        wanted = options.opt_level >= 2 and compiler_pass.name not in options.disabled
        return [compiler_pass] if wanted else []

    def unless_disabled(compiler_pass: ModulePass) -> list[ModulePass]:
        return [] if compiler_pass.name in options.disabled else [compiler_pass]

    # One thread: no launches and no runtime at all, not launches of one thread.
    threads = [ParallelizePass(threads=options.threads)] if options.threads > 1 else []
    tuned = apply_records_pass(options)

    return [
        *(("graph", p) for p in graph),
        *(("tensor", p) for p in at_level_2(ConvertConvToWinogradPass())),
        ("tensor", ConvertGraphToTensorPass()),
        ("loop", ConvertTensorToLoopPass()),
        *(("loop", p) for p in tuned),
        ("loop", DefaultSchedulePass()),
        *(("loop", p) for p in at_level_2(FuseEpiloguesPass())),
        ("loop", OutlineKernelsPass()),  # equal kernels found before their loops are made
        ("loop", LoopGeneratePass()),
        *(("loop", p) for p in at_level_2(FuseLoopsPass())),
        *(("loop", p) for p in unless_disabled(ExpandMathPass())),
        ("loop", PackWeightsPass()),
        ("loop", PlanMemoryPass()),
        ("loop", OutlineKernelsPass()),  # any nest still outside a kernel
        *((("loop", InstrumentKernelsPass(trace=options.trace)),) if options.profile else ()),
        *(("loop", p) for p in threads),
        ("loop", MarkNoAliasPass()),  # after the parallel bodies are outlined, to mark them too
        ("llvm", ConvertLoopToLLVMPass()),
    ]


GC_THRESHOLDS = (100_000, 50, 100)
"""Python's collection thresholds while the pipeline runs and while its
result becomes llvmlite IR (CPython's default is (700, 10, 10) in 3.11;
building ResNet-50's llvmlite module and its text took twice as long with
it, the collector walking the whole module each time). The passes build many small IR objects
and drop few cycles worth collecting, so with the default thresholds the
collector took 30% of the CPU time of lowering (75% in convert-loop-to-llvm)
on large models. Collections still run, so garbage stays bounded: a
3,000-node Conv chain lowered in 20.5 instead of 29.5 CPU seconds, with a
peak of 334 instead of 309 MB."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raises the collector's thresholds for the `with` block, restoring
    them after (an error included)."""
    saved = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*saved)


WORKERS_FROM_OPS = 32
"""Graphs of this many ops or more start the codegen workers
(`parallel_codegen.py`) as their lowering begins: their LLVM modules are
large enough to be split (after import, counting weights, ResNet-50 has
687 ops, SqueezeNet 163), and a worker's start then passes while the
passes run."""


def lower_to_llvm(
    module: ModuleOp, report: CompileReport, options: Options = DEFAULT_OPTIONS
) -> np.ndarray:
    """Runs the CPU pipeline on graph IR in place; returns the weights blob."""
    return _lower(module, report, options, through="llvm")


def lower_to_loops(
    module: ModuleOp, report: CompileReport, options: Options = DEFAULT_OPTIONS
) -> np.ndarray:
    """Runs the CPU pipeline on graph IR in place up to the `llvm` stage,
    which `jit_streamed` and `ember.deploy` run part by part
    (`streamed_codegen.py`); returns the weights blob."""
    return _lower(module, report, options, through="loop")


def lower_from(module: ModuleOp, first: str, report: CompileReport,
               options: Options = DEFAULT_OPTIONS) -> np.ndarray:  # fmt: skip
    """Runs the CPU pipeline's passes from the one named `first` up to the
    `llvm` stage, on a module that holds what the passes before it make (a
    tuning harness, on buffers before its schedules: `ember.tuning.measure`);
    returns the weights blob."""
    names = [p.name for _, p in cpu_passes(options)]
    if first not in names:
        raise EmberError(f"the CPU pipeline has no pass {first}")
    with fewer_collections():
        return _run_passes(module, report, options, "loop", skip=names.index(first))


def _lower(module: ModuleOp, report: CompileReport, options: Options, through: str) -> np.ndarray:
    if sum(1 for _ in module.walk()) >= WORKERS_FROM_OPS:
        start_workers()
    with fewer_collections():
        return _run_passes(module, report, options, through)


def _run_passes(module: ModuleOp, report: CompileReport, options: Options,
                through: str, skip: int = 0) -> np.ndarray:  # fmt: skip
    """The stages up to `through` (leaving out the first `skip` passes), and
    the weights blob of the loop stage's IR."""
    blob: np.ndarray | None = None
    context = Context()
    chosen = cpu_passes(options)[skip:]
    for index, (stage, passes) in enumerate(groupby(chosen, key=lambda pair: pair[0])):
        if stage == "llvm":
            blob = weights_blob(module)
            _record_memory(module, report)
            _record_profile(module, report)
            if through != "llvm":
                break
        with report.stage(stage):
            if index == 0:
                with report.timed_pass("verify-input"):
                    verify_stage(module, f"before the {stage} stage")
            apply_passes(module, (p for _, p in passes), report, context)
            if stage in VERIFIED_AFTER and verifies_after(stage, GENERATED_STAGES):
                with report.timed_pass(f"verify-{stage}"):
                    verify_stage(module, f"after the {stage} stage")
    assert blob is not None
    return blob


def _record_memory(module: ModuleOp, report: CompileReport) -> None:
    for op in module.walk():
        if isinstance(op, FuncOp):
            for key, attr in (("arena_bytes", "loop.arena_bytes"), ("naive_bytes", "loop.naive_bytes"),
                              ("weights_bytes", "loop.weights_bytes")):  # fmt: skip
                value = op.attributes.get(attr)
                if isinstance(value, IntegerAttr):
                    setattr(report, key, getattr(report, key) + value.value.data)
                elif isinstance(value, StringAttr) and key == "arena_bytes":
                    report.arena_formula = value.data


def _record_profile(module: ModuleOp, report: CompileReport) -> None:
    """Where `loop-instrument-kernels` put the counters, and the static cost
    of each kernel they count, as the runtime needs them to read a profile."""
    for op in module.ops:
        if isinstance(op, FuncOp) and PROFILE_ATTR in op.attributes:
            offset = op.attributes[PROFILE_OFFSET_ATTR]
            rows = op.attributes[PROFILE_ATTR]
            assert isinstance(offset, IntegerAttr) and isinstance(rows, ArrayAttr)
            report.profile_offset = offset.value.data
            report.kernel_costs = tuple(
                KernelCost(row.data["name"].data, row.data["label"].data,  # type: ignore[attr-defined]
                           row.data["flops"].value.data, row.data["bytes"].value.data,  # type: ignore[attr-defined]
                           row.data["source"].data)  # type: ignore[attr-defined]
                for row in rows.data if isinstance(row, DictionaryAttr)
            )  # fmt: skip


def make_entry(func: FuncOp, name: str) -> None:
    """Names the model's entry function `name` and gives it the packed ABI
    (one argument for all the buffers), as the JIT and the C header call it."""
    func.sym_name = StringAttr(name)
    func.attributes[PACKED_BUFFERS_ATTR] = UnitAttr()


def jit_streamed(module: ModuleOp, report: CompileReport,
                 add_functions: Callable[[Any], None] | None = None) -> JitModule:  # fmt: skip
    """A module from `lower_to_loops` (consumed) JIT-compiled for this CPU,
    lowered to LLVM part by part while the codegen workers compile the
    parts made (`streamed_codegen.py`); `add_functions` as `jit_library`'s."""
    times = CompileTimes()

    def here(text: str) -> PartObject:
        return compile_part(text, LLVM_OPT_LEVEL, times)

    with fewer_collections():
        objects = compile_streamed(module, report, LLVM_OPT_LEVEL, add_functions=add_functions,
                                   here=here, last_stage="llvm-jit")  # fmt: skip
    with report.stage("llvm-jit"), times.measure("link"):
        jit = JitModule(objects=objects)
    for phase in ("parse", "optimize", "codegen", "link"):
        report.pass_seconds[f"llvm-{phase}"] = getattr(times, f"{phase}_s")
    return jit


def jit_library(module: ModuleOp, report: CompileReport,
                add_functions: Callable[[Any], None] | None = None) -> JitModule:  # fmt: skip
    """A lowered module JIT-compiled for this CPU; `add_functions` may add
    functions to the llvmlite module first (the generic version's entry
    check, `ember_prepare` and `ember_run`)."""
    with report.stage("llvm-jit"):
        with report.timed_pass("llvm-ir-text"), fewer_collections():
            llvm_module = to_llvmlite(module)
            if add_functions is not None:
                add_functions(llvm_module)
            first, *others = split_module(llvm_module, part_count(llvm_module))
        with report.timed_pass("llvm-jit"):
            jit = JitModule(first, parts=others)
    for phase in ("parse", "optimize", "codegen", "link"):
        report.pass_seconds[f"llvm-{phase}"] = getattr(jit.times, f"{phase}_s")
    return jit


def jit_entry(module: ModuleOp, name: str, report: CompileReport) -> Callable[..., None]:
    """The entry function `name` of a module from `lower_to_loops`,
    JIT-compiled for this CPU, as a ctypes function of (buffers, weights,
    arena) pointers."""
    return jit_streamed(module, report).function(name, None, [ctypes.c_void_p] * 3)
