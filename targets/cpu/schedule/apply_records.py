"""`tensor-apply-records`: gives each structured op the fastest schedule the
tuning records hold for its task.

`ember tune` measures schedules per task (`ember.tuning`) and stores them
in a records file (`ember.targets.tuning_records`). This pass runs on buffers just
before `tensor-default-schedule`: for each op that heads a task
(`ember.targets.cpu.schedule.tasks.task_heads`) whose key has records made by this
Ember build on this CPU, it attaches the fastest schedule measured (at
`threads` threads where there is one) and marks the op
`loop.tuned = "KEY"`, so `--print-between-passes` shows which schedules
came from records. Ops without records are left to the default. Only ops
whose op name and extents match some record are keyed (building a task's
harness costs a few milliseconds an op).

From `ember-opt` the pass reads its `records` file; the CPU pipeline hands
it the schedules the compile read already (`Options.schedules`, the ones
the compile cache's key hashed: `ApplyReadRecordsPass`), so a compile reads
the file once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ember.dialects.schedule import (
    ScheduleError,
    describe,
    iteration_space,
    parse_schedule,
    set_schedule,
)
from ember.errors import EmberError
from ember.options import Options

if TYPE_CHECKING:
    from ember.targets.tuning_records import BestSchedules

TUNED_ATTR = "loop.tuned"
"""On an op whose schedule came from the records: its task's key."""


@dataclass(frozen=True)
class ApplyRecordsPass(ModulePass):
    """Attaches the records' fastest schedule to each op of a recorded task
    (`records`: the file; `threads`: the compile's thread count)."""

    name = "tensor-apply-records"

    records: str = ""
    threads: int = 1

    def best_schedules(self) -> BestSchedules | None:
        """The schedules to apply: the `records` file's, read here."""
        if not self.records:
            return None
        from ember.targets.tuning_records import best_schedules

        return best_schedules(self.records, self.threads)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ember.targets.cpu.schedule.tasks import harness_module, task_heads_with_ops, task_key

        try:
            schedules = self.best_schedules()
        except EmberError as error:
            raise ScheduleError(f"{self.name}: {error}") from None
        if schedules is None:
            return
        best = schedules.by_task
        wanted = {(r.op, r.extents) for r in best.values()}
        for head, ops in list(task_heads_with_ops(op)):
            if (head.name, iteration_space(head).extents) not in wanted:
                continue
            harness = harness_module(head, ops)
            if harness is None:
                continue
            key = task_key(str(harness))
            record = best.get(key)
            if record is None:
                continue
            try:
                set_schedule(head, parse_schedule(record.schedule))
            except EmberError as error:
                raise ScheduleError(
                    f"{self.name}: {describe(head)}: the record of task {key} in {schedules.path} "
                    f"does not fit: {error}"
                ) from None
            head.attributes[TUNED_ATTR] = StringAttr(key)


@dataclass(frozen=True)
class ApplyReadRecordsPass(ApplyRecordsPass):
    """`tensor-apply-records` with schedules read before (`Options.schedules`):
    the CPU pipeline's, so that the file is not read again."""

    schedules: BestSchedules | None = None

    def best_schedules(self) -> BestSchedules | None:
        return self.schedules


def apply_records_pass(options: Options) -> list[ModulePass]:
    """The CPU pipeline's `tensor-apply-records` for `options` (none without records)."""
    from ember.targets.tuning_records import read_schedules

    if not options.records:
        return []
    schedules = read_schedules(options)
    if schedules is not None:
        return [ApplyReadRecordsPass(options.records, options.threads, schedules)]
    return [ApplyRecordsPass(options.records, options.threads)]


__all__ = ["TUNED_ATTR", "ApplyReadRecordsPass", "ApplyRecordsPass", "apply_records_pass"]
