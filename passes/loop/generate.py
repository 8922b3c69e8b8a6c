"""`loop-generate`: structured ops on buffers become the loop nests their
schedules describe.

After bufferization (`convert-tensor-to-loop`) the compute is still
structured ops, now on memrefs (destination passing, no results):
`linalg.generic`, `linalg.matmul`, `linalg.conv_2d_nchw_fchw` (read through
their generalization), `linalg.fill`, `linalg.copy` and `ember_linalg.gather`.
The pass replaces each, where it stands, by loops:

- a generic or named op gets the nest of its `schedule` attribute
  (`#loop.schedule`, checked against the op) or, without one, of
  `default_schedule`; the innermost body loads the operands its scalar body
  reads (indices from the indexing maps), runs the body and stores the
  yielded values; reductions accumulate through memory. Each input the
  schedule packs (`pack`) is first copied into a buffer allocated where the
  op stands, laid out tile by tile (`ember.dialects.schedule`), by a nest of
  its own tiled as the op's dims are; the body reads that buffer at (tile
  number, point iv) instead of the operand;
- a fill, a copy and a gather get one parallel loop per dim of what they
  write, in order (they take no schedule);
- an operand that is a `memref.subview` with static offsets and strides is
  read and written through its source, the index of each dim being
  `index * stride + offset` (a `muli` left out for stride 1, an `addi` for
  offset 0): the loops touch the buffers bufferization allocated and nothing
  else, so `loop-fuse` and `loop-plan-memory` see plain loads and stores;
- what only the op used is erased with it: subviews, the buffer of an
  operand whose values the body never reads (a pooling window that only gives
  its dims their extent), the constant of a fill.

Ops still on tensors are left alone, and so is an op whose `schedule` is a
target generator's `KernelSchedule` (the GPU's `#ember_gpu.schedule`). An op inside a `loop.kernel` becomes
loops inside that kernel, where it stands, so the kernel keeps its group.

The rest of this module is the generator those nests come from.

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
  innermost loop;
- for the dims the caller asks about (those a packed operand is indexed
  by), each tile loop's tile number (`arith.divui` of its iv by the tile; a
  constant in a peeled remainder), handed to the body with the point iv;
- with a micro-kernel (`micro = [m, n, MR, NR]`, for a contraction whose
  operands along n are readable as vectors), the point loops of the dims
  other than m, n and the reductions, then blocks of MR x NR over (m, n):
  each loads its accumulators (`vector.load` of the output, or a broadcast
  of the constant of a fill just before the op: `absorbed_fill`), carries
  them through `scf.for` loops over the reduction dims (`iter_args`), where
  each point reads the operands once as vectors (one at steps of 2 along n
  as two loads and a `vector.shuffle`) or broadcast scalars and
  takes one `vector.fma` per accumulator (`_ContractionBlock`), and stores
  them after. Partial blocks run with fewer rows or vectors; columns short
  of a vector run the scalar body in loops m, reductions, n;
- with `loop.epilogue = N` on such a contraction (`loop-fuse-epilogues`),
  each block runs the N elementwise generics after it on its accumulators
  before the store and stores their value into the last one's output
  (`ember.passes.loop.epilogue`); those generics are erased, and the
  buffers that passed values between them.

Each output element receives its reduction terms in the order the loops of
the reduction dims visit them. That is the default schedule's order (the
reduction dims in declared order, each counting up) whenever the reduction
dims come in declared order in `order` and no reduction dim but the first is
tiled, whatever else is tiled, peeled, unrolled or reordered. Otherwise (the
reduction dims reordered, or a later reduction dim tiled, whose tile loop
then runs outside the earlier ones' loops) the terms are summed in another
order, and floating-point results may differ by rounding.

"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    VectorType,
    bf16,
    f16,
    f32,
    i32,
    i64,
)
from xdsl.dialects.func import CallOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap, AffineSymExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_linalg import (
    GatherOp,
    ScatterOp,
    addressed_axes,
    generalize,
    indexing_maps,
)
from ember.dialects.loop import Bf16DotOp, WeightOp
from ember.dialects.loop_nests import Bound, LoopNestBuilder, buffer_shape, buffer_size
from ember.dialects.schedule import (
    NO_UNROLL,
    PARALLEL,
    STRUCTURED_OPS,
    VECTOR_WIDTH,
    BF16Pairs,
    IterationSpace,
    MicroKernel,
    ScheduleAttr,
    StructuredOp,
    describe,
    has_kernel_schedule,
    iteration_space,
    map_depends_on,
    op_schedule,
    overlap_vectors,
    read_stride,
)
from ember.passes.loop.epilogue import EPILOGUE_ATTR, Epilogue, EpilogueBlock, find_epilogue
from ember.passes.loop.kernel_buffers import calls_by_callee, drop_unused_arguments
from ember.passes.loop.packed_weights import packed_weight

TilePoint = tuple[SSAValue, SSAValue]
"""Where a tiled dim's index lies: (the tile's number, the position within
the tile, i.e. the point iv)."""

BodyEmitter = Callable[[LoopNestBuilder, Sequence[SSAValue], Sequence[TilePoint | None]], None]
"""Emits one copy of the body at a builder, given the index of each dim (in
dim order) and, when `generate_loops` is asked for them, each tiled dim's
`TilePoint` (None for an untiled dim, and for every dim when not asked)."""

Cell = tuple[list[SSAValue], list[TilePoint | None]]
"""One output position of a micro-kernel's block: each dim's index and
`TilePoint`, as a `BodyEmitter` gets them."""

WriteVector = Callable[[LoopNestBuilder, SSAValue, Cell], None]
"""Stores one accumulator of a micro-kernel's block at its cell."""


class MicroBody(Protocol):
    """What a micro-kernel's block does at its cells (`cells[r][j]`: row r
    along m, vector j along n, each cell the first of `width` consecutive
    n): `load` the accumulators from the output (one vector per cell,
    row-major), `step` them by one point of the reduction dims (the cells'
    indices then include the reduction dims'), `store` them back.

    `fresh` says that a block does not read what the output held (its
    accumulators start at a constant): then a block may overlap another, and
    the last block of a dim whose extent its size does not divide runs at
    the end of the extent instead of as a smaller block."""

    fresh: bool
    pair_dim: int | None
    """A reduction dim each step takes whole (the pairs of `loop.bf16_dot`):
    no loop runs over it, and the cells stand at its index 0."""

    def load(self, builder: LoopNestBuilder, cells: list[list[Cell]]) -> list[SSAValue]: ...

    def step(
        self, builder: LoopNestBuilder, cells: list[list[Cell]], accumulators: Sequence[SSAValue]
    ) -> list[SSAValue]: ...

    def store(
        self, builder: LoopNestBuilder, cells: list[list[Cell]], accumulators: Sequence[SSAValue]
    ) -> None: ...


@dataclass(frozen=True)
class _Tile:
    """The current tile of a tiled dim: where it starts (a tile loop's iv, or
    the constant start of a peeled remainder), its number (the iv divided by
    the tile, or a constant; None when nobody asked for tile points) and how
    many points it has."""

    offset: SSAValue | int
    number: SSAValue | int | None
    size: int


def generate_loops(
    nest: LoopNestBuilder,
    extents: Sequence[Bound],
    iterators: Sequence[str],
    schedule: ScheduleAttr,
    emit_body: BodyEmitter,
    *,
    tile_points: AbstractSet[int] = frozenset(),
    micro_body: MicroBody | None = None,
) -> None:
    """Emits at `nest` the loops `schedule` describes over `extents` (see the
    module docstring), calling `emit_body` for each copy of the body. For
    the dims in `tile_points`, each tile loop also computes its tile's number
    (`arith.divui` of its iv by the tile, at the top of its body) and
    `emit_body` gets the `TilePoint` of the dim when tiled; the nest of other
    dims holds nothing but the loops and the dims' indices. With `micro_body`,
    the schedule's micro-kernel runs the m, n and reduction dims (see the
    module docstring); without it, `micro` is ignored and every point runs
    `emit_body`. The schedule must fit
    (`ember.dialects.schedule.verify_schedule`)."""
    assert len(extents) == len(iterators) == len(schedule.loop_order), "schedule does not fit"
    if not extents:
        # A 0-d space still gets its one-iteration loop (see LoopNestBuilder.nest).
        _, inner = nest.nest([], [])
        emit_body(LoopNestBuilder(inner), [], [])
        return
    bounds = _Bounds(nest, [extents[d] for d in schedule.loop_order])
    emitter = _NestEmitter(extents, iterators, schedule, emit_body, bounds, tile_points)
    if micro_body is not None and schedule.micro_kernel is not None:
        emitter = _MicroNestEmitter(extents, iterators, schedule, emit_body, bounds, tile_points,
                                    schedule.micro_kernel, micro_body)  # fmt: skip
    emitter.emit(nest, 0, {}, {})


