"""The pass registry: every Ember pass and lowering by its command-line name.

It lives above the levels because it names passes of every level and the
lowerings between them (`passes/` never imports `lowering/`); `ember-opt`
registers these next to xDSL's own passes. The table names each pass's
class by its import path, so that a tool imports only the passes it runs
(`ember-opt -p graph-infer-shapes` loads no lowering: a third of its start).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

PASSES: dict[str, str] = {
    "graph-canonicalize": "ember.passes.graph.canonicalize.CanonicalizePass",
    "graph-fold-batchnorm": "ember.passes.graph.fold_batchnorm.FoldBatchNormPass",
    "graph-fold-constants": "ember.passes.graph.fold_constants.FoldConstantsPass",
    "graph-fuse": "ember.passes.graph.fuse.FusePass",
    "graph-fuse-qdq": "ember.passes.graph.fuse_qdq.FuseQdqPass",
    "graph-expand-qlinear": "ember.passes.graph.expand_qlinear.ExpandQLinearPass",
    "graph-infer-shapes": "ember.passes.graph.infer_shapes.InferShapesPass",
    "graph-bind-symbols": "ember.passes.graph.bind_symbols.BindSymbolsPass",
    "graph-layout": "ember.passes.graph.layout.LayoutPass",
    "graph-optimize": "ember.passes.graph.optimize.GraphOptimizePass",
    "graph-simplify": "ember.passes.graph.simplify.SimplifyPass",
    "graph-unroll-control-flow": ("ember.passes.graph.unroll_control_flow.UnrollControlFlowPass"),
    "graph-widen-accumulators": "ember.passes.graph.widen_accumulators.WidenAccumulatorsPass",
    "convert-conv-to-winograd": "ember.lowering.graph_to_tensor.winograd.ConvertConvToWinogradPass",
    "convert-graph-to-tensor": "ember.lowering.graph_to_tensor.ConvertGraphToTensorPass",
    "tensor-default-schedule": "ember.targets.cpu.schedule.default_schedule.DefaultSchedulePass",
    "tensor-apply-records": "ember.targets.cpu.schedule.apply_records.ApplyRecordsPass",
    "gpu-default-schedule": "ember.targets.cuda.default_schedule.GpuDefaultSchedulePass",
    "convert-tensor-to-loop": "ember.lowering.tensor_to_loop.ConvertTensorToLoopPass",
    "convert-loop-to-llvm": "ember.lowering.loop_to_llvm.ConvertLoopToLLVMPass",
    "convert-loop-to-gpu": "ember.lowering.loop_to_gpu.ConvertLoopToGpuPass",
    "convert-gpu-to-nvvm": "ember.lowering.gpu_to_nvvm.ConvertGpuToNvvmPass",
    "convert-gpu-to-loop": "ember.lowering.gpu_to_loop.ConvertGpuToLoopPass",
    "loop-form-kernels": "ember.passes.loop.form_kernels.FormKernelsPass",
    "loop-generate": "ember.passes.loop.generate.LoopGeneratePass",
    "loop-fuse": "ember.passes.loop.fuse.FuseLoopsPass",
    "loop-expand-math": "ember.passes.loop.expand_math.ExpandMathPass",
    "loop-fuse-epilogues": "ember.passes.loop.fuse_epilogues.FuseEpiloguesPass",
    "loop-pack-weights": "ember.passes.loop.pack_weights.PackWeightsPass",
    "loop-plan-memory": "ember.passes.loop.plan_memory.PlanMemoryPass",
    "loop-outline-kernels": "ember.passes.loop.outline_kernels.OutlineKernelsPass",
    "loop-instrument-kernels": "ember.targets.cpu.instrument_kernels.InstrumentKernelsPass",
    "loop-parallelize": "ember.targets.cpu.parallelize.ParallelizePass",
    "loop-mark-noalias": "ember.targets.cpu.mark_noalias.MarkNoAliasPass",
    "graph-partition-npu": "ember.lowering.graph_to_npu.partition.PartitionNpuPass",
    "npu-apply-records": "ember.targets.npu.apply_records.NpuApplyRecordsPass",
    "npu-default-schedule": "ember.lowering.graph_to_npu.schedule.NpuDefaultSchedulePass",
    "convert-graph-to-npu": "ember.lowering.graph_to_npu.ConvertGraphToNpuPass",
}
"""Each pass's command-line name and its class, as `module.Class`."""


def load_pass(path: str) -> type[ModulePass]:
    """The pass class at `path` (`module.Class`), imported now."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def pass_loaders() -> dict[str, Callable[[], type[ModulePass]]]:
    """Each pass's name with a function that imports its class on first use."""
    return {name: lambda path=path: load_pass(path) for name, path in PASSES.items()}


def all_passes() -> dict[str, type[ModulePass]]:
    """Every Ember pass class by its name, all imported (for listing them)."""
    return {name: load() for name, load in pass_loaders().items()}
