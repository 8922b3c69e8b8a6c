"""`tensor-default-schedule`: gives every structured op that has no
`schedule` attribute the default one (`#loop.schedule<...>`).

The default is today's heuristic (`ember.dialects.schedule.default_schedule`):
the dims in declared order with the output's last dim moved inside the
reduction dims, no tiles, every parallel dim's loops parallel, no
unrolling, no vector hint. A `linalg.generic` whose innermost output dim runs
inside reduction loops also gets that dim tiled to a register block
(`passes/tensor/register_blocking.py`; `vector-width=N` sets the vector width
it assumes, 0: the host's). An op that already has a schedule keeps it; the
pass checks that it fits the op and reports the op if not. Other ops are left
alone.

Bufferization (`convert-tensor-to-loop`) falls back to `default_schedule` for
an op without a schedule (no register block), so without this pass the
loops are those of that heuristic; with it the schedule is visible in the IR,
as a starting point to edit by hand or for a pass that tunes it. The CPU
pipeline runs it between bufferization and `loop-generate`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.schedule import (
    SCHEDULE,
    ScheduleError,
    StructuredOp,
    default_schedule,
    describe,
    iteration_space,
    schedule_of,
    verify_schedule,
)
from ember.passes.tensor.register_blocking import block_innermost, host_vector_width


class AttachDefaultSchedule(RewritePattern):
    """A structured op without a schedule gets the default (a generic's with
    its register block for vectors of `vector_width` floats); one with a
    schedule is checked against the op."""

    def __init__(self, vector_width: int):
        self.vector_width = vector_width

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        space = iteration_space(op)
        schedule = schedule_of(op)
        if schedule is not None:
            verify_schedule(schedule, space, describe(op))
            return
        schedule = default_schedule(space)
        if isinstance(op, linalg.GenericOp):
            schedule = block_innermost(space, schedule, self.vector_width)
        op.attributes[SCHEDULE] = schedule
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class DefaultSchedulePass(ModulePass):
    """Attaches the default schedule to every structured op that lacks one."""

    name = "tensor-default-schedule"

    vector_width: int = 0
    """f32 lanes per vector the register blocks assume (0: the host's)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.vector_width < 0 or self.vector_width & (self.vector_width - 1):
            raise ScheduleError(
                f"{self.name}: vector-width must be 0 (the host's) or a power of two, "
                f"got {self.vector_width}"
            )
        width = self.vector_width or host_vector_width()
        pattern = AttachDefaultSchedule(width)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)


__all__ = ["AttachDefaultSchedule", "DefaultSchedulePass"]
