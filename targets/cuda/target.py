"""The CUDA target: a model as `gpu`-level kernels, PTX for NVIDIA GPUs
(checked by `ptxas`), run through CUDA's driver API or emulated on this CPU.

    graph    graph-optimize{level=N layout=none}     (NCHW convolutions)
    tensor   convert-graph-to-tensor
    loop     convert-tensor-to-loop, gpu-default-schedule, loop-generate,
             loop-expand-math, loop-pack-weights, loop-plan-memory
    gpu      convert-loop-to-gpu                      (kernels and launches)
    then     convert-gpu-to-nvvm -> PTX (llvmlite's NVPTX) -> ptxas -> a
             cubin; the host function's launches are the launch plan
             (`launch_plan.py`), which the runtime (`runtime.py`) follows;
             or, with `Options.emulate`, convert-gpu-to-loop -> the host
             target's JIT: every block and thread on this CPU (`emulator.py`);
             or, for a dry run, ptxas's resources per launch (`dry_run.py`)

The module is verified before the first pass and after each stage, as the
CPU's pipeline does. A model with symbolic dims compiles once for every
size: its kernels take the buffers' sizes as parameters, the launch plan's
grids and the arena are formulas over the symbols; emulated, or on the GPU
(`CudaModel`), a call binds the symbols from its inputs' shapes and runs
the plan at those sizes. CUDA graphs (`CudaModel(..., graph=True)`) need a
static plan: a static version (`specialize`) per size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph.symbolic import Range
from ember.dialects.loop import ALIGNMENT, aligned_zeros
from ember.errors import CompileError, EmberError, first_line
from ember.lowering.gpu_to_nvvm import ConvertGpuToNvvmPass
from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass
from ember.lowering.loop_to_gpu import ConvertLoopToGpuPass
from ember.lowering.tensor_to_loop import ConvertTensorToLoopPass
from ember.options import Options
from ember.output_files import write_bytes, write_text
from ember.passes.graph.optimize import graph_passes
from ember.passes.loop.expand_math import ExpandMathPass
from ember.passes.loop.generate import LoopGeneratePass
from ember.passes.loop.pack_weights import PackWeightsPass, weights_blob
from ember.passes.loop.plan_memory import PlanMemoryPass
from ember.reference import entry_function
from ember.report import CompileReport
from ember.targets.calls import (
    as_array,
    check_count,
    has_symbols,
    in_order,
    model_specs,
)
from ember.targets.cuda.default_schedule import GpuDefaultSchedulePass
from ember.targets.cuda.dry_run import launch_table
from ember.targets.cuda.emulator import EmulatedProgram, emulate
from ember.targets.cuda.launch_plan import LaunchPlan, evaluated, launch_plan
from ember.targets.cuda.ptx import ptx_of
from ember.targets.cuda.ptxas import PtxasReport, assemble, find_ptxas, ptxas_path
from ember.targets.stages import apply_passes, verify_stage
from ember.targets.target import HostedTarget
from ember.targets.versions import (
    EntryCheck,
    Specialize,
    SymbolicSpec,
    model_ranges,
    symbolic_specs,
)

ENTRY = "main"
"""The host function's name (the imported model's entry)."""


@dataclass
class GpuModule:
    """A model lowered to the `gpu` level: the module (host function and
    kernels), its weights blob, its launch plan and its specs."""

    module: ModuleOp
    weights: np.ndarray
    plan: LaunchPlan
    inputs: list[SymbolicSpec]
    outputs: list[SymbolicSpec]
    ranges: dict[str, Range]
    """The ranges of the model's symbols (none for a static model)."""

    def ptx(self, arch: str) -> str:
        """The kernels' PTX for compute capability `arch`."""
        lowered = self.module.clone()
        try:
            ConvertGpuToNvvmPass().apply(Context(), lowered)
        except DiagnosticException as error:
            raise CompileError(first_line(error)) from error
        return ptx_of(lowered, arch)


