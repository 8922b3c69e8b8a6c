"""A model compiled for the NPU: its segments run in the simulator, the rest
on the host (the host target's pipeline: the CPU's), in the model's order.

`compile_npu(module)` turns a QDQ model's DequantizeLinear -> product ->
QuantizeLinear chains into quantised products (`graph-fuse-qdq`: int8
matrix-unit work), simplifies the graph (`graph-optimize` at level 1:
folding, canonicalisation, BatchNorm folding), partitions it
(`graph-partition-npu`), gives each product the fastest schedule the
tuning records of `Options.records` hold for it (`npu-apply-records`),
lowers every `npu.segment` to an NPU program
(`convert-graph-to-npu`) and compiles each run of host ops between them
as a model of its own with the host target. An `NpuModel` is called like
a `CompiledModel`; each call runs the steps in order, passing tensors by
value: a host step through its compiled function, a device step by
writing its inputs into a copy of its DRAM image, running its program in
the functional simulator (in the order checked at compile time) and
reading its outputs back. The cycle model times every program once, at
compile time (its timing does not depend on the data): `NpuModel.report`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, Region, SSAValue
from xdsl.passes import ModulePass

from ember.dialects.graph import ConstantOp
from ember.dialects.npu.machine import NpuParams
from ember.dialects.npu.segment import SegmentOp
from ember.errors import EmberError
from ember.lowering.graph_to_npu import NpuKernel, lower_segment, op_label
from ember.lowering.graph_to_npu.partition import outline, partition
from ember.options import DEFAULT_OPTIONS, Options
from ember.reference import entry_function
from ember.report import CompileReport
from ember.targets.calls import CheckedCalls, TensorSpec, has_symbols, model_specs
from ember.targets.npu.apply_records import apply_records_file
from ember.targets.npu.device import DeviceProgram
from ember.targets.npu.report import NpuReport, kernel_report
from ember.targets.tuning_records import with_best_schedules


@dataclass
class HostStep:
    """Host ops between two segments, compiled for the host target."""

    model: Any
    args: list[int]
    results: list[int]
    ops: list[str]
    labels: list[str]
    """The ops as reports name them: by the model's nodes (`op_label`)."""


