"""`npu-apply-records`: gives each product of an `npu.segment` the fastest
schedule the tuning records hold for its task.

`ember tune MODEL --target npu` measures schedules per task
(`ember.targets.npu.tasks`) in the cycle model and stores them in a
records file (`ember.targets.tuning_records`, the NPU named by the hash
of its sizes: `npu_identity`). This pass runs after the partition and
just before `npu-default-schedule`: for each product layer whose task has
records made by this Ember build for this NPU, it writes the fastest
schedule measured as the op's `npu.schedule` and marks the op
`npu.tuned = "KEY"` (the cycle model has no noise: any schedule fewer
cycles than the default replaces it, no margin), so `--print-between-passes` and the report show
which schedules came from records. A schedule already written (by hand)
is left as it is; products without records are left to the default.
`compile_npu` applies the records of `Options.records` the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.npu.machine import NpuParams, NpuProgramError
from ember.dialects.npu.ops import Npu
from ember.dialects.npu.schedule import SCHEDULE_ATTR, TUNED_ATTR, NpuScheduleAttr
from ember.dialects.npu.segment import SegmentOp
from ember.errors import EmberError
from ember.targets.npu.measure import npu_identity
from ember.targets.npu.tasks import product_layers
from ember.targets.tuning_records import Record, Records


def parse_schedule(text: str) -> NpuScheduleAttr:
    """A recorded `#npu.schedule<...>`."""
    context = Context()
    context.load_dialect(Npu)
    attr = Parser(context, text).parse_attribute()
    if not isinstance(attr, NpuScheduleAttr):
        raise EmberError(f"{text} is not an #npu.schedule")
    return attr


def apply_records(module: ModuleOp, best: dict[str, Record], params: NpuParams) -> int:
    """Writes the records' schedule on each product of `module`'s segments
    whose task `best` has (none written before); returns how many."""
    applied = 0
    for segment in [s for s in module.walk() if isinstance(s, SegmentOp)]:
        for layer in list(product_layers(segment, params)):
            record = best.get(layer.key)
            if record is None or SCHEDULE_ATTR in layer.op.attributes:
                continue
            layer.op.attributes[SCHEDULE_ATTR] = parse_schedule(record.schedule)
            layer.op.attributes[TUNED_ATTR] = StringAttr(layer.key)
            applied += 1
    return applied


def apply_records_file(module: ModuleOp, path: str, params: NpuParams) -> int:
    """`apply_records` with the fastest records in the file at `path` made
    by this build for this NPU."""
    best = Records(path).best(1, npu_identity(params), margin=0.0)
    return apply_records(module, best, params) if best else 0


@dataclass(frozen=True)
class NpuApplyRecordsPass(ModulePass):
    """Writes the records' fastest `#npu.schedule` on each product of a
    recorded task (`records`: the file; see the module docstring)."""

    name = "npu-apply-records"

    records: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.records:
            return
        try:
            apply_records_file(op, self.records, NpuParams())
        except (EmberError, NpuProgramError) as error:
            raise DiagnosticException(f"{self.name}: {error}") from None


__all__ = ["TUNED_ATTR", "NpuApplyRecordsPass", "apply_records", "apply_records_file",
           "parse_schedule"]  # fmt: skip