class _Bounds:
    """The loop bounds of one nest as `index` constants, each made once and
    placed before the outermost loop, where every loop of the nest sees it:
    first 0, 1 and the extents in loop order (what `LoopNestBuilder.nest`
    makes, so the default schedule gives the same IR), then any other bound
    (tile sizes, ends of full tiles, remainders) when first needed."""

    def __init__(self, nest: LoopNestBuilder, extents: Sequence[Bound]):
        self.constants: dict[int, SSAValue] = {}
        for value in (0, 1, *extents):
            nest.bound(value, self.constants)
        self.last = self.constants[1].owner

    def __getitem__(self, value: Bound) -> SSAValue:
        if isinstance(value, SSAValue):  # a run-time extent
            return value
        if value not in self.constants:
            assert isinstance(self.last, Operation)
            builder = LoopNestBuilder(Builder(InsertPoint.after(self.last)))
            self.constants[value] = builder.index(value)
            self.last = self.constants[value].owner
        return self.constants[value]


def _tiled(tile: int, extent: Bound) -> bool:
    """Whether a dim of `extent` gets tile loops for `tile` (a run-time
    extent never does: `verify_schedule` refuses it)."""
    return isinstance(extent, int) and 0 < tile < extent


_Indices = dict[int, tuple[SSAValue, SSAValue]]
"""The dims already looped over: each dim's (index, point iv)."""


