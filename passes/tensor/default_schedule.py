"""`tensor-default-schedule`: gives every structured op that has no
`schedule` attribute the default one (`#loop.schedule<...>`).

The default is today's heuristic (`ember.dialects.schedule.default_schedule`):
the dims in declared order with the output's last dim moved inside the
reduction dims, no tiles, every parallel dim's loops parallel, no
unrolling, no vector hint. An op that already has a schedule keeps it; the
pass checks that it fits the op and reports the op if not. Other ops are left
alone.

Bufferization (`convert-tensor-to-loop`) falls back to the same default for
an op without a schedule, so this pass changes no generated code: it makes
the schedule visible in the IR, as a starting point to edit by hand or for a
pass that tunes it. It runs where it is asked for (`ember-opt -p
tensor-default-schedule`); the CPU pipeline does not run it.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.schedule import (
    SCHEDULE,
    StructuredOp,
    default_schedule,
    describe,
    iteration_space,
    schedule_of,
    verify_schedule,
)


class AttachDefaultSchedule(RewritePattern):
    """A structured op without a schedule gets the default; one with a
    schedule is checked against the op."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        space = iteration_space(op)
        schedule = schedule_of(op)
        if schedule is not None:
            verify_schedule(schedule, space, describe(op))
            return
        op.attributes[SCHEDULE] = default_schedule(space)
        rewriter.notify_op_modified(op)


class DefaultSchedulePass(ModulePass):
    """Attaches the default schedule to every structured op that lacks one."""

    name = "tensor-default-schedule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(AttachDefaultSchedule(), apply_recursively=False).rewrite_module(op)


__all__ = ["AttachDefaultSchedule", "DefaultSchedulePass"]
