"""The NPU target: Ember's accelerator, run in its simulator, with the ops
it does not take compiled for a host target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ember.errors import EmberError
from ember.lowering.graph_to_npu import ConvertGraphToNpuPass
from ember.lowering.graph_to_npu.partition import PartitionNpuPass
from ember.lowering.graph_to_npu.schedule import NpuDefaultSchedulePass
from ember.options import Options
from ember.report import CompileReport
from ember.targets.npu.apply_records import NpuApplyRecordsPass
from ember.targets.npu.compile import DeviceStep, NpuModel, compile_npu, npu_graph_passes
from ember.targets.npu.deploy import write_npu_directory
from ember.targets.target import HostedTarget
from ember.targets.versions import Specialize


class NpuFiles:
    """What `ember compile --target npu` wrote (`targets/npu/deploy.py`)."""

    def __init__(self, files: list[Path]):
        self.files = files


class NpuTarget(HostedTarget):
    """Products, convolutions, sums and pools as programs of the NPU (run in
    its functional simulator, timed by its cycle model); the other ops on
    `host`, a target given at construction (the CPU)."""

    name = "npu"
    summary = "Ember's NPU, in its simulator (the ops it lacks on the host CPU)"
    kernel_form = "an npu.segment of graph ops, lowered to one npu.program"
    check_against_reference = True
    cycle_model = True

    def pipeline(self, options: Options) -> list[tuple[str, ModulePass]]:
        tuned = [("npu", NpuApplyRecordsPass(options.records))] if options.records else []
        return [*(("graph", p) for p in npu_graph_passes(options)),
                ("npu", PartitionNpuPass()), *tuned, ("npu", NpuDefaultSchedulePass()),
                ("npu", ConvertGraphToNpuPass())]  # fmt: skip

    def default_schedule(self) -> ModulePass:
        return NpuDefaultSchedulePass()

    def compile(self, module: ModuleOp, report: CompileReport, options: Options) -> NpuModel:
        def host(host_module: ModuleOp, host_options: Options) -> Any:
            return self.host.compile(host_module, CompileReport(), host_options)

        return compile_npu(module, host, report, options)

    def deploy(self, module: ModuleOp, out_dir: Path, name: str, options: Options,
               report: CompileReport, specialize: Specialize) -> NpuFiles:  # fmt: skip
        if specialize not in ("auto", "none", {}):
            raise EmberError("--specialize applies to targets that compile symbolic dims "
                             "(the NPU compiles static shapes)")  # fmt: skip
        compiled = self.compile(module, report, options)
        kernels = [step.kernel for step in compiled.steps if isinstance(step, DeviceStep)]
        return NpuFiles(write_npu_directory(kernels, compiled.report, out_dir, name))

    def performance_table(self, compiled: Any) -> str | None:
        assert isinstance(compiled, NpuModel)
        return f"on the NPU ({compiled.report.cycles:,} cycles in all):\n{compiled.report.table()}"


__all__ = ["NpuTarget"]