class _NestEmitter:
    """The recursion of `generate_loops`: one level per loop of the nest,
    tile loops first. The state passed down is the current `_Tile` of each
    tiled dim and the index and point iv of the dims already looped over."""

    def __init__(
        self,
        extents: Sequence[Bound],
        iterators: Sequence[str],
        schedule: ScheduleAttr,
        emit_body: BodyEmitter,
        bounds: _Bounds,
        tile_points: AbstractSet[int],
    ):
        self.extents = list(extents)
        self.iterators = list(iterators)
        self.bounds = bounds
        self.tiles = schedule.tile_sizes
        self.parallel = set(schedule.parallel_dims)
        self.unroll = schedule.unroll_factor
        self.vector = schedule.vector_width
        self.emit_body = emit_body
        self.tile_points = tile_points
        order = schedule.loop_order
        tiled = [d for d in order if _tiled(self.tiles[d], self.extents[d])]
        self.levels = [(d, True) for d in tiled] + [(d, False) for d in self._point_dims(order)]

    def _point_dims(self, order: list[int]) -> list[int]:
        """The dims with a point loop of their own, outermost first."""
        return order

    def emit(
        self, builder: LoopNestBuilder, level: int, tiles: dict[int, _Tile], indices: _Indices
    ) -> None:
        dim, is_tile_loop = self.levels[level]
        if is_tile_loop:
            self._tile_loop(builder, level, dim, tiles, indices)
        elif level == len(self.levels) - 1:
            self._innermost_loop(builder, dim, tiles, indices)
        else:
            iv, inner = self._loop(builder, 0, self._size(dim, tiles), 1, dim in self.parallel)
            index = self._index(inner, tiles.get(dim), iv)
            self.emit(inner, level + 1, tiles, {**indices, dim: (index, iv)})

    def _size(self, dim: int, tiles: dict[int, _Tile]) -> Bound:
        """The trip count of the dim's point loop (an `index` value for a
        run-time extent)."""
        return tiles[dim].size if dim in tiles else self.extents[dim]

    def _tile_loop(
        self,
        builder: LoopNestBuilder,
        level: int,
        dim: int,
        tiles: dict[int, _Tile],
        indices: _Indices,
    ) -> None:
        tile, extent = self.tiles[dim], self.extents[dim]
        assert isinstance(extent, int), "a run-time extent is never tiled"
        full = extent // tile * tile
        iv, inner = self._loop(builder, 0, full, tile, dim in self.parallel)
        number: SSAValue | None = None
        if dim in self.tile_points:
            number = inner.insert(arith.DivUIOp(iv, self.bounds[tile])).results[0]
        self.emit(inner, level + 1, {**tiles, dim: _Tile(iv, number, tile)}, indices)
        if full < extent:
            last = _Tile(full, full // tile if dim in self.tile_points else None, extent - full)
            self.emit(builder, level + 1, {**tiles, dim: last}, indices)

    def _innermost_loop(
        self, builder: LoopNestBuilder, dim: int, tiles: dict[int, _Tile], indices: _Indices
    ) -> None:
        size, parallel, tile = self._size(dim, tiles), dim in self.parallel, tiles.get(dim)
        if self.unroll == 1:
            iv, inner = self._loop(builder, 0, size, 1, parallel)
            self._mark_innermost(iv)
            self._body(inner, tiles, {**indices, dim: (self._index(inner, tile, iv), iv)})
            return
        assert isinstance(size, int), "a run-time extent is never unrolled"
        main = size // self.unroll * self.unroll
        if main:
            iv, inner = self._loop(builder, 0, main, self.unroll, parallel)
            self._mark_innermost(iv)
            first = self._index(inner, tile, iv)
            for step in range(self.unroll):
                index, point = first, iv
                if step:
                    index = inner.insert(arith.AddiOp(first, inner.index(step))).results[0]
                    if tile is not None and dim in self.tile_points:
                        point = inner.insert(arith.AddiOp(iv, inner.index(step))).results[0]
                self._body(inner, tiles, {**indices, dim: (index, point)})
        if main < size:
            iv, inner = self._loop(builder, main, size, 1, parallel)
            self._mark_innermost(iv)
            self._body(inner, tiles, {**indices, dim: (self._index(inner, tile, iv), iv)})

    def _loop(
        self, builder: LoopNestBuilder, lower: Bound, upper: Bound, step: int, parallel: bool
    ) -> tuple[SSAValue, LoopNestBuilder]:
        bounds = self.bounds
        return builder.loop(bounds[lower], bounds[upper], bounds[step], parallel=parallel)

    def _cell(self, tiles: dict[int, _Tile], indices: _Indices) -> Cell:
        """Each dim's index and `TilePoint` at `indices`. A dim not among them
        (a reduction dim, where a micro-kernel loads or stores its
        accumulators, which do not depend on it) stands at index 0."""
        points: list[TilePoint | None] = [None] * len(self.extents)
        for d, tile in tiles.items():
            number = tile.number
            if number is not None:
                points[d] = (
                    self.bounds[number] if isinstance(number, int) else number,
                    indices[d][1] if d in indices else self.bounds[0],
                )
        ivs = [indices[d][0] if d in indices else self.bounds[0] for d in range(len(self.extents))]
        return ivs, points

    def _body(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices) -> None:
        self.emit_body(builder, *self._cell(tiles, indices))

    @staticmethod
    def _index(builder: LoopNestBuilder, tile: _Tile | None, point: SSAValue) -> SSAValue:
        """The dim's index: the point iv, plus the tile offset when tiled."""
        if tile is None:
            return point
        offset = tile.offset
        start = builder.index(offset) if isinstance(offset, int) else offset
        return builder.binary(arith.AddiOp, start, point)

    def _mark_innermost(self, iv: SSAValue) -> None:
        """Records the vector width hint on the loop of `iv`."""
        if not self.vector:
            return
        assert isinstance(iv.owner, Block)
        loop = iv.owner.parent_op()
        assert loop is not None
        loop.attributes[VECTOR_WIDTH] = IntegerAttr(self.vector, i64)


class _MicroNestEmitter(_NestEmitter):
    """`generate_loops` with a micro-kernel: the tile loops, then the point
    loops of the dims other than m, n and the reductions, then `_blocks`:
    blocks of MR x NR along (m, n) over the current tiles, each running every
    reduction dim inside it with its accumulators carried through those
    loops (`scf.for` iter_args). The last rows of m that do not fill MR form
    a block of fewer rows; the last columns of n that do not fill NR form a
    block of fewer vectors; columns short of a whole vector run the scalar
    body, in loops m, the reductions, n (the default's order)."""

    def __init__(self, extents: Sequence[Bound], iterators: Sequence[str], schedule: ScheduleAttr,
                 emit_body: BodyEmitter, bounds: _Bounds, tile_points: AbstractSet[int],
                 micro: MicroKernel, micro_body: MicroBody):  # fmt: skip
        self.micro, self.micro_body = micro, micro_body
        super().__init__(extents, iterators, schedule, emit_body, bounds, tile_points)
        self.reductions = [d for d in schedule.loop_order if iterators[d] != PARALLEL]
        self.stepped = [d for d in self.reductions if d != micro_body.pair_dim]

    def _point_dims(self, order: list[int]) -> list[int]:
        inner = {self.micro.m, self.micro.n, *(d for d in order if self.iterators[d] != PARALLEL)}
        return [d for d in order if d not in inner]

    def emit(
        self, builder: LoopNestBuilder, level: int, tiles: dict[int, _Tile], indices: _Indices
    ) -> None:
        if level < len(self.levels):
            dim, is_tile_loop = self.levels[level]
            if is_tile_loop:
                self._tile_loop(builder, level, dim, tiles, indices)
            else:
                iv, inner = self._loop(builder, 0, self._size(dim, tiles), 1, dim in self.parallel)
                index = self._index(inner, tiles.get(dim), iv)
                self.emit(inner, level + 1, tiles, {**indices, dim: (index, iv)})
            return
        self._blocks(builder, tiles, indices)

    def _blocks(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices) -> None:
        micro = self.micro
        rows, columns = self._size(micro.m, tiles), self._size(micro.n, tiles)
        assert isinstance(columns, int), "micro-kernel vectors never run along a run-time extent"
        if isinstance(rows, SSAValue):
            self._run_time_rows(builder, tiles, indices, rows, columns)
            return
        if self.micro_body.fresh and rows >= micro.rows and columns >= micro.columns:
            self._overlapping_blocks(builder, tiles, indices, rows, columns)
            return
        full_rows = rows // micro.rows * micro.rows
        if full_rows:
            row, inner = self._loop(builder, 0, full_rows, micro.rows, micro.m in self.parallel)
            self._across(inner, tiles, indices, row, micro.rows, columns)
        if full_rows < rows:
            self._across(builder, tiles, indices, full_rows, rows - full_rows, columns)

    def _run_time_rows(self, builder: LoopNestBuilder, tiles: dict[int, _Tile],
                       indices: _Indices, rows: SSAValue, columns: int) -> None:  # fmt: skip
        """Blocks over a run-time number of rows: whole blocks of MR rows up
        to `rows - rows mod MR`, then one row at a time. Where the blocks
        start from a constant (`_across`), the last block instead starts at
        `rows - MR` (`arith.minsi`), overlapping the one before as in a
        static nest, when there are MR rows or more (an `arith.select` of the
        loop's end: no branch). Fewer rows (1 to MR - 1) run as one block of
        exactly that many rows, as a static nest of that size would, with as
        many accumulators as a whole block (more vectors per row), so that
        the operands are read once, not once per row: a block per count,
        each a loop of zero or one trip."""
        micro = self.micro
        parallel = micro.m in self.parallel
        if micro.rows > 1 and self.micro_body.fresh:
            block = self.bounds[micro.rows]
            enough = builder.insert(arith.CmpiOp(rows, block, "sge")).results[0]
            end = builder.insert(arith.SelectOp(enough, rows, self.bounds[0])).results[0]
            last = builder.insert(arith.SubiOp(rows, block)).results[0]
            row, inner = self._loop(builder, 0, end, micro.rows, parallel)
            start = inner.insert(arith.MinSIOp(row, last)).results[0]
            self._across(inner, tiles, indices, start, micro.rows, columns)
            if columns < micro.columns:  # the scalar columns take no clamped rows
                row, inner = self._loop(builder, end, rows, 1, parallel)
                self._across(inner, tiles, indices, row, 1, columns)
                return
            few = builder.insert(arith.CmpiOp(end, rows, "slt")).results[0]  # 0 < rows < MR
            left = builder.insert(arith.SelectOp(few, rows, self.bounds[0])).results[0]
            for size in range(1, micro.rows):
                exact = builder.insert(arith.CmpiOp(left, self.bounds[size], "eq")).results[0]
                count = builder.insert(arith.SelectOp(exact, self.bounds[1], self.bounds[0]))
                _, inner = self._loop(builder, 0, count.results[0], 1, False)
                # As many accumulators as a whole block: fewer rows, more vectors each.
                wide = min(micro.vectors * micro.rows // size, columns // micro.width)
                self._overlapping_columns(inner, tiles, indices, 0, size, columns,
                                          vectors=max(wide, micro.vectors))  # fmt: skip
            return
        if micro.rows > 1:
            rest = builder.insert(arith.RemUIOp(rows, self.bounds[micro.rows])).results[0]
            full = builder.insert(arith.SubiOp(rows, rest)).results[0]
            row, inner = self._loop(builder, 0, full, micro.rows, parallel)
            self._across(inner, tiles, indices, row, micro.rows, columns)
        else:
            full = self.bounds[0]
        row, inner = self._loop(builder, full, rows, 1, parallel)
        self._across(inner, tiles, indices, row, 1, columns)

    def _across(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices,
                row: SSAValue | int, rows: int, columns: int) -> None:  # fmt: skip
        """The blocks of `rows` rows from point `row` of m, across n: where
        the blocks start from a constant (the output's fill absorbed, an
        epilogue applied on store), whole blocks only, the last overlapping
        (`_overlapping_columns`), since the scalar body would neither start
        from the fill nor apply the epilogue; else `_row_blocks`."""
        if self.micro_body.fresh and columns >= self.micro.width:
            self._overlapping_columns(builder, tiles, indices, row, rows, columns)
        else:
            self._row_blocks(builder, tiles, indices, row, rows, columns)

    def _overlapping_blocks(self, builder: LoopNestBuilder, tiles: dict[int, _Tile],
                            indices: _Indices, rows: int, columns: int) -> None:  # fmt: skip
        """Whole blocks only: a dim's last block starts at `extent - size`
        (`arith.minsi` of the block loop's iv), overlapping the one before,
        whose outputs it computes again, from the same constant, to the same
        values: one copy of the kernel. Where the columns past the last whole
        block fit in fewer vectors than a block has (`overlap_vectors`), they
        run as one block of those vectors instead, ending on the last column,
        so that less than a vector is computed twice (196 columns in blocks of
        64: 208 computed instead of 256), at the price of a second copy.
        Fewer columns than a block (a packed panel's last tile) run as one
        block of as many vectors as cover them, its last vector ending on the
        last column (40 columns: vectors at 0, 16 and 24)."""
        micro = self.micro
        row, inner = self._block_loop(builder, micro.m, rows, rows, micro.rows)
        self._overlapping_columns(inner, tiles, indices, row, micro.rows, columns)

    def _overlapping_columns(self, builder: LoopNestBuilder, tiles: dict[int, _Tile],
                             indices: _Indices, row: SSAValue | int, rows: int,
                             columns: int, vectors: int | None = None) -> None:  # fmt: skip
        """The blocks of `rows` rows from point `row` of m across n as
        `_overlapping_blocks` lays them out along n (blocks of `vectors`
        vectors, if given, instead of NR's)."""
        micro = self.micro
        vectors = vectors or micro.vectors
        block = vectors * micro.width
        if columns < block:
            covering = -(-columns // micro.width)
            self._kernel(builder, tiles, indices, row, rows, 0, covering, end=columns)
            return
        spare = overlap_vectors(columns, block, micro.width)
        full = columns // block * block if spare else columns
        column, body = self._block_loop(builder, micro.n, full, columns, block)
        self._kernel(body, tiles, indices, row, rows, column, vectors)
        if spare:
            start = columns - spare * micro.width
            self._kernel(builder, tiles, indices, row, rows, start, spare)

    def _block_loop(self, builder: LoopNestBuilder, dim: int, covered: int, extent: int,
                    size: int) -> tuple[SSAValue, LoopNestBuilder]:  # fmt: skip
        """A loop of blocks of `size` over the first `covered` points of
        `dim`, each block's start; where `covered` is not a multiple of
        `size`, the last block starts at `extent - size` (`arith.minsi`)."""
        start, inner = self._loop(
            builder, 0, -(-covered // size) * size, size, dim in self.parallel
        )
        if covered % size:
            last = self.bounds[extent - size]
            start = inner.insert(arith.MinSIOp(start, last)).results[0]
        return start, inner

    def _row_blocks(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices,
                    row: SSAValue | int, rows: int, columns: int) -> None:  # fmt: skip
        """The blocks of `rows` rows from point `row` of m, across n."""
        micro = self.micro
        full_columns = columns // micro.columns * micro.columns
        if full_columns:
            column, inner = self._loop(builder, 0, full_columns, micro.columns,
                                       micro.n in self.parallel)  # fmt: skip
            self._kernel(inner, tiles, indices, row, rows, column, micro.vectors)
        vectors = (columns - full_columns) // micro.width
        if vectors:
            self._kernel(builder, tiles, indices, row, rows, full_columns, vectors)
        vectorized = full_columns + vectors * micro.width
        if vectorized < columns:
            self._scalar_block(builder, tiles, indices, row, rows, vectorized, columns)

    def _point(self, builder: LoopNestBuilder, dim: int, tiles: dict[int, _Tile],
               base: SSAValue | int, offset: int) -> tuple[SSAValue, SSAValue]:  # fmt: skip
        """The (index, point) of `dim` at point `base + offset` of its tile."""
        if isinstance(base, int):
            point = self.bounds[base + offset]
        elif offset:
            point = builder.binary(arith.AddiOp, base, self.bounds[offset])
        else:
            point = base
        return self._index(builder, tiles.get(dim), point), point

    def _kernel(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices,
                row: SSAValue | int, rows: int, column: SSAValue | int, vectors: int,
                end: int | None = None) -> None:  # fmt: skip
        """The block of `rows` rows from `row` and `vectors` vectors from
        `column` (an int where `end` is given: the last vector then ends
        there, overlapping the one before)."""
        micro = self.micro
        offsets = [j * micro.width for j in range(vectors)]
        if end is not None:
            assert isinstance(column, int)
            offsets[-1] = end - micro.width - column
        row_points = [self._point(builder, micro.m, tiles, row, r) for r in range(rows)]
        column_points = [self._point(builder, micro.n, tiles, column, offset)
                         for offset in offsets]  # fmt: skip

        def cells(at: _Indices) -> list[list[Cell]]:
            return [[self._cell(tiles, {**at, micro.m: r, micro.n: c}) for c in column_points]
                    for r in row_points]  # fmt: skip

        accumulators = self.micro_body.load(builder, cells(indices))
        final = self._reduce(builder, 0, tiles, indices, accumulators, cells)
        self.micro_body.store(builder, cells(indices), final)

    def _reduce(self, builder: LoopNestBuilder, level: int, tiles: dict[int, _Tile],
                indices: _Indices, accumulators: list[SSAValue],
                cells: Callable[[_Indices], list[list[Cell]]]) -> list[SSAValue]:  # fmt: skip
        """The loops of the reduction dims from `level` on, carrying the
        accumulators; returns their values after the loops."""
        if level == len(self.stepped):
            return self.micro_body.step(builder, cells(indices), accumulators)
        dim = self.stepped[level]
        block = Block(arg_types=[IndexType(), *(a.type for a in accumulators)])
        iv, *carried = block.args
        inner = LoopNestBuilder(Builder(InsertPoint.at_end(block)))
        index = self._index(inner, tiles.get(dim), iv)
        results = self._reduce(inner, level + 1, tiles, {**indices, dim: (index, iv)},
                               carried, cells)  # fmt: skip
        block.add_op(scf.YieldOp(*results))
        bounds = self.bounds
        loop = LoopNestBuilder.for_loop(bounds[0], bounds[self._size(dim, tiles)], bounds[1],
                                        accumulators, Region(block))  # fmt: skip
        loop.attributes[NO_UNROLL] = UnitAttr()
        builder.insert(loop)
        return list(loop.results)

    def _scalar_block(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices,
                      row: SSAValue | int, rows: int, first: int, last: int) -> None:  # fmt: skip
        """The scalar body over `rows` rows from `row` and the columns `first`
        to `last` of the n tile: loops m, the reductions, n."""
        micro = self.micro
        ranges = [(micro.m, row, rows)]
        ranges += [(d, 0, self._size(d, tiles)) for d in self.reductions]
        ranges.append((micro.n, first, last - first))
        self._scalar_loops(builder, tiles, indices, ranges)

    def _scalar_loops(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices,
                      ranges: list[tuple[int, SSAValue | int, int]]) -> None:  # fmt: skip
        if not ranges:
            self._body(builder, tiles, indices)
            return
        (dim, base, count), rest = ranges[0], ranges[1:]
        iv, inner = self._loop(builder, 0, count, 1, dim in self.parallel)
        if isinstance(base, int) and base == 0:
            point = iv
        else:
            start = self.bounds[base] if isinstance(base, int) else base
            point = inner.insert(arith.AddiOp(start, iv)).results[0]
        index = self._index(inner, tiles.get(dim), point)
        self._scalar_loops(inner, tiles, {**indices, dim: (index, point)}, rest)


# ------------------------------------------------------------ the pass


def scalar_constant(value: SSAValue, where: str) -> FloatAttr | IntegerAttr:
    """The constant `value` holds: an `arith.constant`, possibly through an
    `arith.bitcast` to an unsigned type (the attribute then has that type).
    Anything else is a diagnostic: `where` (the pass and what the value is)
    "must be a scalar arith.constant"."""
    owner = value.owner
    if isinstance(owner, arith.BitcastOp) and isinstance(value.type, IntegerType):
        bits = scalar_constant(owner.input, where)
        assert isinstance(bits, IntegerAttr)
        return IntegerAttr(bits.value.data % (1 << value.type.width.data), value.type)
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr | IntegerAttr):
        return owner.value
    raise DiagnosticException(f"{where} must be a scalar arith.constant")


def outside_value(op: linalg.GenericOp) -> SSAValue | None:
    """A value the body of `op` uses but neither receives as an argument nor
    defines (the generated loops could not reach it), or None."""
    block = op.body.block
    for scalar_op in block.ops:
        for operand in scalar_op.operands:
            if operand.owner is not block and operand.owner.parent_block() is not block:  # type: ignore[union-attr]
                return operand
    return None


def on_buffers(op: Operation) -> bool:
    """Whether `op` works on memrefs (bufferized), not on tensors."""
    return any(isinstance(v.type, MemRefType) for v in op.operands)


class _Access:
    """Where a memref operand's elements live: the operand itself, or for a
    `memref.subview` with static offsets and strides, its source, each index
    scaled by the stride and shifted by the offset."""

    def __init__(self, buffer: SSAValue):
        self.view = buffer
        self.buffer, self.offsets, self.strides = buffer, None, None
        owner = buffer.owner
        if isinstance(owner, memref.SubviewOp) and not (
            owner.offsets or owner.sizes or owner.strides
        ):
            self.buffer = owner.source
            self.offsets = owner.static_offsets.get_values()
            self.strides = owner.static_strides.get_values()

    def indices(self, body: LoopNestBuilder, indices: Sequence[SSAValue]) -> list[SSAValue]:
        if self.offsets is None or self.strides is None:
            return list(indices)
        folded = []
        for index, offset, stride in zip(indices, self.offsets, self.strides):
            if stride != 1:
                index = body.binary(arith.MuliOp, index, body.index(stride))
            if offset:
                index = body.binary(arith.AddiOp, index, body.index(offset))
            folded.append(index)
        return folded

    def load(self, body: LoopNestBuilder, indices: Sequence[SSAValue]) -> SSAValue:
        return body.load(self.buffer, self.indices(body, indices))

    def unit_stride_last(self) -> bool:
        """Whether consecutive positions of the last dim are adjacent in memory."""
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, MemRefType)
        strides = buffer_type.get_strides()
        if not strides or strides[-1] != 1:
            return False
        return self.strides is None or self.strides[-1] == 1

    def store(self, body: LoopNestBuilder, value: SSAValue, indices: Sequence[SSAValue]) -> None:
        folded = self.indices(body, indices)
        body.store(value, self.buffer, folded)


def _shape(value: SSAValue) -> list[int]:
    value_type = value.type
    assert isinstance(value_type, MemRefType)
    return list(value_type.get_shape())


def _packed_indices(
    dims: Sequence[int], indices: Sequence[SSAValue], points: Sequence[TilePoint | None]
) -> list[SSAValue]:
    """Where an element lies in a packed buffer, for the operand whose
    positions are indexed by `dims`: the tile numbers of its tiled dims, then
    for each dim the position within the tile (the point iv) or, untiled,
    the whole index."""
    tile_numbers = [point[0] for d in dims if (point := points[d]) is not None]
    within = [indices[d] if (point := points[d]) is None else point[1] for d in dims]
    return tile_numbers + within


def _pack(
    nest: LoopNestBuilder,
    source: _Access,
    dims: Sequence[int],
    extents: Sequence[int],
    tiles: Sequence[int],
    calls: Mapping[str, Sequence[CallOp]],
) -> SSAValue:
    """Copies the operand read through `source`, whose positions are indexed
    by the op's `dims` (each of `extents` and `tiles` per dim of the op), into
    a fresh buffer laid out tile by tile (see `ember.dialects.schedule`),
    allocated where the op stands; returns that buffer. The copy is a nest of
    its own over the operand's positions, tiled as the op's dims are, so a
    remainder tile is peeled and the padding past the extent never written.
    A constant operand is packed now instead (`packed_weight`; `calls`, by
    callee, find the weights a kernel function's argument receives)."""
    source_type = source.buffer.type
    assert isinstance(source_type, MemRefType)
    own_extents = [extents[d] for d in dims]
    own_tiles = [tiles[d] for d in dims]
    constant = packed_weight(source.buffer, source.offsets, source.strides, own_extents, own_tiles,
                             calls)  # fmt: skip
    if constant is not None:
        return constant
    tiled = [0 < t < e for t, e in zip(own_tiles, own_extents)]
    shape = [-(-e // t) for t, e, is_tiled in zip(own_tiles, own_extents, tiled) if is_tiled]
    shape += [t if is_tiled else e for t, e, is_tiled in zip(own_tiles, own_extents, tiled)]
    packed = nest.insert(memref.AllocOp([], [], MemRefType(source_type.element_type, shape)))
    hint = source.buffer.name_hint
    packed.results[0].name_hint = f"{hint}_packed" if hint else "packed"
    buffer = packed.results[0]
    positions = list(range(len(dims)))

    def copy(
        body: LoopNestBuilder, ivs: Sequence[SSAValue], points: Sequence[TilePoint | None]
    ) -> None:
        body.store(source.load(body, ivs), buffer, _packed_indices(positions, ivs, points))

    schedule = ScheduleAttr(positions, tiles=own_tiles, parallel=positions)
    generate_loops(
        nest, own_extents, [PARALLEL] * len(dims), schedule, copy, tile_points=set(positions)
    )
    return buffer


class _ContractionBlock:
    """The `MicroBody` of a contraction `out += a * b` (see
    `ember.dialects.schedule.micro_problem`): an operand that depends on n is
    read as a vector (its last index steps by 1 along n), any other one as a
    scalar broadcast to a vector; a read that rows or vectors share is
    emitted once per step; each cell's accumulator takes one `vector.fma`."""

    def __init__(self, micro: MicroKernel, maps: Sequence[AffineMap], product: tuple[int, int],
                 read: Callable[[LoopNestBuilder, int, Cell], SSAValue],
                 read_vector: Callable[[LoopNestBuilder, int, Cell, VectorType], SSAValue],
                 writer: Callable[[], WriteVector],
                 element: Attribute, init: SSAValue | None,
                 widened: Attribute | None = None):  # fmt: skip
        self.product, self.read, self.read_vector = product, read, read_vector
        self.pair_dim: int | None = None
        self.element, self.read_type = element, VectorType(widened or element, [micro.width])
        self.init = init
        self.fresh = init is not None
        self.writer = writer
        self.vector_type = VectorType(element, [micro.width])
        self.on_rows = [map_depends_on(amap, micro.m) for amap in maps]
        self.on_columns = [map_depends_on(amap, micro.n) for amap in maps]
        self.output = len(maps) - 1

    def load(self, builder: LoopNestBuilder, cells: list[list[Cell]]) -> list[SSAValue]:
        count = sum(len(row) for row in cells)
        if self.init is not None:  # the output's fill, absorbed (`absorbed_fill`)
            splat = builder.broadcast(self.init, self.vector_type)
            return [splat] * count
        return [self.read_vector(builder, self.output, cell, self.vector_type)
                for row in cells for cell in row]  # fmt: skip

    def step(self, builder: LoopNestBuilder, cells: list[list[Cell]],
             accumulators: Sequence[SSAValue]) -> list[SSAValue]:  # fmt: skip
        reads: dict[tuple[int, int, int], SSAValue] = {}

        def operand(number: int, r: int, j: int) -> SSAValue:
            key = (number, r if self.on_rows[number] else -1, j if self.on_columns[number] else -1)
            if key not in reads:
                cell = cells[r][j]
                if self.on_columns[number]:
                    read = self.read_vector(builder, number, cell, self.read_type)
                    reads[key] = self._widened(builder, read, self.vector_type)
                else:
                    scalar = self._widened(builder, self.read(builder, number, cell), self.element)
                    reads[key] = builder.broadcast(scalar, self.vector_type)
            return reads[key]

        results: list[SSAValue] = []
        columns = len(cells[0])
        for k, accumulator in enumerate(accumulators):
            r, j = divmod(k, columns)
            a, b = (operand(number, r, j) for number in self.product)
            results.append(builder.fma(a, b, accumulator))
        return results

    def _widened(self, builder: LoopNestBuilder, value: SSAValue, to: Attribute) -> SSAValue:
        """`value` as read, or widened to `to` (`arith.extf`) where the
        operands are narrower than the accumulators (`f16_product`)."""
        if value.type == to:
            return value
        return builder.insert(arith.ExtFOp(value, to)).results[0]

    def store(self, builder: LoopNestBuilder, cells: list[list[Cell]],
              accumulators: Sequence[SSAValue]) -> None:  # fmt: skip
        write = self.writer()
        for cell, accumulator in zip((c for row in cells for c in row), accumulators):
            write(builder, accumulator, cell)


class _PairsBlock(_ContractionBlock):
    """The `MicroBody` of a sum of bfloat16 pairs (`BF16Pairs`): its
    accumulators load and store as a contraction's; each step (one k: both
    elements of the pair dim) reads a row's pair as one 32-bit word
    broadcast to every lane and each vector's 2W column elements, and takes
    one `loop.bf16_dot` per accumulator."""

    def __init__(self, micro: MicroKernel, maps: Sequence[AffineMap], pairs: BF16Pairs,
                 read: Callable[[LoopNestBuilder, int, Cell], SSAValue],
                 read_vector: Callable[[LoopNestBuilder, int, Cell, VectorType], SSAValue],
                 writer: Callable[[], WriteVector], init: SSAValue | None):  # fmt: skip
        super().__init__(micro, maps, (pairs.row, pairs.column), read, read_vector, writer, f32,
                         init)  # fmt: skip
        self.pairs, self.pair_dim = pairs, pairs.pair
        self.pair_type = VectorType(bf16, [2 * micro.width])

    def step(self, builder: LoopNestBuilder, cells: list[list[Cell]],
             accumulators: Sequence[SSAValue]) -> list[SSAValue]:  # fmt: skip
        width = self.vector_type.get_shape()[0]
        rows = [self._broadcast_pair(builder, row[0], width) for row in cells]
        columns = [self.read_vector(builder, self.pairs.column, cell, self.pair_type)
                   for cell in cells[0]]  # fmt: skip
        results: list[SSAValue] = []
        for k, accumulator in enumerate(accumulators):
            r, j = divmod(k, len(columns))
            results.append(builder.insert(Bf16DotOp(accumulator, rows[r], columns[j])).results[0])
        return results

    def _broadcast_pair(self, builder: LoopNestBuilder, cell: Cell, width: int) -> SSAValue:
        pair = self.read_vector(builder, self.pairs.row, cell, VectorType(bf16, [2]))
        word = builder.insert(vector.BitcastOp(pair, VectorType(i32, [1]))).results[0]
        mask = DenseArrayBase.from_list(i64, [0] * width)
        words = builder.insert(
            vector.ShuffleOp(word, word, mask, result_type=VectorType(i32, [width]))
        )
        return builder.insert(vector.BitcastOp(words.results[0], self.pair_type)).results[0]


def _pairs_in_place(space: IterationSpace, accesses: Sequence[_Access],
                    packed: Mapping[int, object]) -> bool:  # fmt: skip
    """Whether the op is a sum of bfloat16 pairs whose operands a `_PairsBlock`
    can read: the row's pair adjacent in memory (the row operand is never
    packed), the column's (n, p) elements too (packed, or so laid out)."""
    pairs = space.bf16_pairs
    if pairs is None or pairs.row in packed:
        return False
    if not accesses[pairs.row].unit_stride_last():
        return False
    if pairs.column in packed:  # a fresh buffer, (n, p) its innermost within-tile dims
        return True
    column = accesses[pairs.column]
    if not column.unit_stride_last() or column.strides is not None:
        return False
    strides = column.buffer.type.get_strides()  # type: ignore[attr-defined]
    return strides is not None and len(strides) >= 2 and strides[-2] == 2


def _vector_columns(op: linalg.GenericOp, micro: MicroKernel, packed: AbstractSet[int]) -> bool:
    """Whether every operand that depends on n can be read as vectors: packed,
    or a buffer whose last dim has unit stride. Bufferization can make one
    strided along n (a strided subview): such an op keeps scalar loops."""
    operands = (*op.inputs, *op.outputs)
    for i, amap in enumerate(indexing_maps(op)):
        on_columns = map_depends_on(amap, micro.n)
        if on_columns and i not in packed and not _Access(operands[i]).unit_stride_last():
            return False
    return True


def absorbed_fill(op: Operation) -> linalg.FillOp | None:
    """The `linalg.fill` of a constant just before `op` into `op`'s output,
    when `op` is a contraction whose micro-kernels write every output element
    (`writes_whole_output`). Its blocks then start their accumulators at the
    fill's value instead of loading them, and the fill is not emitted: each
    output element is written once instead of three times (filled, loaded,
    stored)."""
    fill = _preceding_fill(op)
    return fill if fill is not None and writes_whole_output(op, filled=True) else None


def _preceding_fill(op: Operation) -> linalg.FillOp | None:
    """The `linalg.fill` just before `op` into `op`'s one output, if any;
    ops between that a target's generator runs elsewhere (`KernelSchedule`)
    and that do not touch that output are passed over."""
    if not isinstance(op, STRUCTURED_OPS) or len(op.outputs) != 1:
        return None
    fill = op.prev_op
    while _runs_elsewhere(fill, op.outputs[0]):
        fill = fill.prev_op  # type: ignore[union-attr]
    if not isinstance(fill, linalg.FillOp) or fill.outputs[0] is not op.outputs[0]:
        return None
    return fill


def _runs_elsewhere(op: Operation | None, buffer: SSAValue) -> bool:
    """Whether `op` is a structured op other than a fill that a target's
    generator runs (`KernelSchedule`: a GPU contraction's padding, in its
    loads) and that does not touch `buffer`."""
    return (op is not None and not isinstance(op, linalg.FillOp) and has_kernel_schedule(op)
            and buffer not in op.operands)  # fmt: skip


def writes_whole_output(op: Operation, filled: bool) -> bool:
    """Whether `op` is a contraction on buffers that runs as micro-kernels
    whose blocks hold every output element's final value when they store it:
    no column left to the scalar body (each n tile holds at least one block,
    or whole vectors, or, where the blocks start from the output's fill
    (`filled`: they may overlap), at least a vector), no reduction dim
    tiled (so each output element gets all its terms in one block), operands
    readable as vectors."""
    if not isinstance(op, STRUCTURED_OPS) or not on_buffers(op) or has_kernel_schedule(op):
        return False
    if not isinstance(op, linalg.LinalgStructuredOperation) or len(op.outputs) != 1:
        return False
    space = iteration_space(op)
    schedule = op_schedule(op, space)
    micro = schedule.micro_kernel
    if micro is None or (space.multiplied is None and space.bf16_pairs is None):
        return False
    tiles, extents = schedule.tile_sizes, space.extents
    if any(0 < tiles[d] < extents[d] for d, kind in enumerate(space.iterators) if kind != PARALLEL):
        return False
    n_tile, n_extent = tiles[micro.n], extents[micro.n]
    columns = [n_tile, n_extent % n_tile] if 0 < n_tile < n_extent else [n_extent]
    narrowest = micro.width if filled else micro.columns
    if any(c % micro.width and c < narrowest for c in columns):
        return False
    generic = op if isinstance(op, linalg.GenericOp) else generalize(op)  # type: ignore[arg-type]
    try:
        return _vector_columns(generic, micro, set(schedule.packed_operands))
    finally:
        if generic is not op:
            generic.erase()


def _emit_generic(
    nest: LoopNestBuilder,
    op: linalg.GenericOp,
    schedule: ScheduleAttr,
    where: str,
    init: SSAValue | None = None,
    epilogue: Epilogue | None = None,
    calls: Mapping[str, Sequence[CallOp]] | None = None,
) -> None:
    """The loops of a generic on buffers, as `schedule` orders them, after
    the copies of the operands it packs; with `epilogue`, its micro-kernel
    blocks store the epilogue's values into the epilogue's output. `calls`
    (by callee) are the module's calls, where a packed operand may be a
    kernel function's argument (`packed_weight`)."""
    outside = outside_value(op)
    if outside is not None:
        name = f"%{outside.name_hint}" if outside.name_hint else "a value"
        raise DiagnosticException(
            f"loop-generate: the body of {where} uses {name}, defined outside it"
        )
    maps = indexing_maps(op)
    inputs = len(op.inputs)
    block = op.body.block
    accesses = [_Access(v) for v in (*op.inputs, *op.outputs)]
    outputs = accesses[inputs:]
    used = [bool(arg.uses) for arg in block.args]
    space = iteration_space(op)
    # An operand the body never reads has nothing to pack.
    packed: dict[int, tuple[list[int], SSAValue]] = {}
    for i in schedule.packed_operands:
        if used[i]:
            dims = [e.position for e in maps[i].results if isinstance(e, AffineDimExpr)]
            buffer = _pack(nest, accesses[i], dims, space.extents, schedule.tile_sizes,
                           calls or {})  # fmt: skip
            packed[i] = (dims, buffer)
    packed_dims = {d for dims, _ in packed.values() for d in dims}

    def indices_of(body: LoopNestBuilder, i: int, cell: Cell) -> tuple[SSAValue, list[SSAValue]]:
        """The buffer operand `i` is read from at `cell`, and where."""
        ivs, points = cell
        if i in packed:
            dims, buffer = packed[i]
            return buffer, _packed_indices(dims, ivs, points)
        access = accesses[i]
        return access.buffer, access.indices(body, [body.affine(e, ivs) for e in maps[i].results])

    def read(body: LoopNestBuilder, i: int, cell: Cell) -> SSAValue:
        return body.load(*indices_of(body, i, cell))

    micro = schedule.micro_kernel
    # Operands read at steps of 2 along the micro-kernel's n (a stride-2 input).
    strided = {i for i, amap in enumerate(maps) if i not in packed and micro is not None
               and read_stride(amap, micro.n) == 2}  # fmt: skip

    def read_vector(body: LoopNestBuilder, i: int, cell: Cell, vector_type: VectorType) -> SSAValue:
        if i in strided:
            return _read_even_lanes(body, accesses[i], maps[i], cell[0], vector_type)
        buffer, indices = indices_of(body, i, cell)
        return body.vector_load(buffer, indices, vector_type)

    def write_vector(body: LoopNestBuilder, value: SSAValue, cell: Cell) -> None:
        buffer, indices = indices_of(body, inputs, cell)
        body.vector_store(value, buffer, indices)

    micro_body: MicroBody | None = None
    contraction = space.multiplied is not None or _pairs_in_place(space, accesses, packed)
    if micro is not None and contraction and _vector_columns(op, micro, set(packed)):
        element = _element_type(op.outputs[0])
        vector_type = VectorType(element, [micro.width])

        def writer() -> WriteVector:
            """What stores one block's accumulators: straight into the
            output, or through a fresh `EpilogueBlock` (its reads are the
            block's own) into the epilogue's output."""
            if epilogue is None:
                return write_vector
            applied = EpilogueBlock(epilogue, vector_type, _load, _load_vector)
            target = _Access(epilogue.output)

            def write(body: LoopNestBuilder, value: SSAValue, cell: Cell) -> None:
                result = applied.apply(body, cell[0], value)
                indices = target.indices(body, applied.indices(cell[0]))
                body.vector_store(result, target.buffer, indices)

            return write

        if space.bf16_pairs is not None:
            micro_body = _PairsBlock(micro, maps, space.bf16_pairs, read, read_vector, writer, init)
        else:
            assert space.multiplied is not None
            widened = f16 if space.f16_product is not None else None
            micro_body = _ContractionBlock(micro, maps, space.multiplied, read, read_vector,
                                           writer, element, init, widened)  # fmt: skip
    else:
        assert epilogue is None, "an epilogue needs the micro-kernel's blocks"

    def emit_body(
        body: LoopNestBuilder, ivs: Sequence[SSAValue], points: Sequence[TilePoint | None]
    ) -> None:
        mapping: dict[SSAValue, SSAValue] = {}
        for i, (arg, amap) in enumerate(zip(block.args, maps)):
            if i in packed:
                dims, buffer = packed[i]
                mapping[arg] = body.load(buffer, _packed_indices(dims, ivs, points))
            elif used[i]:
                mapping[arg] = accesses[i].load(body, [body.affine(e, ivs) for e in amap.results])
        for scalar_op in block.ops:
            if isinstance(scalar_op, linalg.YieldOp):
                for value, access, amap in zip(scalar_op.arguments, outputs, maps[inputs:]):
                    indices = [body.affine(e, ivs) for e in amap.results]
                    access.store(body, mapping.get(value, value), indices)
            elif isinstance(scalar_op, linalg.IndexOp):
                mapping[scalar_op.result] = ivs[scalar_op.dim.value.data]
            else:
                clone = scalar_op.clone(value_mapper=mapping)
                body.insert(clone)
                mapping.update(zip(scalar_op.results, clone.results))

    extents = run_time_extents(op, space.extents, nest)
    generate_loops(nest, extents, space.iterators, schedule, emit_body,
                   tile_points=packed_dims, micro_body=micro_body)  # fmt: skip


def run_time_extents(op: linalg.GenericOp, extents: Sequence[int],
                     nest: LoopNestBuilder) -> list[Bound]:  # fmt: skip
    """`extents` with each dynamic one replaced by the size of an operand dim
    that its indexing map reads as that loop dim (`buffer_size`)."""
    maps = indexing_maps(op)
    operands = [*op.inputs, *op.outputs]
    result: list[Bound] = list(extents)
    for d, extent in enumerate(extents):
        if extent != DYNAMIC_INDEX:
            continue
        for operand, amap in zip(operands, maps):
            at = [p for p, e in enumerate(amap.results)
                  if isinstance(e, AffineDimExpr) and e.position == d]  # fmt: skip
            if at:
                result[d] = buffer_size(_Access(operand).view, at[0], nest.builder)
                break
        else:
            raise DiagnosticException(
                f"loop-generate: no operand of {op.name} gives the run-time extent of d{d}"
            )
    return result


def _read_even_lanes(body: LoopNestBuilder, access: _Access, amap: AffineMap,
                     ivs: Sequence[SSAValue], vector_type: VectorType) -> SSAValue:  # fmt: skip
    """The W elements at steps of 2 from the one `amap` gives at `ivs`
    (stride-2 reads along n): a vector load there and one W - 1 elements
    further, whose even and odd lanes hold them. The second load ends on the
    last element used, so nothing past the operand's extent is read."""
    width = vector_type.get_shape()[0]
    *outer, last = [body.affine(e, ivs) for e in amap.results]
    further = body.insert(arith.AddiOp(last, body.index(width - 1))).results[0]
    first, second = (body.vector_load(access.buffer, access.indices(body, [*outer, at]), vector_type)
                     for at in (last, further))  # fmt: skip
    half = width // 2
    lanes = [2 * j for j in range(half)] + [width + 2 * j + 1 for j in range(width - half)]
    mask = DenseArrayBase.from_list(i64, lanes)
    return body.insert(vector.ShuffleOp(first, second, mask, result_type=vector_type)).results[0]


def _load(body: LoopNestBuilder, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    return _Access(buffer).load(body, indices)


def _load_vector(body: LoopNestBuilder, buffer: SSAValue, indices: Sequence[SSAValue],
                 vector_type: VectorType) -> SSAValue:  # fmt: skip
    access = _Access(buffer)
    return body.vector_load(access.buffer, access.indices(body, indices), vector_type)


def _element_type(buffer: SSAValue) -> Attribute:
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    return buffer_type.element_type


def _elementwise_nest(
    nest: LoopNestBuilder, shape: Sequence[Bound]
) -> tuple[list[SSAValue], LoopNestBuilder]:
    ivs, inner = nest.nest(shape, [True] * len(shape))
    return ivs, LoopNestBuilder(inner)


def _emit_fill(nest: LoopNestBuilder, op: linalg.FillOp) -> None:
    value = scalar_constant(op.inputs[0], "loop-generate: the value of linalg.fill")
    target = _Access(op.outputs[0])
    ivs, body = _elementwise_nest(nest, buffer_shape(op.outputs[0], nest.builder))
    target.store(body, body.constant(value), ivs)


def _emit_copy(nest: LoopNestBuilder, op: linalg.CopyOp) -> None:
    source, target = _Access(op.inputs[0]), _Access(op.outputs[0])
    ivs, body = _elementwise_nest(nest, buffer_shape(op.outputs[0], nest.builder))
    target.store(body, source.load(body, ivs), ivs)


class _Addressing:
    """The index values of a gather's or scatter's point, as loop-level IR:
    each loaded through its index map, made non-negative (a negative index
    counts from the end) and clamped to its axis of the addressed buffer,
    plus whether every one was in range before the clamp."""

    def __init__(self, nest: LoopNestBuilder, op: GatherOp | ScatterOp, addressed: SSAValue):
        self.index_maps, self.data_map = op.maps()
        self.indices = _Access(op.indices)
        axes = addressed_axes(self.data_map)
        self.extents = [buffer_size(addressed, axes[j], nest.builder)
                        for j in range(len(self.index_maps))]  # fmt: skip
        self.lasts = [extent - 1 if isinstance(extent, int) else
                      nest.insert(arith.SubiOp(extent, nest.index(1))).results[0]
                      for extent in self.extents]  # fmt: skip
        self.checked = isinstance(op, ScatterOp)

    def element(
        self, body: LoopNestBuilder, ivs: Sequence[SSAValue]
    ) -> tuple[list[SSAValue], SSAValue | None]:
        """(the addressed element's indices, for a scatter whether the point's
        index values were all in range)."""
        zero = body.index(0)
        values: list[SSAValue] = []
        in_range: SSAValue | None = None
        for amap, extent, last in zip(self.index_maps, self.extents, self.lasts):
            raw = self.indices.load(body, [body.affine(e, ivs) for e in amap.results])
            index = body.insert(arith.IndexCastOp(raw, IndexType())).results[0]
            size = body.bound(extent)
            negative = body.insert(arith.CmpiOp(index, zero, "slt")).results[0]
            wrapped = body.insert(arith.AddiOp(index, size)).results[0]
            index = body.insert(arith.SelectOp(negative, wrapped, index)).results[0]
            if self.checked:
                inside = body.insert(arith.CmpiOp(index, size, "ult")).results[0]
                in_range = inside if in_range is None else (
                    body.insert(arith.AndIOp(in_range, inside)).results[0])  # fmt: skip
            index = body.insert(arith.MaxSIOp(index, zero)).results[0]
            values.append(body.insert(arith.MinSIOp(index, body.bound(last))).results[0])
        element = [values[e.position] if isinstance(e, AffineSymExpr) else body.affine(e, ivs)
                   for e in self.data_map.results]  # fmt: skip
        return element, in_range


def _emit_gather(nest: LoopNestBuilder, op: GatherOp) -> None:
    """One nest over the result; each point reads the element its clamped
    index values address."""
    data, target = _Access(op.data), _Access(op.destination)
    addressing = _Addressing(nest, op, op.data)
    ivs, body = _elementwise_nest(nest, buffer_shape(op.destination, nest.builder))
    element, _ = addressing.element(body, ivs)
    target.store(body, data.load(body, element), ivs)


def _emit_scatter(nest: LoopNestBuilder, op: ScatterOp) -> None:
    """One sequential nest over the updates (repeated targets combine in
    order); each point combines its update with the element it addresses
    and stores the result there, or stores the element back unchanged where
    an index was out of range (no branch, and no write outside the target)."""
    updates, target = _Access(op.updates), _Access(op.target)
    addressing = _Addressing(nest, op, op.target)
    shape = buffer_shape(op.updates, nest.builder)
    ivs, inner = nest.nest(shape, [False] * len(shape))
    body = LoopNestBuilder(inner)
    element, in_range = addressing.element(body, ivs)
    assert in_range is not None
    current = target.load(body, element)
    block = op.combine.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, (updates.load(body, ivs), current)))
    for scalar_op in block.ops:
        if isinstance(scalar_op, linalg.YieldOp):
            combined = mapping.get(scalar_op.arguments[0], scalar_op.arguments[0])
            kept = body.insert(arith.SelectOp(in_range, combined, current)).results[0]
            target.store(body, kept, element)
        else:
            clone = scalar_op.clone(value_mapper=mapping)
            body.insert(clone)
            mapping.update(zip(scalar_op.results, clone.results))


_DEAD_WITH_THE_OP = (memref.SubviewOp, memref.AllocOp, arith.ConstantOp, arith.BitcastOp, WeightOp)
"""What an op on buffers may leave unused once lowered (see the module docstring)."""


def _generate(
    op: Operation, rewriter: PatternRewriter, emit: Callable[[LoopNestBuilder], None]
) -> None:
    """Replaces `op` by what `emit` builds before it, then erases the
    operand producers nothing uses any more."""
    emit(LoopNestBuilder(Builder(InsertPoint.before(op)), op.location))
    _erase_with_operands(op, rewriter)


def _erase_with_operands(op: Operation, rewriter: PatternRewriter) -> None:
    """Erases `op`, then the producers of its operands that nothing else uses."""
    operands = list(op.operands)
    rewriter.erase(op)
    _erase_unused(operands, rewriter.erase)


def _erase_unused(values: Sequence[SSAValue], erase: Callable[[Operation], None]) -> None:
    """Erases (with `erase`) the producers of `values` (`_DEAD_WITH_THE_OP`)
    that nothing uses, and theirs in turn."""
    for value in values:
        owner = value.owner
        while isinstance(owner, _DEAD_WITH_THE_OP) and not any(r.uses for r in owner.results):
            sources = list(owner.operands)
            erase(owner)
            owner = sources[0].owner if sources else None


class GenerateStructuredLoops(RewritePattern):
    """A generic, matmul or convolution on buffers becomes its scheduled
    nest; a contraction marked with an epilogue (`EPILOGUE_ATTR`) applies it
    in its micro-kernels. `calls` are the module's calls by callee."""

    def __init__(self, calls: Mapping[str, Sequence[CallOp]] | None = None):
        self.calls = calls or {}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        if not on_buffers(op) or has_kernel_schedule(op):
            return  # a target's own generator takes an op with its kernel schedule
        space = iteration_space(op)
        schedule = op_schedule(op, space)
        where = describe(op)
        fill = absorbed_fill(op)
        init = fill.inputs[0] if fill is not None else None
        epilogue = marked_epilogue(op, where)
        if epilogue is not None:
            _allocate_before(epilogue.output, op, rewriter)
        if isinstance(op, linalg.GenericOp):
            _generate(op, rewriter,
                      lambda nest: _emit_generic(nest, op, schedule, where, init, epilogue,
                                                 self.calls))  # fmt: skip
        else:
            generic = generalize(op)
            try:
                nest = LoopNestBuilder(Builder(InsertPoint.before(op)), op.location)
                _emit_generic(nest, generic, schedule, where, init, epilogue, self.calls)
            finally:
                generic.erase()  # never inserted: drops its operand uses
            _erase_with_operands(op, rewriter)
        if fill is not None:
            rewriter.erase(fill)
        if epilogue is not None:
            intermediates = epilogue.intermediates
            for applied in epilogue.generics:
                rewriter.erase(applied)
            for buffer in intermediates:
                if isinstance(buffer.owner, memref.AllocOp) and not buffer.uses:
                    rewriter.erase(buffer.owner)


def _allocate_before(buffer: SSAValue, op: Operation, rewriter: PatternRewriter) -> None:
    """Moves the `memref.alloc` of `buffer` before `op` when it comes after:
    the blocks of `op` store into it."""
    alloc = buffer.owner
    if isinstance(alloc, memref.AllocOp) and op.is_before_in_block(alloc):
        alloc.detach()
        rewriter.insert(alloc, InsertPoint.before(op))


def fused_epilogue(op: Operation, limit: int | None = None) -> Epilogue | None:
    """The epilogue (at most `limit` generics) that `op`'s micro-kernels can
    apply before they store (`ember.passes.loop.epilogue`), or None."""
    if not writes_whole_output(op, filled=_preceding_fill(op) is not None):
        return None
    return find_epilogue(op, _vector_readable, limit)


def epilogue_chain(op: Operation) -> Epilogue | None:
    """The generics after `op` that are an epilogue by their own shape (the
    chain `fused_epilogue` takes once `op` runs as micro-kernels that write
    its whole output), whatever `op`'s schedule: what a tuning task holds
    with the op (`ember.targets.cpu.schedule.tasks`)."""
    return find_epilogue(op, _vector_readable)


def _vector_readable(buffer: SSAValue) -> bool:
    """Whether a block can read `buffer` as vectors along its last dim."""
    return _Access(buffer).unit_stride_last()


def preceding_fill(op: Operation) -> linalg.FillOp | None:
    """The `linalg.fill` just before `op` into its one output, if any."""
    return _preceding_fill(op)


def marked_epilogue(op: Operation, where: str) -> Epilogue | None:
    """The epilogue `op`'s `EPILOGUE_ATTR` asks for (None without one); a
    diagnostic when the generics after `op` do not make one that long."""
    mark = op.attributes.get(EPILOGUE_ATTR)
    if mark is None:
        return None
    wanted = mark.value.data if isinstance(mark, IntegerAttr) else 0
    epilogue = fused_epilogue(op, wanted)
    found = len(epilogue.generics) if epilogue is not None else 0
    if wanted < 1 or found < wanted:
        raise DiagnosticException(
            f"loop-generate: {where}'s {EPILOGUE_ATTR} = {mark} does not fit: "
            f"{found} elementwise generics after it can run in its micro-kernels"
        )
    return epilogue


class GenerateFillLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.FillOp, rewriter: PatternRewriter) -> None:
        consumer = op.next_op
        while _runs_elsewhere(consumer, op.outputs[0]):
            consumer = consumer.next_op  # type: ignore[union-attr]
        if consumer is not None and absorbed_fill(consumer) is op:
            return  # the contraction after it starts from its value
        if (
            consumer is not None
            and has_kernel_schedule(consumer)
            and _preceding_fill(consumer) is op
        ):
            return  # left with the op to its target's generator, which may start from it
        if on_buffers(op) and not has_kernel_schedule(op):
            _generate(op, rewriter, lambda nest: _emit_fill(nest, op))


class GenerateCopyLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.CopyOp, rewriter: PatternRewriter) -> None:
        if on_buffers(op) and not has_kernel_schedule(op):
            _generate(op, rewriter, lambda nest: _emit_copy(nest, op))


class GenerateGatherLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GatherOp, rewriter: PatternRewriter) -> None:
        if on_buffers(op):
            _generate(op, rewriter, lambda nest: _emit_gather(nest, op))


class GenerateScatterLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScatterOp, rewriter: PatternRewriter) -> None:
        if on_buffers(op):
            _generate(op, rewriter, lambda nest: _emit_scatter(nest, op))


class LoopGeneratePass(ModulePass):
    """Replaces every structured op on buffers (`linalg.generic`/`matmul`/
    `conv_2d_nchw_fchw`/`fill`/`copy`, `ember_linalg.gather`/`scatter`) by loops: the
    nest of its schedule, or of the default. Ops on tensors, and ops whose
    schedule a target's own generator obeys (`KernelSchedule`), are left alone.
    A contraction marked with `loop.epilogue = N` (`loop-fuse-epilogues`)
    applies the N elementwise generics after it to its micro-kernels'
    accumulators (`ember.passes.loop.epilogue`)."""

    name = "loop-generate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        structured = GenerateStructuredLoops(calls_by_callee(op))
        patterns = GreedyRewritePatternApplier([structured, GenerateFillLoops(),
                                                GenerateCopyLoops(), GenerateGatherLoops(),
                                                GenerateScatterLoops()])  # fmt: skip
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
        drop_unused_arguments(op, lambda values: _erase_unused(values, Rewriter.erase_op))


__all__ = ["BodyEmitter", "LoopGeneratePass", "epilogue_chain", "fused_epilogue", "generate_loops",
           "on_buffers", "outside_value", "preceding_fill", "scalar_constant"]  # fmt: skip
