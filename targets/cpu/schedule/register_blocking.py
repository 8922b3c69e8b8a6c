"""Register blocking in the default schedule of generics: the innermost
output dim, walked inside reduction loops, is tiled so that the outputs it
accumulates fit in vector registers.

The default loop order (`default_loop_order`) puts the output's last
(contiguous) dim innermost, inside the reduction dims:

    out[n, f, p] += x[n, g(f, c), p] * w[f, c]      runs as   n, f, c, p

Each step of a reduction loop then sweeps the whole of `p`. While `p` is
short (a row of 7 or 28) LLVM unrolls that sweep and keeps its outputs in
registers across the reduction; a long one (784 positions of a pointwise
grouped convolution, 112 columns of a depthwise one) is loaded and stored
again for every reduction step, which bounds the loop by loads and stores,
not arithmetic. Tiling `p` by `BLOCK_VECTORS` vectors moves the tile loop
outside all others (`passes/loop/generate.py`), so the point loop of one
tile stays inside the reduction loops and its outputs stay in registers.

Only `linalg.generic`s get the tile (grouped and depthwise convolutions,
pooling, reductions over an outer axis, batched products): the named
contractions keep `default_schedule`, as do generics where the rule does
not fire, which are those without a reduction dim, those whose innermost
dim is a reduction, or not the last dim of every output, or indexes an
input along any axis but its last (a global pooling of NCHW data, whose
channel dim would be read by gathers), and those whose innermost extent
fits in one block already. Tiling a parallel dim changes no
output's order of reduction terms, so results stay bit for bit those of the
untiled schedule.

The vector width is the CPU's that `tensor-default-schedule` schedules for
(its `cpu` option); a CPU without vectors gets no block.
"""

from __future__ import annotations

from xdsl.ir.affine import AffineDimExpr

from ember.dialects.schedule import (
    PARALLEL,
    REDUCTION,
    IterationSpace,
    ScheduleAttr,
    depends_on,
)

BLOCK_VECTORS = 4
"""Vectors of outputs per register block: 4 accumulators, each with its own
dependency chain, hide the latency of a floating-point add (AVX-512 and AVX2
have 32 and 16 vector registers, so the inputs fit next to them)."""


def blocked_dim(space: IterationSpace, order: list[int]) -> int | None:
    """The innermost dim of `order` if the rule applies to it (module docstring)."""
    if not order:  # a rank-0 op has no loop
        return None
    inner = order[-1]
    if space.iterators[inner] != PARALLEL or REDUCTION not in space.iterators:
        return None
    for amap in space.output_maps:
        last = amap.results[-1] if amap.results else None
        if not isinstance(last, AffineDimExpr) or last.position != inner:
            return None
    for amap in space.maps[: space.inputs]:
        # An input the dim walks along another axis (a channel of NCHW data
        # summed over its positions) is read by gathers: no block pays.
        if any(depends_on(e, inner) for e in amap.results[:-1]):
            return None
    return inner


def block_innermost(space: IterationSpace, schedule: ScheduleAttr, width: int) -> ScheduleAttr:
    """`schedule` with its innermost dim tiled by `BLOCK_VECTORS * width`
    where the rule applies and the dim is longer than that; else `schedule`."""
    order, tiles = schedule.loop_order, schedule.tile_sizes
    inner = blocked_dim(space, order)
    block = BLOCK_VECTORS * width
    if inner is None or not width or tiles[inner] or space.extents[inner] <= block:
        return schedule
    tiles = [block if d == inner else t for d, t in enumerate(tiles)]
    return ScheduleAttr(order, tiles, schedule.parallel_dims, schedule.unroll_factor,
                        schedule.vector_width, schedule.packed_operands)  # fmt: skip


__all__ = ["BLOCK_VECTORS", "block_innermost", "blocked_dim"]
