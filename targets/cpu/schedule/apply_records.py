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
"""

from __future__ import annotations

from dataclasses import dataclass

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

TUNED_ATTR = "loop.tuned"
"""On an op whose schedule came from the records: its task's key."""


@dataclass(frozen=True)
class ApplyRecordsPass(ModulePass):
    """Attaches the records' fastest schedule to each op of a recorded task
    (`records`: the file; `threads`: the compile's thread count)."""

    name = "tensor-apply-records"

    records: str = ""
    threads: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ember.targets.cpu.schedule.tasks import harness_module, task_heads, task_key
        from ember.targets.tuning_records import Records

        if not self.records:
            return
        try:
            best = Records(self.records).best(self.threads)
        except EmberError as error:
            raise ScheduleError(f"{self.name}: {error}") from None
        wanted = {(r.op, r.extents) for r in best.values()}
        for head in list(task_heads(op)):
            if (head.name, iteration_space(head).extents) not in wanted:
                continue
            harness = harness_module(head)
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
                    f"{self.name}: {describe(head)}: the record of task {key} in {self.records} "
                    f"does not fit: {error}"
                ) from None
            head.attributes[TUNED_ATTR] = StringAttr(key)


__all__ = ["TUNED_ATTR", "ApplyRecordsPass"]
