"""`npu-default-schedule`: writes each product's default tiling into the
IR, as `#npu.schedule` on its graph op inside an `npu.segment`.

For every MatMul, Gemm, Conv (and quantised product) of a segment that
has no `npu.schedule` yet, the block of output tiles, scratchpad buffers
and accumulator regions that `matmul.default_schedule`'s cycle estimate
picks (a convolution's for one image: its images share it). A schedule
already written, by hand or by an earlier run, is left as it is; ops
outside segments and the vector unit's layers (sums, pools: their tiling
follows from their operands) get none. `convert-graph-to-npu` runs the
schedule the IR gives, or this default where there is none.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.npu.machine import NpuParams, NpuProgramError
from ember.dialects.npu.schedule import SCHEDULE_ATTR, NpuScheduleAttr
from ember.dialects.npu.segment import SegmentOp
from ember.lowering.graph_to_npu import segment_lowering


def write_default_schedules(segment: SegmentOp, params: NpuParams) -> None:
    lowering = segment_lowering(segment, params)
    lowering.build()
    for op, schedule in lowering.default_schedules().items():
        if SCHEDULE_ATTR not in op.attributes:
            op.attributes[SCHEDULE_ATTR] = NpuScheduleAttr(
                schedule.block_m, schedule.block_n, schedule.buffers, schedule.regions
            )


@dataclass(frozen=True)
class NpuDefaultSchedulePass(ModulePass):
    """Writes `#npu.schedule` on each product of an `npu.segment` that has
    none (see the module docstring)."""

    name = "npu-default-schedule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for segment in [s for s in op.walk() if isinstance(s, SegmentOp)]:
            try:
                write_default_schedules(segment, NpuParams())
            except NpuProgramError as error:
                raise DiagnosticException(f"npu-default-schedule: {error}") from None


__all__ = ["NpuDefaultSchedulePass", "write_default_schedules"]