class EmulatedModel:
    """A model whose `gpu`-level kernels run on this CPU, every block and
    every thread (`emulator.py`): called as any compiled model (`model(x)`,
    `model.run({...})`). A model with symbolic dims runs at every size its
    inputs bind (the entry check names a mismatch), with an arena of the
    size its formula gives. A test harness for the GPU path, not a fast way
    to run a model."""

    def __init__(self, lowered: GpuModule, program: EmulatedProgram):
        self.inputs = lowered.inputs
        self.outputs = lowered.outputs
        self._program = program
        self._check = EntryCheck(lowered.inputs, lowered.ranges)
        # The blob is padded to its alignment; the host function takes its bytes only.
        self._weights = lowered.weights.view(np.int8)[: lowered.plan.weights_bytes]
        self._arena_bytes = lowered.plan.arena_bytes
        self._arena = aligned_zeros(ALIGNMENT).view(np.int8)

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        check_count(self.inputs, arrays)
        given = [np.ascontiguousarray(as_array(s, a)) for s, a in zip(self.inputs, arrays)]
        sizes = self._check.bind(given)
        results = [np.empty([evaluated(d, sizes) for d in s.dims], dtype=s.dtype)
                   for s in self.outputs]  # fmt: skip
        arena = evaluated(self._arena_bytes, sizes)
        if arena > self._arena.size:
            self._arena = aligned_zeros(arena).view(np.int8)
        self._program[ENTRY](*given, *results, self._weights, self._arena[:arena])
        return results

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        return self(*in_order(self.inputs, feeds))


class CudaFiles:
    """What `ember compile --target cuda` wrote."""

    def __init__(self, files: list[Path]):
        self.files = files


