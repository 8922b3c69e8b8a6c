"""The CPU target: native code for this machine through LLVM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ember.options import Options
from ember.report import CompileReport
from ember.targets.cpu.deploy import DeployedModel, check_name, deploy_module
from ember.targets.cpu.model import compile_module
from ember.targets.cpu.pipeline import cpu_passes, jit_library
from ember.targets.cpu.schedule.default_schedule import DefaultSchedulePass
from ember.targets.target import Target
from ember.targets.versions import Specialize


class CpuTarget(Target):
    """Loop nests (vector micro-kernels for contractions) lowered to LLVM -O2
    for the host CPU: JIT-compiled into the process, or a shared library
    with a C header; parallel loops on Ember's thread pool."""

    name = "cpu"
    summary = "this CPU: native code through LLVM, in process or as a shared library"
    kernel_form = "an outlined function the entry calls (a launch on the thread pool if parallel)"
    onnx_device = "CPU"
    versions = True

    def pipeline(self, options: Options) -> list[tuple[str, ModulePass]]:
        return cpu_passes(options)

    def default_schedule(self) -> ModulePass:
        return DefaultSchedulePass()

    def compile(self, module: ModuleOp, report: CompileReport, options: Options) -> Any:
        return compile_module(module, report, options)

    def prepare_output(self, out_dir: Path, name: str) -> Path:
        check_name(name)  # it prefixes the header's C identifiers
        return super().prepare_output(out_dir, name)

    def jit(self, module: ModuleOp) -> Any:
        return jit_library(module, CompileReport())

    def deploy(self, module: ModuleOp, out_dir: Path, name: str, options: Options,
               report: CompileReport, specialize: Specialize) -> DeployedModel:  # fmt: skip
        return deploy_module(module, out_dir, name, options, report, specialize)


__all__ = ["CpuTarget"]
