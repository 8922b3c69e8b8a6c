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

Ops still on tensors are left alone. An op inside a `loop.kernel` becomes
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
  constant in a peeled remainder), handed to the body with the point iv.

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

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_linalg import GatherOp, generalize, indexing_maps
from ember.dialects.loop_nests import LoopNestBuilder
from ember.dialects.schedule import (
    PARALLEL,
    VECTOR_WIDTH,
    ScheduleAttr,
    StructuredOp,
    describe,
    iteration_space,
    op_schedule,
)

TilePoint = tuple[SSAValue, SSAValue]
"""Where a tiled dim's index lies: (the tile's number, the position within
the tile, i.e. the point iv)."""

BodyEmitter = Callable[[LoopNestBuilder, Sequence[SSAValue], Sequence[TilePoint | None]], None]
"""Emits one copy of the body at a builder, given the index of each dim (in
dim order) and, when `generate_loops` is asked for them, each tiled dim's
`TilePoint` (None for an untiled dim, and for every dim when not asked)."""


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
    extents: Sequence[int],
    iterators: Sequence[str],
    schedule: ScheduleAttr,
    emit_body: BodyEmitter,
    *,
    tile_points: AbstractSet[int] = frozenset(),
) -> None:
    """Emits at `nest` the loops `schedule` describes over `extents` (see the
    module docstring), calling `emit_body` for each copy of the body. For
    the dims in `tile_points`, each tile loop also computes its tile's number
    (`arith.divui` of its iv by the tile, at the top of its body) and
    `emit_body` gets the `TilePoint` of the dim when tiled; the nest of other
    dims holds nothing but the loops and the dims' indices. The schedule must fit
    (`ember.dialects.schedule.verify_schedule`)."""
    assert len(extents) == len(iterators) == len(schedule.loop_order), "schedule does not fit"
    if not extents:
        # A 0-d space still gets its one-iteration loop (see LoopNestBuilder.nest).
        _, inner = nest.nest([], [])
        emit_body(LoopNestBuilder(inner), [], [])
        return
    bounds = _Bounds(nest, [extents[d] for d in schedule.loop_order])
    _NestEmitter(extents, schedule, emit_body, bounds, tile_points).emit(nest, 0, {}, {})


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


_Indices = dict[int, tuple[SSAValue, SSAValue]]
"""The dims already looped over: each dim's (index, point iv)."""


class _NestEmitter:
    """The recursion of `generate_loops`: one level per loop of the nest,
    tile loops first. The state passed down is the current `_Tile` of each
    tiled dim and the index and point iv of the dims already looped over."""

    def __init__(
        self,
        extents: Sequence[int],
        schedule: ScheduleAttr,
        emit_body: BodyEmitter,
        bounds: _Bounds,
        tile_points: AbstractSet[int],
    ):
        self.extents = list(extents)
        self.bounds = bounds
        self.tiles = schedule.tile_sizes
        self.parallel = set(schedule.parallel_dims)
        self.unroll = schedule.unroll_factor
        self.vector = schedule.vector_width
        self.emit_body = emit_body
        self.tile_points = tile_points
        order = schedule.loop_order
        tiled = [d for d in order if 0 < self.tiles[d] < self.extents[d]]
        self.levels = [(d, True) for d in tiled] + [(d, False) for d in order]

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

    def _size(self, dim: int, tiles: dict[int, _Tile]) -> int:
        """The trip count of the dim's point loop."""
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
        self, builder: LoopNestBuilder, lower: int, upper: int, step: int, parallel: bool
    ) -> tuple[SSAValue, LoopNestBuilder]:
        bounds = self.bounds
        return builder.loop(bounds[lower], bounds[upper], bounds[step], parallel=parallel)

    def _body(self, builder: LoopNestBuilder, tiles: dict[int, _Tile], indices: _Indices) -> None:
        dims = range(len(self.extents))
        points: list[TilePoint | None] = [None] * len(self.extents)
        for d, tile in tiles.items():
            number = tile.number
            if number is not None:
                points[d] = (
                    self.bounds[number] if isinstance(number, int) else number,
                    indices[d][1],
                )
        self.emit_body(builder, [indices[d][0] for d in dims], points)

    @staticmethod
    def _index(builder: LoopNestBuilder, tile: _Tile | None, point: SSAValue) -> SSAValue:
        """The dim's index: the point iv, plus the tile offset when tiled."""
        if tile is None:
            return point
        offset = tile.offset
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
                index = body.insert(arith.MuliOp(index, body.index(stride))).results[0]
            if offset:
                index = body.insert(arith.AddiOp(index, body.index(offset))).results[0]
            folded.append(index)
        return folded

    def load(self, body: LoopNestBuilder, indices: Sequence[SSAValue]) -> SSAValue:
        return body.load(self.buffer, self.indices(body, indices))

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
) -> SSAValue:
    """Copies the operand read through `source`, whose positions are indexed
    by the op's `dims` (each of `extents` and `tiles` per dim of the op), into
    a fresh buffer laid out tile by tile (see `ember.dialects.schedule`),
    allocated where the op stands; returns that buffer. The copy is a nest of
    its own over the operand's positions, tiled as the op's dims are, so a
    remainder tile is peeled and the padding past the extent never written."""
    source_type = source.buffer.type
    assert isinstance(source_type, MemRefType)
    own_extents = [extents[d] for d in dims]
    own_tiles = [tiles[d] for d in dims]
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


