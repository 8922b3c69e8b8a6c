"""Reductions along an input's contiguous axis run with that axis innermost.

The default loop order (`default_loop_order`) moves the output's last dim
inside the reduction dims, which suits a contraction: `C[m, n] += A[m, k] *
B[k, n]` walks B and C along n. A reduction over the last axis of its
input, as Softmax, LayerNormalization and ReduceMax over the last axis
lower, is the opposite case:

    m[r] = max(m[r], x[r, c])        default order: c, r   (r innermost)

Each step of the innermost loop then jumps a whole row of `x`, and LLVM
cannot vectorise it without gathers. This rule puts `c` innermost again
(the declared order, `c` moved last): the loop reads `x` contiguously and
its accumulator is one scalar per row, a reduction the loop vectoriser
widens (max and min always; sums whose add allows reassociation, as the
normalisations' sums do: `lowering/graph_to_tensor/normalization.py`).

The rule fires when the innermost dim of the order is a parallel dim `p`,
some input has a reduction dim `r` as its last (contiguous) index, `r` is
the last reduction dim in declared order (so every output sees its
reduction terms in the same order as before: results stay bit for bit),
and no input that depends on `r` is contiguous along `p` (a contraction's
B, a grouped convolution's input, a pooling of NHWC data: those keep the
default).

The rule serves vectorisation, so a CPU without vectors (`cpu=generic`)
keeps the scalar default, as it keeps every other default schedule.
"""

from __future__ import annotations

from xdsl.ir.affine import AffineDimExpr

from ember.dialects.schedule import PARALLEL, REDUCTION, IterationSpace, ScheduleAttr, depends_on


def contiguous_reduction_dim(space: IterationSpace, order: list[int]) -> int | None:
    """The reduction dim to run innermost if the rule applies (module docstring)."""
    if not order or space.iterators[order[-1]] != PARALLEL:
        return None
    inner = order[-1]
    reductions = [d for d, kind in enumerate(space.iterators) if kind == REDUCTION]
    if not reductions:
        return None
    last_reduction = reductions[-1]
    inputs = space.maps[: space.inputs]
    contiguous = [amap.results[-1] for amap in inputs if amap.results]
    if not any(isinstance(e, AffineDimExpr) and e.position == last_reduction for e in contiguous):
        return None
    for amap in inputs:
        reads_reduction = any(depends_on(e, last_reduction) for e in amap.results)
        if reads_reduction and amap.results and depends_on(amap.results[-1], inner):
            return None
    return last_reduction


def reduction_innermost(space: IterationSpace, schedule: ScheduleAttr, width: int) -> ScheduleAttr:
    """`schedule` with its loops in declared order and the contiguous
    reduction dim innermost where the rule applies and the CPU has vectors
    of `width` lanes; else `schedule`."""
    reduction = contiguous_reduction_dim(space, schedule.loop_order)
    if reduction is None or not width:
        return schedule
    order = [d for d in range(len(space.iterators)) if d != reduction] + [reduction]
    return ScheduleAttr(order, schedule.tile_sizes, schedule.parallel_dims, schedule.unroll_factor,
                        schedule.vector_width, schedule.packed_operands)  # fmt: skip


__all__ = ["contiguous_reduction_dim", "reduction_innermost"]
