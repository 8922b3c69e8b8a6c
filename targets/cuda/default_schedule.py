"""`gpu-default-schedule`: the GPU target's default schedule on every
structured op on buffers that has none.

- A contraction (`out + a * b`, static extents) whose m and n (the output's
  last two dims that `a` and `b` read apart) are each at least
  `TILED_FROM` and whose one reduction dim is k gets a block-tiled
  `#ember_gpu.schedule<dims = [m, n, k], block = [64, 64], threads = [16,
  16], k_tile = 16>` (each thread 4 x 4 outputs, 8 KiB of shared memory a
  block); the block is 32 along a dim shorter than 64, so that small
  products do not leave most threads idle.
- Every other op (elementwise, reductions, convolutions, small products)
  gets a `#loop.schedule` with its parallel dims first, in declared order,
  then its reduction dims, and its parallel dims flagged: `loop-generate`
  makes one nest whose parallel band `convert-loop-to-gpu` spreads over
  threads, each thread running the reductions of its point.

Ops with a schedule are left alone, so a schedule written by hand wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.ember_gpu import GpuScheduleAttr
from ember.dialects.schedule import (
    PARALLEL,
    SCHEDULE,
    IterationSpace,
    ScheduleAttr,
    StructuredOp,
    iteration_space,
)
from ember.lowering.loop_to_gpu.contraction import contraction_problem
from ember.passes.loop.generate import on_buffers

TILED_FROM = 32
"""The smallest m and n extents that run as a block-tiled contraction."""
BLOCK = 64
THREADS = 16
K_TILE = 16


def tiled_contraction(space: IterationSpace) -> GpuScheduleAttr | None:
    """The block-tiled schedule of a contraction large enough for it, or None."""
    if space.product is None or DYNAMIC_INDEX in space.extents:
        return None
    reductions = [d for d, kind in enumerate(space.iterators) if kind != PARALLEL]
    if len(reductions) != 1:
        return None
    (k,) = reductions
    a, b = (space.maps[i] for i in space.product)
    (out,) = space.output_maps
    dims = [r.position for r in out.results if isinstance(r, AffineDimExpr)]
    in_a = {d for r in a.results for d in r.used_dims()}
    in_b = {d for r in b.results for d in r.used_dims()}
    ms = [d for d in dims if d in in_a and d not in in_b]
    ns = [d for d in dims if d in in_b and d not in in_a]
    if len(ms) != 1 or len(ns) != 1:
        return None
    m, n = ms[0], ns[0]
    if min(space.extents[m], space.extents[n]) < TILED_FROM:
        return None
    block = [BLOCK if space.extents[d] >= BLOCK else TILED_FROM for d in (m, n)]
    threads = [THREADS, THREADS]
    schedule = GpuScheduleAttr([m, n, k], block, threads, K_TILE)
    return schedule if contraction_problem(space, schedule) is None else None


def loop_schedule(space: IterationSpace) -> ScheduleAttr:
    """Parallel dims outermost, then the reductions; the parallel ones flagged."""
    parallel = [d for d, kind in enumerate(space.iterators) if kind == PARALLEL]
    reductions = [d for d, kind in enumerate(space.iterators) if kind != PARALLEL]
    return ScheduleAttr([*parallel, *reductions], parallel=parallel)


class AttachGpuSchedule(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        if SCHEDULE in op.attributes or not on_buffers(op):
            return
        space = iteration_space(op)
        schedule = tiled_contraction(space)
        op.attributes[SCHEDULE] = schedule if schedule is not None else loop_schedule(space)
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class GpuDefaultSchedulePass(ModulePass):
    """Attaches the GPU's default schedule to every structured op on buffers
    that lacks one (see the module docstring)."""

    name = "gpu-default-schedule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(AttachGpuSchedule(), apply_recursively=False).rewrite_module(op)


__all__ = ["GpuDefaultSchedulePass", "loop_schedule", "tiled_contraction"]