def _emit_generic(
    nest: LoopNestBuilder, op: linalg.GenericOp, schedule: ScheduleAttr, where: str
) -> None:
    """The loops of a generic on buffers, as `schedule` orders them, after
    the copies of the operands it packs."""
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
            buffer = _pack(nest, accesses[i], dims, space.extents, schedule.tile_sizes)
            packed[i] = (dims, buffer)
    packed_dims = {d for dims, _ in packed.values() for d in dims}

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

    generate_loops(nest, space.extents, space.iterators, schedule, emit_body,
                   tile_points=packed_dims)  # fmt: skip


def _elementwise_nest(
    nest: LoopNestBuilder, shape: Sequence[int]
) -> tuple[list[SSAValue], LoopNestBuilder]:
    ivs, inner = nest.nest(shape, [True] * len(shape))
    return ivs, LoopNestBuilder(inner)


def _emit_fill(nest: LoopNestBuilder, op: linalg.FillOp) -> None:
    value = scalar_constant(op.inputs[0], "loop-generate: the value of linalg.fill")
    target = _Access(op.outputs[0])
    ivs, body = _elementwise_nest(nest, _shape(op.outputs[0]))
    target.store(body, body.constant(value), ivs)


def _emit_copy(nest: LoopNestBuilder, op: linalg.CopyOp) -> None:
    source, target = _Access(op.inputs[0]), _Access(op.outputs[0])
    ivs, body = _elementwise_nest(nest, _shape(op.outputs[0]))
    target.store(body, source.load(body, ivs), ivs)


def _emit_gather(nest: LoopNestBuilder, op: GatherOp) -> None:
    """One nest over the result; the index is loaded, made non-negative and
    clamped to the axis before data is read."""
    data, indices, target = _Access(op.data), _Access(op.indices), _Access(op.destination)
    axis, rank = op.axis.value.data, len(_shape(op.indices))
    extent = _shape(op.data)[axis]
    ivs, body = _elementwise_nest(nest, _shape(op.destination))
    raw = indices.load(body, ivs[axis : axis + rank])
    index = body.insert(arith.IndexCastOp(raw, IndexType())).results[0]
    zero = body.index(0)
    negative = body.insert(arith.CmpiOp(index, zero, "slt")).results[0]
    wrapped = body.insert(arith.AddiOp(index, body.index(extent))).results[0]
    index = body.insert(arith.SelectOp(negative, wrapped, index)).results[0]
    index = body.insert(arith.MaxSIOp(index, zero)).results[0]
    index = body.insert(arith.MinSIOp(index, body.index(extent - 1))).results[0]
    target.store(body, data.load(body, [*ivs[:axis], index, *ivs[axis + rank :]]), ivs)


_DEAD_WITH_THE_OP = (memref.SubviewOp, memref.AllocOp, arith.ConstantOp, arith.BitcastOp)
"""What an op on buffers may leave unused once lowered (see the module docstring)."""


def _generate(
    op: Operation, rewriter: PatternRewriter, emit: Callable[[LoopNestBuilder], None]
) -> None:
    """Replaces `op` by what `emit` builds before it, then erases the
    operand producers nothing uses any more."""
    emit(LoopNestBuilder(Builder(InsertPoint.before(op))))
    operands = list(op.operands)
    rewriter.erase(op)
    for operand in operands:
        owner = operand.owner
        while isinstance(owner, _DEAD_WITH_THE_OP) and not any(r.uses for r in owner.results):
            sources = list(owner.operands)
            rewriter.erase(owner)
            owner = sources[0].owner if sources else None


class GenerateStructuredLoops(RewritePattern):
    """A generic, matmul or convolution on buffers becomes its scheduled nest."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        if not on_buffers(op):
            return
        space = iteration_space(op)
        schedule = op_schedule(op, space)
        where = describe(op)
        if isinstance(op, linalg.GenericOp):
            _generate(op, rewriter, lambda nest: _emit_generic(nest, op, schedule, where))
            return
        generic = generalize(op)
        try:
            _generate(op, rewriter, lambda nest: _emit_generic(nest, generic, schedule, where))
        finally:
            generic.erase()  # never inserted: drops its operand uses


class GenerateFillLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.FillOp, rewriter: PatternRewriter) -> None:
        if on_buffers(op):
            _generate(op, rewriter, lambda nest: _emit_fill(nest, op))


class GenerateCopyLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.CopyOp, rewriter: PatternRewriter) -> None:
        if on_buffers(op):
            _generate(op, rewriter, lambda nest: _emit_copy(nest, op))


class GenerateGatherLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GatherOp, rewriter: PatternRewriter) -> None:
        if on_buffers(op):
            _generate(op, rewriter, lambda nest: _emit_gather(nest, op))


class LoopGeneratePass(ModulePass):
    """Replaces every structured op on buffers (`linalg.generic`/`matmul`/
    `conv_2d_nchw_fchw`/`fill`/`copy`, `ember_linalg.gather`) by loops: the
    nest of its schedule, or of the default. Ops on tensors are left alone."""

    name = "loop-generate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([GenerateStructuredLoops(), GenerateFillLoops(),
                                                GenerateCopyLoops(), GenerateGatherLoops()])  # fmt: skip
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)


__all__ = ["BodyEmitter", "LoopGeneratePass", "generate_loops", "on_buffers", "outside_value",
           "scalar_constant"]  # fmt: skip