class CudaTarget(HostedTarget):
    """NVIDIA GPUs through the `gpu` level (see the module docstring); the
    emulation runs on `host`, a target given at construction (the CPU)."""

    name = "cuda"
    summary = "NVIDIA GPUs: PTX checked by ptxas, run by CUDA's driver, or emulated on this CPU"
    kernel_form = "a gpu.func of gpu.module @ember_kernels, launched by gpu.launch_func"
    onnx_device = "CUDA"
    versions = True
    emulates = True

    def pipeline(self, options: Options) -> list[tuple[str, ModulePass]]:
        try:
            graph = graph_passes(options.opt_level, "none", options.disabled)
        except DiagnosticException as error:
            raise EmberError(str(error)) from None
        expand = [] if ExpandMathPass.name in options.disabled else [ExpandMathPass()]
        loop = [ConvertTensorToLoopPass(), GpuDefaultSchedulePass(), LoopGeneratePass(), *expand,
                PackWeightsPass(), PlanMemoryPass()]  # fmt: skip
        return [*(("graph", p) for p in graph), ("tensor", ConvertGraphToTensorPass()),
                *(("loop", p) for p in loop), ("gpu", ConvertLoopToGpuPass())]  # fmt: skip

    def default_schedule(self) -> ModulePass:
        return GpuDefaultSchedulePass()

    def lower(self, module: ModuleOp, report: CompileReport, options: Options) -> GpuModule:
        """`module` (graph IR, consumed) through the pipeline to the `gpu` level."""
        function = entry_function(module)
        if has_symbols(function):
            inputs, outputs = symbolic_specs(function)
        else:
            model_specs(function)  # static shapes, element types with a NumPy dtype
            inputs, outputs = symbolic_specs(function)
        ranges = model_ranges(function)
        function.sym_name = StringAttr(ENTRY)
        context = Context()
        for index, (stage, passes) in enumerate(groupby(self.pipeline(options), lambda p: p[0])):
            with report.stage(stage):
                if index == 0:
                    verify_stage(module, f"before the {stage} stage")
                apply_passes(module, (p for _, p in passes), report, context)
                verify_stage(module, f"after the {stage} stage")
        roles = [*(f"input:{i}" for i in range(len(inputs))),
                 *(f"output:{i}" for i in range(len(outputs)))]  # fmt: skip
        dims = {role: spec.dims for role, spec in zip(roles, [*inputs, *outputs])}
        plan = launch_plan(module, ENTRY, len(inputs), dims)
        if isinstance(plan.arena_bytes, int):
            report.arena_bytes = plan.arena_bytes
        else:
            report.arena_formula = str(plan.arena_bytes)
        report.weights_bytes = plan.weights_bytes
        return GpuModule(module, weights_blob(module), plan, inputs, outputs, ranges)

    def compile(self, module: ModuleOp, report: CompileReport, options: Options) -> Any:
        """The model emulated on this CPU (`Options.emulate`) or loaded on the
        GPU (a `CudaUnavailable` without cuda-bindings or a GPU, after the
        PTX is made), static or symbolic (one model for every size of its
        symbols); an EmberError for `Options.profile`, which times CPU
        kernels."""
        if options.profile:
            raise EmberError("profiling times CPU kernels; the cuda target has no kernel profile")
        lowered = self.lower(module, report, options)
        if options.emulate:
            with report.stage("emulate"):
                return EmulatedModel(lowered, emulate(lowered.module, self.host.jit))
        with report.stage("ptx"):
            ptx = lowered.ptx(options.arch)
        from ember.targets.cuda.runtime import CudaModel

        with report.stage("load"):
            return CudaModel(lowered.inputs, lowered.outputs, ptx, lowered.plan, lowered.weights,
                             ranges=lowered.ranges)  # fmt: skip

    def dry_run_table(self, module: ModuleOp, report: CompileReport, options: Options) -> str:
        """Each launch of the model's plan with the registers, shared memory
        and spills ptxas reports for its kernel at `options.arch`
        (`dry_run.launch_table`); a `PtxasError` before any compile when
        there is no ptxas, or when it rejects the PTX."""
        find_ptxas()
        lowered = self.lower(module, report, options)
        with report.stage("ptx"):
            ptx = lowered.ptx(options.arch)
        with report.stage("ptxas"):
            assembled = assemble(ptx, options.arch)
        return launch_table(lowered.plan, assembled)

    def deploy(self, module: ModuleOp, out_dir: Path, name: str, options: Options,
               report: CompileReport, specialize: Specialize) -> CudaFiles:  # fmt: skip
        if specialize not in ("auto", "none", {}):
            raise EmberError("--specialize: the cuda target deploys one version, which takes "
                             "every size of the model's symbols")  # fmt: skip
        lowered = self.lower(module, report, options)
        with report.stage("ptx"):
            ptx = lowered.ptx(options.arch)
        out_dir.mkdir(parents=True, exist_ok=True)
        files = [out_dir / f"{name}.ptx", out_dir / f"{name}.weights"]
        write_text(files[0], ptx)
        write_bytes(files[1], lowered.weights.tobytes())
        manifest: dict[str, Any] = {"arch": options.arch, "ptx": files[0].name,
                                    "weights": files[1].name}  # fmt: skip
        if ptxas_path() is not None:  # the cubin, where there is a ptxas
            with report.stage("ptxas"):
                assembled = assemble(ptx, options.arch)
            cubin = out_dir / f"{name}.cubin"
            write_bytes(cubin, assembled.cubin)
            files.append(cubin)
            manifest |= {"cubin": cubin.name, "kernels": _resources(assembled)}
        manifest |= {
            "symbols": {name: [low, high] for name, (low, high) in sorted(lowered.ranges.items())},
            "inputs": [_spec(s) for s in lowered.inputs],
            "outputs": [_spec(s) for s in lowered.outputs],
            **lowered.plan.to_json(),
        }
        files.append(out_dir / f"{name}.json")
        write_text(files[-1], json.dumps(manifest, indent=2) + "\n")
        return CudaFiles(files)


def _spec(spec: SymbolicSpec) -> dict[str, Any]:
    shape = [d if isinstance(d, int) else str(d) for d in spec.dims]
    return {"name": spec.name, "shape": shape, "dtype": str(spec.dtype)}


def _resources(report: PtxasReport) -> dict[str, dict[str, int]]:
    return {name: vars(kernel).copy() for name, kernel in report.kernels.items()}


__all__ = ["ENTRY", "CudaTarget", "EmulatedModel", "GpuModule"]