@dataclass
class DeviceStep:
    program: DeviceProgram
    args: list[int]
    results: list[int]

    @property
    def kernel(self) -> NpuKernel:
        return self.program.kernel

    def run(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self.program.run(arrays)


class NpuModel(CheckedCalls):
    """A model compiled for the NPU (see the module docstring): call it with
    NumPy arrays, as a `CompiledModel`."""

    def __init__(self, inputs: list[TensorSpec], outputs: list[TensorSpec], arg_ids: list[int],
                 result_ids: list[int], steps: list[HostStep | DeviceStep], report: NpuReport):  # fmt: skip
        self.inputs = inputs
        self.outputs = outputs
        self._args = arg_ids
        self._results = result_ids
        self.steps = steps
        self.report = report

    def _execute(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        env = dict(zip(self._args, arrays, strict=True))
        for step in self.steps:
            given = [env[i] for i in step.args]
            got = step.model(*given) if isinstance(step, HostStep) else step.run(given)
            env.update(zip(step.results, got, strict=True))
        return [np.array(env[i], copy=True) for i in self._results]


class _Ids:
    def __init__(self) -> None:
        self.ids: dict[SSAValue, int] = {}

    def __call__(self, value: SSAValue) -> int:
        return self.ids.setdefault(value, len(self.ids))


def _host_module(ops: Sequence[Operation], later: set[SSAValue]) -> tuple[ModuleOp, list[SSAValue],
                                                                          list[SSAValue]]:  # fmt: skip
    """A graph module of `ops` (with the constants they read): its arguments
    are the values they read from before, its results those `later` needs."""
    block, args, mapping, _ = outline(ops)
    results = [r for op in ops for r in op.results if r in later]
    block.add_op(ReturnOp(*[mapping[v] for v in results]))
    func = FuncOp("main", ([v.type for v in args], [v.type for v in results]), Region(block))
    return ModuleOp([func]), args, results


def npu_graph_passes(options: Options) -> list[ModulePass]:
    """The graph passes before partitioning: QDQ chains into quantised
    products, then `graph-optimize` at level 1 (no layout change)."""
    from ember.passes.graph.fuse_qdq import FuseQdqPass
    from ember.passes.graph.optimize import graph_passes

    return [FuseQdqPass(), *graph_passes(1, "none", options.disabled, expand_qlinear=False)]


def partition_model(module: ModuleOp, options: Options = DEFAULT_OPTIONS,
                    report: CompileReport | None = None) -> None:  # fmt: skip
    """Runs the graph passes (`npu_graph_passes`) and the partition on
    `module` in place: its entry function's NPU ops gathered into
    `npu.segment`s."""
    from xdsl.context import Context

    report = report or CompileReport()
    with report.stage("graph"):
        for graph_pass in npu_graph_passes(options):
            graph_pass.apply(Context(), module)
    with report.stage("partition"):
        partition(entry_function(module))


HostCompile = Callable[[ModuleOp, Options], Any]
"""Compiles a graph module of static shapes for the host: a model called
with arrays (the CPU target's `compile`)."""


def compile_npu(module: ModuleOp, host: HostCompile, report: CompileReport | None = None,
                options: Options = DEFAULT_OPTIONS, params: NpuParams | None = None) -> NpuModel:  # fmt: skip
    """Compiles graph IR for the NPU, and its other ops with `host` (see the
    module docstring)."""
    params = params or NpuParams()
    report = report or CompileReport()
    func = entry_function(module)
    if has_symbols(func):
        raise EmberError("the NPU target compiles static shapes only (give --input-shape or dims)")
    inputs, outputs = model_specs(func)
    partition_model(module, options, report)
    if options.records:
        with report.stage("records"):
            apply_records_file(module, options.records, params)
    ops = [op for op in func.body.block.ops if not isinstance(op, ConstantOp | ReturnOp)]
    terminator = func.body.block.last_op
    assert isinstance(terminator, ReturnOp)
    needed_after: list[set[SSAValue]] = []
    needed = set(terminator.operands)
    for op in reversed(ops):  # what each op's successors (and the return) read
        needed_after.append(set(needed))
        needed |= set(op.operands)
    needed_after.reverse()
    host_options = with_best_schedules(options)  # the host's schedules: one read for every step
    ids = _Ids()
    steps: list[HostStep | DeviceStep] = []
    kernels = []
    group: list[Operation] = []

    def flush(later: set[SSAValue]) -> None:
        if not group:
            return
        host_module, args, results = _host_module(group, later)
        # Each stage line names one piece of work: `host 2`, `npu npu1`.
        with report.stage(f"host {sum(isinstance(s, HostStep) for s in steps) + 1}"):
            model = host(host_module, host_options)
        steps.append(HostStep(model, [ids(v) for v in args], [ids(v) for v in results],
                              [op.name for op in group], [op_label(op) for op in group]))  # fmt: skip
        group.clear()

    for index, op in enumerate(ops):
        if not isinstance(op, SegmentOp):
            group.append(op)
            continue
        flush(needed_after[index - 1] if index else set())
        with report.stage(f"npu {op.sym_name.data}"):
            program = DeviceProgram.compile(lower_segment(op, params))
        kernels.append(program)
        steps.append(DeviceStep(program, [ids(v) for v in op.inputs],
                                [ids(v) for v in op.results]))  # fmt: skip
    flush(needed_after[-1] if ops else set())
    arg_ids = [ids(a) for a in func.body.block.args]
    host = [step for step in steps if isinstance(step, HostStep)]
    with report.stage("cycles"):
        npu_report = NpuReport([kernel_report(p.kernel, p.order) for p in kernels],
                               [name for step in host for name in step.ops],
                               [label for step in host for label in step.labels])  # fmt: skip
    result_ids = [ids(v) for v in terminator.operands]
    return NpuModel(inputs, outputs, arg_ids, result_ids, steps, npu_report)


__all__ = ["DeviceStep", "HostCompile", "npu_graph_passes", "HostStep", "NpuModel", "compile_npu",
           "partition_model"]  # fmt: skip
