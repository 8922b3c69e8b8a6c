"""The pass registry: every Ember pass and lowering by its command-line name.

It lives above the levels because it names passes of every level and the
lowerings between them (`passes/` never imports `lowering/`); `ember-opt`
registers these next to xDSL's own passes.
"""

from __future__ import annotations

from xdsl.passes import ModulePass


def all_passes() -> dict[str, type[ModulePass]]:
    """Every Ember pass class by its name (imported on demand: a CLI that
    registers them need not load every lowering up front)."""
    from ember.lowering.gpu_to_loop import ConvertGpuToLoopPass
    from ember.lowering.gpu_to_nvvm import ConvertGpuToNvvmPass
    from ember.lowering.graph_to_npu import ConvertGraphToNpuPass
    from ember.lowering.graph_to_npu.partition import PartitionNpuPass
    from ember.lowering.graph_to_npu.schedule import NpuDefaultSchedulePass
    from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass
    from ember.lowering.graph_to_tensor.winograd import ConvertConvToWinogradPass
    from ember.lowering.loop_to_gpu import ConvertLoopToGpuPass
    from ember.lowering.loop_to_llvm import ConvertLoopToLLVMPass
    from ember.lowering.tensor_to_loop import ConvertTensorToLoopPass
    from ember.passes.graph.bind_symbols import BindSymbolsPass
    from ember.passes.graph.canonicalize import CanonicalizePass
    from ember.passes.graph.expand_qlinear import ExpandQLinearPass
    from ember.passes.graph.fold_batchnorm import FoldBatchNormPass
    from ember.passes.graph.fold_constants import FoldConstantsPass
    from ember.passes.graph.fuse import FusePass
    from ember.passes.graph.fuse_qdq import FuseQdqPass
    from ember.passes.graph.infer_shapes import InferShapesPass
    from ember.passes.graph.layout import LayoutPass
    from ember.passes.graph.optimize import GraphOptimizePass
    from ember.passes.graph.simplify import SimplifyPass
    from ember.passes.graph.widen_accumulators import WidenAccumulatorsPass
    from ember.passes.loop.expand_math import ExpandMathPass
    from ember.passes.loop.form_kernels import FormKernelsPass
    from ember.passes.loop.fuse import FuseLoopsPass
    from ember.passes.loop.fuse_epilogues import FuseEpiloguesPass
    from ember.passes.loop.generate import LoopGeneratePass
    from ember.passes.loop.outline_kernels import OutlineKernelsPass
    from ember.passes.loop.pack_weights import PackWeightsPass
    from ember.passes.loop.plan_memory import PlanMemoryPass
    from ember.targets.cpu.instrument_kernels import InstrumentKernelsPass
    from ember.targets.cpu.mark_noalias import MarkNoAliasPass
    from ember.targets.cpu.parallelize import ParallelizePass
    from ember.targets.cpu.schedule.default_schedule import DefaultSchedulePass
    from ember.targets.cuda.default_schedule import GpuDefaultSchedulePass

    passes: list[type[ModulePass]] = [
        CanonicalizePass,
        FoldBatchNormPass,
        FoldConstantsPass,
        FusePass,
        FuseQdqPass,
        ExpandQLinearPass,
        InferShapesPass,
        BindSymbolsPass,
        LayoutPass,
        GraphOptimizePass,
        SimplifyPass,
        WidenAccumulatorsPass,
        ConvertConvToWinogradPass,
        ConvertGraphToTensorPass,
        DefaultSchedulePass,
        GpuDefaultSchedulePass,
        ConvertTensorToLoopPass,
        ConvertLoopToLLVMPass,
        ConvertLoopToGpuPass,
        ConvertGpuToNvvmPass,
        ConvertGpuToLoopPass,
        FormKernelsPass,
        LoopGeneratePass,
        FuseLoopsPass,
        ExpandMathPass,
        FuseEpiloguesPass,
        PackWeightsPass,
        PlanMemoryPass,
        OutlineKernelsPass,
        InstrumentKernelsPass,
        ParallelizePass,
        MarkNoAliasPass,
        PartitionNpuPass,
        NpuDefaultSchedulePass,
        ConvertGraphToNpuPass,
    ]
    return {p.name: p for p in passes}
