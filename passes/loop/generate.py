"""Loop generation: the loop nest a `#loop.schedule` describes, emitted
through a `LoopNestBuilder`.

`generate_loops` takes the iteration space of a structured op (the extent
and iterator kind of each dim), its schedule and a callback that emits the
body for given per-dim index values, and emits:

- the tile loops of the tiled dims (`0 to full step tile`, `full` the
  largest multiple of the tile within the extent), outermost first in the
  schedule's order, then one point loop per dim in the schedule's order (a
  tiled dim's runs over one tile). The index of a tiled dim is
  `tile_iv + point_iv` (`arith.addi`, at the top of the point loop's body);
- for a tile that does not divide its extent, the remainder is peeled: after
  the tile loop, the rest of the nest is emitted once more with the tile
  offset fixed at `full` and the point loop running over the remainder. The
  full tiles keep point loops with constant trip counts (what vectorises);
  the nest below a tiled dim is duplicated for each such remainder;
- with `unroll = N > 1`, the innermost loop steps by N and emits the body N
  times (the dim's index `i`, then `i + 1`, ...), followed by a remainder loop of step 1
  for the last `extent mod N` iterations;
- the `parallel` flag on every loop of a dim the schedule lists as
  parallel, and the vector width hint (`loop.vector_width`) on every
  innermost loop.

Each output element receives its reduction terms in the order the loops of
the reduction dims visit them. That is the default schedule's order (the
reduction dims in declared order, each counting up) whenever the reduction
dims come in declared order in `order` and no reduction dim but the first is
tiled, whatever else is tiled, peeled, unrolled or reordered. Otherwise (the
reduction dims reordered, or a later reduction dim tiled, whose tile loop
then runs outside the earlier ones' loops) the terms are summed in another
order, and floating-point results may differ by rounding.

Today bufferization (`convert-tensor-to-loop`) calls this for each
structured op; a `generate-loops` pass will, once structured ops survive
bufferization.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, Operation, SSAValue

from ember.dialects.loop_nests import LoopNestBuilder
from ember.dialects.schedule import VECTOR_WIDTH, ScheduleAttr

BodyEmitter = Callable[[LoopNestBuilder, Sequence[SSAValue]], None]
"""Emits one copy of the body at a builder, given the index of each dim (in dim order)."""

TileOffset = SSAValue | int | None
"""Where the current tile of a dim starts: a tile loop's iv, the constant
start of a peeled remainder, or None for an untiled dim."""


def generate_loops(
    nest: LoopNestBuilder,
    extents: Sequence[int],
    iterators: Sequence[str],
    schedule: ScheduleAttr,
    emit_body: BodyEmitter,
) -> None:
    """Emits at `nest` the loops `schedule` describes over `extents` (see the
    module docstring), calling `emit_body` for each copy of the body. The
    schedule must fit (`ember.dialects.schedule.verify_schedule`)."""
    assert len(extents) == len(iterators) == len(schedule.loop_order), "schedule does not fit"
    if not extents:
        # A 0-d space still gets its one-iteration loop (see LoopNestBuilder.nest).
        _, inner = nest.nest([], [])
        emit_body(LoopNestBuilder(inner), [])
        return
    bounds = _Bounds(nest, [extents[d] for d in schedule.loop_order])
    _NestEmitter(extents, schedule, emit_body, bounds).emit(nest, 0, {}, {}, {})


class _Bounds:
    """The loop bounds of one nest as `index` constants, each made once and
    placed before the outermost loop, where every loop of the nest sees it:
    first 0, 1 and the extents in loop order (what `LoopNestBuilder.nest`
    makes, so the default schedule gives the same IR), then any other bound
    (tile sizes, ends of full tiles, remainders) when first needed."""

    def __init__(self, nest: LoopNestBuilder, extents: Sequence[int]):
        self.constants: dict[int, SSAValue] = {}
        for value in (0, 1, *extents):
            nest.bound(value, self.constants)
        self.last = self.constants[1].owner

    def __getitem__(self, value: int) -> SSAValue:
        if value not in self.constants:
            assert isinstance(self.last, Operation)
            builder = LoopNestBuilder(Builder(InsertPoint.after(self.last)))
            self.constants[value] = builder.index(value)
            self.last = self.constants[value].owner
        return self.constants[value]


class _NestEmitter:
    """The recursion of `generate_loops`: one level per loop of the nest,
    tile loops first. The state passed down is each dim's tile offset and
    point-loop extent so far, and the index values of the dims already
    looped over."""

    def __init__(
        self,
        extents: Sequence[int],
        schedule: ScheduleAttr,
        emit_body: BodyEmitter,
        bounds: _Bounds,
    ):
        self.extents = list(extents)
        self.bounds = bounds
        self.tiles = schedule.tile_sizes
        self.parallel = set(schedule.parallel_dims)
        self.unroll = schedule.unroll_factor
        self.vector = schedule.vector_width
        self.emit_body = emit_body
        order = schedule.loop_order
        tiled = [d for d in order if 0 < self.tiles[d] < self.extents[d]]
        self.levels = [(d, True) for d in tiled] + [(d, False) for d in order]

    def emit(
        self,
        builder: LoopNestBuilder,
        level: int,
        offsets: dict[int, TileOffset],
        sizes: dict[int, int],
        indices: dict[int, SSAValue],
    ) -> None:
        dim, is_tile_loop = self.levels[level]
        if is_tile_loop:
            self._tile_loop(builder, level, dim, offsets, sizes, indices)
        elif level == len(self.levels) - 1:
            self._innermost_loop(builder, dim, offsets.get(dim), sizes, indices)
        else:
            size = sizes.get(dim, self.extents[dim])
            iv, inner = self._loop(builder, 0, size, 1, dim in self.parallel)
            index = self._index(inner, offsets.get(dim), iv)
            self.emit(inner, level + 1, offsets, sizes, {**indices, dim: index})

    def _tile_loop(
        self,
        builder: LoopNestBuilder,
        level: int,
        dim: int,
        offsets: dict[int, TileOffset],
        sizes: dict[int, int],
        indices: dict[int, SSAValue],
    ) -> None:
        tile, extent = self.tiles[dim], self.extents[dim]
        full = extent // tile * tile
        iv, inner = self._loop(builder, 0, full, tile, dim in self.parallel)
        self.emit(inner, level + 1, {**offsets, dim: iv}, {**sizes, dim: tile}, indices)
        if full < extent:
            remainder = {**sizes, dim: extent - full}
            self.emit(builder, level + 1, {**offsets, dim: full}, remainder, indices)

    def _innermost_loop(
        self,
        builder: LoopNestBuilder,
        dim: int,
        offset: TileOffset,
        sizes: dict[int, int],
        indices: dict[int, SSAValue],
    ) -> None:
        size, parallel = sizes.get(dim, self.extents[dim]), dim in self.parallel
        if self.unroll == 1:
            iv, inner = self._loop(builder, 0, size, 1, parallel)
            self._mark_innermost(iv)
            self._body(inner, {**indices, dim: self._index(inner, offset, iv)})
            return
        main = size // self.unroll * self.unroll
        if main:
            iv, inner = self._loop(builder, 0, main, self.unroll, parallel)
            self._mark_innermost(iv)
            first = self._index(inner, offset, iv)
            for step in range(self.unroll):
                index = first if step == 0 else inner.insert(arith.AddiOp(first, inner.index(step))).results[0]  # fmt: skip
                self._body(inner, {**indices, dim: index})
        if main < size:
            iv, inner = self._loop(builder, main, size, 1, parallel)
            self._mark_innermost(iv)
            self._body(inner, {**indices, dim: self._index(inner, offset, iv)})

    def _loop(
        self, builder: LoopNestBuilder, lower: int, upper: int, step: int, parallel: bool
    ) -> tuple[SSAValue, LoopNestBuilder]:
        bounds = self.bounds
        return builder.loop(bounds[lower], bounds[upper], bounds[step], parallel=parallel)

    def _body(self, builder: LoopNestBuilder, indices: dict[int, SSAValue]) -> None:
        self.emit_body(builder, [indices[d] for d in range(len(self.extents))])

    @staticmethod
    def _index(builder: LoopNestBuilder, offset: TileOffset, point: SSAValue) -> SSAValue:
        """The dim's index: the point iv, plus the tile offset when tiled."""
        if offset is None:
            return point
        start = builder.index(offset) if isinstance(offset, int) else offset
        return builder.insert(arith.AddiOp(start, point)).results[0]

    def _mark_innermost(self, iv: SSAValue) -> None:
        """Records the vector width hint on the loop of `iv`."""
        if not self.vector:
            return
        assert isinstance(iv.owner, Block)
        loop = iv.owner.parent_op()
        assert loop is not None
        loop.attributes[VECTOR_WIDTH] = IntegerAttr(self.vector, i64)


__all__ = ["BodyEmitter", "generate_loops"]
