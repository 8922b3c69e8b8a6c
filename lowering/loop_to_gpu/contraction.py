"""A contraction as a block-tiled kernel: shared-memory staging, a register
tile per thread.

For a structured op whose body accumulates a product (`out + a * b`) and
whose `schedule` is `#ember_gpu.schedule<m = [...], n = [...], k = [...],
block = [BM, BN], threads = [TX, TY], k_tile = BK>` (dialects/ember_gpu.py),
with static extents: the op is a product of an M x K matrix (the *row
operand*, the one of a and b that reads the m and k dims) by a K x N one
(the *column operand*, reading the k and n dims), M, N and K the numbers of
points of the m, n and k dims, each point numbered row-major over its
group's dims (`delinearize`); the op's other dims are batch dims, which all
of them may read:

- the grid is (ceil(N / BN), ceil(M / BM), the batch dims' points); block
  (bx, by, bz) computes the rows [by * BM, +BM) and the columns [bx * BN,
  +BN) of batch point bz (row-major over the batch dims);
- each of its TX x TY threads keeps RM x RN = (BM / TY) x (BN / TX)
  accumulators in registers (loop-carried values), for the rows ty + i * TY
  and the columns tx + j * TX of the tile: neighbouring threads hold
  neighbouring columns, so the final stores are coalesced;
- the reduction runs in steps of BK: the block's threads together copy a
  BM x BK tile of `a` and a BK x BN tile of `b` into shared memory
  (`ember_gpu.shared`; with `vector = [VR, VC]` a copy moves VR (VC)
  consecutive elements of a tile's row as one `vector.load` and
  `vector.store`, where `vector_problem` finds the operand contiguous and
  aligned along that row; thread t copies the elements (runs) t,
  t + TX * TY, ... in row-major order, so neighbouring threads read
  neighbouring elements of each operand's contiguous dim where it is k for
  `a` and n for `b`; an element past the operand's extent is 0), wait at a
  `gpu.barrier`, each accumulate the step's BK products from shared memory
  (a `math.fma` each: one rounding per product, as the CPU's micro-kernels
  round), and wait at a second barrier before the next step overwrites the
  tiles;
- with `stages = 2` the tiles are pairs (`[2, BM, BK]`, `[2, BK, BN]`): the
  first step's are copied into pair 0 before the loop, then a barrier; each
  step loads the next step's elements into registers (zeros past the end),
  accumulates from pair (k0 / BK) % 2, stores what it loaded into the other
  pair, and waits at its one barrier (no thread reads the pair being
  stored in that step, and the barrier orders the stores before the next
  step's reads);
- a product operand built as a padded copy by fills and a copy marked
  `#ember_gpu.padding` (`padding_of`) is not read: its element at p is the
  copy's source at p - offset where that is inside the source, else the
  fills' value (an `scf.if` on unsigned bounds checks), and the fills and
  the copy run no kernel;
- at the end each thread adds its accumulators to the output elements it
  owns that exist (or, where a `linalg.fill` into the output (`absorbed_fill`)
  comes just before the op, starts from its value and stores without
  reading: the fill's kernel is not emitted);
- its epilogue, the elementwise generics after the op marked
  `#ember_gpu.epilogue` by `gpu-default-schedule` (a bias, an activation, a
  residual: `ember.passes.loop.epilogue`'s rules), runs on each output value
  in registers, op by op as their bodies say, reading their other inputs at
  the output's place; the value is stored into the last one's output, and
  those generics run no kernel of their own.

Operands are read through the op's indexing maps, so transposed operands
(`a` k-major, `b` n-major as in Q K^T), a convolution's windows (`oh * s +
kh`) and views work, less coalesced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, math, memref, scf, vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, MemRefType, VectorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import (
    EpilogueAttr,
    GpuScheduleAttr,
    PaddingAttr,
    SharedOp,
    shared_memory_type,
)
from ember.dialects.loop_nests import LoopNestBuilder
from ember.dialects.schedule import PARALLEL, SCHEDULE, IterationSpace, describe, iteration_space
from ember.lowering.loop_to_gpu.index_math import IndexMath
from ember.lowering.loop_to_gpu.outline import (
    PASS,
    KernelBuilder,
    ValueCopier,
    absorbed_fill,
    host_index,
    rematerializable,
)
from ember.passes.loop.epilogue import step_arguments

VECTOR_BYTES = 16
"""The widest global and shared access (`ld.global.v4.f32`, 16-byte aligned)."""

_X, _Y, _Z = (gpu.DimensionAttr(d) for d in (gpu.DimensionEnum.X, gpu.DimensionEnum.Y,
                                             gpu.DimensionEnum.Z))  # fmt: skip


def tiled_schedule(op: Operation) -> GpuScheduleAttr | None:
    """The op's `#ember_gpu.schedule`, if it has one."""
    schedule = op.attributes.get(SCHEDULE)
    return schedule if isinstance(schedule, GpuScheduleAttr) else None


@dataclass(frozen=True)
class Roles:
    """Which product operand (an operand number) holds the rows and which
    the columns, and the batch dims."""

    rows: int
    columns: int
    batch: tuple[int, ...]


def contraction_roles(space: IterationSpace, schedule: GpuScheduleAttr,
                      types: Sequence[Attribute]) -> Roles | str:  # fmt: skip
    """The roles of an op of iteration space `space` and operand types
    `types` run as the block-tiled contraction `schedule` describes, or why
    it cannot run so."""
    if space.product is None:
        return "its body is not a sum of products (out + a * b)"
    m, n, k = schedule.groups
    rank = len(space.extents)
    if max(*m, *n, *k) >= rank:
        return f"m, n and k name dims it does not have ({rank})"
    kinds = space.iterators
    if any(kinds[d] != PARALLEL for d in (*m, *n)):
        return "the m and n dims must be parallel dims"
    if sorted(k) != [d for d, kind in enumerate(kinds) if kind != PARALLEL]:
        return "the k dims must be its reduction dims, all of them"
    if DYNAMIC_INDEX in space.extents:
        return "its extents are not all static"
    (out,) = space.output_maps
    if _uses(out, k) or not _uses(out, m, every=True) or not _uses(out, n, every=True):
        return "its output must read every m and n dim and no k dim"
    a, b = space.product
    for rows, columns in ((a, b), (b, a)):
        row_map, column_map = space.maps[rows], space.maps[columns]
        if not _uses(row_map, n) and not _uses(column_map, m):
            batch = tuple(d for d in range(rank) if d not in (*m, *n, *k))
            widths = schedule.vector_widths
            for name, operand, group, width in (("row", rows, k, widths[0]),
                                                ("column", columns, n, widths[1])):  # fmt: skip
                problem = vector_problem(types[operand], space.maps[operand], group,
                                         space.extents, width)  # fmt: skip
                if problem is not None:
                    return (
                        f"the {name} operand cannot be loaded {width} elements at a time: {problem}"
                    )
            return Roles(rows, columns, batch)
    return "one product operand must read no n dim and the other no m dim"


def contraction_problem(space: IterationSpace, schedule: GpuScheduleAttr,
                        types: Sequence[Attribute]) -> str | None:  # fmt: skip
    """Why an op of iteration space `space` and operand types `types` cannot
    run as the block-tiled contraction `schedule` describes (None if it can)."""
    roles = contraction_roles(space, schedule, types)
    return roles if isinstance(roles, str) else None


def vector_problem(buffer_type: Attribute, amap: AffineMap, group: Sequence[int],
                   extents: Sequence[int], width: int) -> str | None:  # fmt: skip
    """Why a tile of a buffer of `buffer_type`, read through `amap`, cannot
    be staged `width` elements at a time along `group` (the tile's inner
    dims: k for the row operand, n for the column operand), or None.

    A load of `width` elements is one aligned vector access: `group` must be
    the buffer's innermost dims, read as they are (`amap`'s last results are
    those dims, in order) and contiguous, so that the group's points,
    numbered row-major, are consecutive elements; their count, the layout's
    offset and every outer stride must be multiples of `width`, so that a
    load never straddles the edge of the operand and starts at a multiple
    of `width` elements from the buffer's start, which is 16-byte aligned
    (a device allocation, or a view of the weights or the arena at an
    offset `loop-pack-weights` and `loop-plan-memory` align to 64 bytes);
    and `width` elements must fit in 16 bytes."""
    if width == 1:
        return None
    if not isinstance(buffer_type, MemRefType) or not buffer_type.has_static_shape():
        return "its shape is not static"
    bytes_each = buffer_type.element_type.bitwidth // 8  # type: ignore[attr-defined]
    if width * bytes_each > VECTOR_BYTES:
        return f"{width} elements of {buffer_type.element_type} exceed {VECTOR_BYTES} bytes"
    tail = amap.results[len(amap.results) - len(group) :]
    if len(tail) != len(group) or any(not isinstance(r, AffineDimExpr) or r.position != d
                                      for r, d in zip(tail, group, strict=True)):  # fmt: skip
        return f"its innermost dims are not the dims {list(group)}, read as they are"
    shape, strides, offset = (
        buffer_type.get_shape(),
        buffer_type.get_strides(),
        buffer_type.get_offset(),
    )
    if strides is None or offset is None or None in strides:
        return "its layout is not static"
    first = len(shape) - len(group)
    contiguous = 1
    for d in reversed(range(first, len(shape))):
        if strides[d] != contiguous or (d > first and shape[d] != extents[group[d - first]]):
            return "it is not contiguous along those dims"
        contiguous *= shape[d]
    outer: list[int] = list(strides[:first])  # type: ignore[arg-type]
    if prod(extents[d] for d in group) % width or offset % width or any(s % width for s in outer):
        return f"its extent, offset or strides are not multiples of {width}"
    return None


def _uses(amap: AffineMap, dims: Sequence[int], every: bool = False) -> bool:
    """Whether `amap` reads any (with `every`: each) of `dims`."""
    used = set().union(*(result.used_dims() for result in amap.results))
    return all(d in used for d in dims) if every else any(d in used for d in dims)


@dataclass(frozen=True)
class Padding:
    """How a product operand is built as a padded copy: `source` copied
    into it at `offsets` (its `sizes`), `value` (a fill's scalar) elsewhere;
    `ops` the fills and the copy."""

    source: SSAValue
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    value: SSAValue
    ops: tuple[Operation, ...]


def padding_of(buffer: SSAValue, reader: Operation, marked: bool) -> Padding | None:
    """How `buffer`, an input of the tiled contraction `reader`, is a padded
    copy, or None: each of its other uses a `memref.subview` of static
    offsets and unit strides written only by a `linalg.fill` of a constant
    (all of one value) or by the one `linalg.copy`, before `reader` in its
    block; with `marked` those ops must carry `#ember_gpu.padding`, without
    it no schedule at all (and `buffer` must be a `memref.alloc`, which
    nothing else sees)."""
    if buffer in getattr(reader, "outputs", ()):
        return None
    if not marked and not isinstance(buffer.owner, memref.AllocOp):
        return None
    fills: list[linalg.FillOp] = []
    copies: list[tuple[linalg.CopyOp, memref.SubviewOp]] = []
    for use in buffer.uses:
        view = use.operation
        if view is reader:
            continue
        if (not isinstance(view, memref.SubviewOp) or view.offsets or view.sizes or view.strides
                or any(s != 1 for s in view.static_strides.get_values())):  # fmt: skip
            return None
        for inner in view.result.uses:
            writer = inner.operation
            if (not isinstance(writer, linalg.FillOp | linalg.CopyOp)
                    or tuple(writer.outputs) != (view.result,) or view.result in writer.inputs
                    or writer.parent_block() is not reader.parent_block()
                    or not writer.is_before_in_block(reader)):  # fmt: skip
                return None
            schedule = writer.attributes.get(SCHEDULE)
            if (isinstance(schedule, PaddingAttr) if marked else schedule is None) is False:
                return None
            if isinstance(writer, linalg.FillOp):
                fills.append(writer)
            else:
                copies.append((writer, view))
    values = {_constant_value(fill.inputs[0]) for fill in fills}
    if len(copies) != 1 or not fills or len(values) != 1 or None in values:
        return None
    [(copy, view)] = copies
    offsets = tuple(int(o) for o in view.static_offsets.get_values())
    sizes = tuple(view.result.type.get_shape())  # type: ignore[attr-defined]
    return Padding(copy.inputs[0], offsets, sizes, fills[0].inputs[0], (*fills, copy))


def folded_paddings(op: Operation, roles: Roles) -> list[Padding | None]:
    """The padding (or None) of the row and the column operand of `op`, a
    tiled contraction of `roles`, that its kernel reads with bounds checks:
    where the ops building it are marked `#ember_gpu.padding`."""
    operands: list[SSAValue] = [*op.inputs, *op.outputs]  # type: ignore[attr-defined]
    return [padding_of(operands[i], op, marked=True) for i in (roles.rows, roles.columns)]


def _constant_value(value: SSAValue) -> Attribute | None:
    owner = value.owner
    return owner.value if isinstance(owner, arith.ConstantOp) else None


def read_padded(builder: Builder, tile: IndexMath, padding: Padding, source: SSAValue,
                 fill: SSAValue, indices: Sequence[SSAValue], extents: Sequence[int]) -> SSAValue:  # fmt: skip
    """The padded buffer's element at `indices` (of its `extents`): the
    source's where the copy put it there, else the fill's value."""
    shifted, checks = [], []
    for index, offset, size, extent in zip(indices, padding.offsets, padding.sizes, extents,
                                           strict=True):  # fmt: skip
        at = (
            index
            if offset == 0
            else builder.insert(arith.SubiOp(index, tile.const(offset))).results[0]
        )
        shifted.append(at)
        if offset or size != extent:  # below the offset, `at` wraps past `size`
            checks.append((at, size))
    if not checks:
        return builder.insert(memref.LoadOp.get(source, shifted)).results[0]
    read = scf.IfOp(tile.below(builder, checks), [fill.type], Region(Block()), [scf.YieldOp(fill)])
    builder.insert(read)
    then = Builder(InsertPoint.at_start(read.true_region.block))
    value = then.insert(memref.LoadOp.get(source, shifted)).results[0]
    then.insert(scf.YieldOp(value))
    return read.results[0]


def marked_epilogue(op: Operation) -> list[linalg.GenericOp]:
    """The generics after `op` marked as its epilogue (`#ember_gpu.epilogue`),
    in order; pure ops between them (views, constants) are passed over."""
    generics: list[linalg.GenericOp] = []
    following = op.next_op
    while following is not None:
        if isinstance(following, linalg.GenericOp):
            if not isinstance(following.attributes.get(SCHEDULE), EpilogueAttr):
                break
            generics.append(following)
        elif not rematerializable(following):
            break
        following = following.next_op
    return generics


def _apply_epilogue(builder: Builder, generics: Sequence[linalg.GenericOp], written: SSAValue,
                    value: SSAValue, positions: Sequence[SSAValue], copy: ValueCopier) -> SSAValue:  # fmt: skip
    """The value the epilogue `generics` make of `value`, which the step
    before wrote into `written`, at the output's place `positions` (one
    index per output dim)."""
    nest = LoopNestBuilder(builder)

    def read(operand: SSAValue, amap: AffineMap) -> SSAValue:
        return nest.load(copy(operand), [nest.affine(e, positions) for e in amap.results])

    for generic in generics:
        mapping = step_arguments(generic, written, value, read)
        for body_op in generic.body.block.ops:
            if isinstance(body_op, linalg.YieldOp):
                value = mapping[body_op.arguments[0]]
                break
            clone = body_op.clone(value_mapper=mapping)
            builder.insert(clone)
            mapping.update(zip(body_op.results, clone.results))
        written = generic.outputs[0]
    return value


def finish_register_tile(kernel: KernelBuilder, host: ValueCopier, tile: IndexMath,
                         op: Operation, values: Sequence[SSAValue], block: tuple[int, int],
                         origin: tuple[SSAValue, SSAValue],
                         threads: tuple[tuple[SSAValue, int], tuple[SSAValue, int]],
                         totals: tuple[int, int], planes: int,
                         place: Callable[[Builder, SSAValue, SSAValue], list[SSAValue]],
                         accumulate: bool) -> None:  # fmt: skip
    """Ends the kernel of `op`, whose blocks compute `block` (rows by
    columns) outputs of a `totals` grid for each of `planes`, with each
    thread storing its register tile `values` (row-major): row i is
    origin[0] + ty + i * TY and column j origin[1] + tx + j * TX
    (`threads`: (ty, TY), (tx, TX)), those below `totals` stored, `place`
    giving `op`'s ivs at a (row, column); added to the output's value where
    `accumulate`; through `op`'s marked epilogue, into its last generic's
    output. Then its launch at `host`: a grid of the blocks by `planes`."""
    (ty, ty_count), (tx, tx_count) = threads
    rows, columns = block[0] // ty_count, block[1] // tx_count
    build, copy = kernel.body, kernel.copier
    operands: list[SSAValue] = [*op.inputs, *op.outputs]  # type: ignore[attr-defined]
    epilogue = marked_epilogue(op)
    out = copy(operands[-1])
    target = copy(epilogue[-1].outputs[0]) if epilogue else out
    out_map = iteration_space(op).maps[-1]
    for i in range(rows):
        for j in range(columns):
            row_at = tile.add(build, origin[0], tile.add(build, ty, tile.const(i * ty_count)))
            column_at = tile.add(build, origin[1], tile.add(build, tx, tile.const(j * tx_count)))
            inside = tile.below(build, [(row_at, totals[0]), (column_at, totals[1])])
            write = scf.IfOp(inside, [], [scf.YieldOp()])
            build.insert(write)
            then = Builder(InsertPoint.at_start(write.true_region.block))
            at = place(then, row_at, column_at)
            nest = LoopNestBuilder(then)
            positions = [nest.affine(e, at) for e in out_map.results]
            value = values[i * columns + j]
            if accumulate:
                value = then.insert(arith.AddfOp(nest.load(out, positions), value)).results[0]
            if epilogue:
                value = _apply_epilogue(then, epilogue, operands[-1], value, positions, copy)
            nest.store(value, target, positions)
    kernel.finish()
    grid = [-(-totals[1] // block[1]), -(-totals[0] // block[0]), planes]
    kernel.launch(host.builder, [host_index(host, g) for g in grid],
                  [host_index(host, v) for v in (tx_count, ty_count, 1)])  # fmt: skip


def outline_contraction(kernel: KernelBuilder, host: ValueCopier, op: Operation) -> None:
    """Builds the block-tiled kernel of `op` (see the module docstring) and
    its launch at `host`."""
    schedule = tiled_schedule(op)
    assert schedule is not None
    space = iteration_space(op)
    roles = contraction_roles(space, schedule, [v.type for v in op.operands])
    if isinstance(roles, str):
        raise DiagnosticException(f"{PASS}: {describe(op)} cannot run as {schedule}: {roles}")
    operands: list[SSAValue] = [*op.inputs, *op.outputs]  # type: ignore[attr-defined]
    epilogue = marked_epilogue(op)
    copy = kernel.copier
    paddings = folded_paddings(op, roles)
    for padding, width in zip(paddings, schedule.vector_widths, strict=True):
        if padding is not None and width > 1:
            raise DiagnosticException(f"{PASS}: {describe(op)} cannot run as {schedule}: a padded "
                                      "operand is loaded one element at a time")  # fmt: skip
    padded = {
        i for i, p in zip((roles.rows, roles.columns), paddings, strict=True) if p is not None
    }
    # A padded operand is never read: its copy's source and fill value are.
    copy.copy_all(v for i, v in enumerate(operands) if i not in padded)
    copy.copy_all(v for p in paddings if p is not None for v in (p.source, p.value))
    copy.copy_all(v for generic in epilogue for v in generic.operands)
    fill = absorbed_fill(op)
    start = copy(fill.inputs[0]) if fill is not None else None
    build = kernel.body
    m, n, k = schedule.groups
    sizes = space.extents
    rows_total, columns_total, depth = (prod(sizes[d] for d in group) for group in (m, n, k))
    (bm, bn), (tx_count, ty_count) = schedule.block_tile, schedule.block_threads
    bk = schedule.k_step
    rows, columns = bm // ty_count, bn // tx_count
    count = tx_count * ty_count
    row_source, column_source, out = (operands[i] if i in padded else copy(operands[i])
                                      for i in (roles.rows, roles.columns, -1))  # fmt: skip
    row_map, column_map = (space.maps[i] for i in (roles.rows, roles.columns))
    output_type = out.type
    assert isinstance(output_type, MemRefType)
    element: Attribute = output_type.element_type
    stages = schedule.buffers
    double = stages == 2
    # With two stages, each tile is a pair: [which, row, column].
    row_tile, column_tile = (
        build.insert(SharedOp(shared_memory_type(element, (stages,) * double + shape))).results[0]
        for shape in ((bm, bk), (bk, bn))
    )

    tx, ty = (build.insert(gpu.ThreadIdOp(d)).results[0] for d in (_X, _Y))
    # Constants go before the first thread id: wherever one is first needed,
    # it then comes before every use.
    tile = IndexMath(Builder(InsertPoint.before(tx.owner)), sizes)  # type: ignore[arg-type]
    bx, by, bz = (build.insert(gpu.BlockIdOp(d)).results[0] for d in (_X, _Y, _Z))
    first_row = tile.mul(build, by, tile.const(bm))
    first_column = tile.mul(build, bx, tile.const(bn))
    ivs: list[SSAValue] = [tile.const(0)] * len(sizes)
    if roles.batch:
        tile.delinearize(build, bz, roles.batch, ivs)
    thread = tile.add(build, tile.mul(build, ty, tile.const(tx_count)), tx)
    zero = build.insert(arith.ConstantOp(FloatAttr(0.0, element))).results[0]  # type: ignore[arg-type]
    initial = start if start is not None else zero
    zeros: dict[int, SSAValue] = {1: zero}
    for width in schedule.vector_widths:
        if width not in zeros:
            zeros[width] = build.insert(
                vector.BroadcastOp(zero, VectorType(element, [width]))
            ).results[0]

    def load(body: Builder, source: SSAValue, amap: AffineMap, shape: tuple[int, int],
             groups: tuple[list[int], list[int]], origin: tuple[SSAValue, SSAValue],
             totals: tuple[int, int], width: int,
             padding: Padding | None) -> list[tuple[SSAValue, SSAValue, SSAValue]]:  # fmt: skip
        """This thread's share of the tile of `source` at `origin` (its rows
        along `groups[0]`, columns along `groups[1]`), `width` consecutive
        elements of a row a load, zero past `totals`, read through `padding`
        where `source` is a padded copy: (value, row, column) per load, the
        place in the tile of its first element."""
        height, span = shape
        per_row = span // width
        value_type = element if width == 1 else VectorType(element, [width])
        loaded = []
        for step in range(height * per_row // count):
            linear = tile.add(body, thread, tile.const(step * count))
            row = body.insert(arith.DivUIOp(linear, tile.const(per_row))).results[0]
            column = body.insert(arith.RemUIOp(linear, tile.const(per_row))).results[0]
            if width > 1:
                column = tile.mul(body, column, tile.const(width))
            row_at, column_at = tile.add(body, origin[0], row), tile.add(body, origin[1], column)
            # Totals are multiples of the width: a load is wholly inside or outside.
            inside = tile.below(body, [(row_at, totals[0]), (column_at, totals[1])])
            read = scf.IfOp(inside, [value_type], Region(Block()), [scf.YieldOp(zeros[width])])
            body.insert(read)
            then = Builder(InsertPoint.at_start(read.true_region.block))
            at = list(ivs)
            tile.delinearize(then, row_at, groups[0], at)
            tile.delinearize(then, column_at, groups[1], at)
            nest = LoopNestBuilder(then)
            indices = [nest.affine(e, at) for e in amap.results]
            if padding is not None:
                extents = source.type.get_shape()  # type: ignore[attr-defined]
                value = read_padded(then, tile, padding, copy(padding.source),
                                     copy(padding.value), indices, extents)  # fmt: skip
            elif width == 1:
                value = nest.load(source, indices)
            else:
                value = then.insert(vector.LoadOp(source, indices, value_type)).results[0]  # type: ignore[arg-type]
            then.insert(scf.YieldOp(value))
            loaded.append((read.results[0], row, column))
        return loaded

    def store(body: Builder, loaded: list[tuple[SSAValue, SSAValue, SSAValue]], target: SSAValue,
              which: list[SSAValue]) -> None:  # fmt: skip
        """Stores what `load` gave into the tile `target` (of the pair `which`)."""
        for value, row, column in loaded:
            at = [*which, row, column]
            if isinstance(value.type, VectorType):
                body.insert(vector.StoreOp(value, target, at))
            else:
                body.insert(memref.StoreOp.get(value, target, at))

    vr, vc = schedule.vector_widths

    def load_step(body: Builder, k0: SSAValue) -> list[list[tuple[SSAValue, SSAValue, SSAValue]]]:
        """The row and the column operand's tiles of the k step at `k0`."""
        return [load(body, row_source, row_map, (bm, bk), (m, k), (first_row, k0),
                     (rows_total, depth), vr, paddings[0]),
                load(body, column_source, column_map, (bk, bn), (k, n), (k0, first_column),
                     (depth, columns_total), vc, paddings[1])]  # fmt: skip

    def store_step(body: Builder, loaded: list[list[tuple[SSAValue, SSAValue, SSAValue]]],
                   which: list[SSAValue]) -> None:  # fmt: skip
        for part, target in zip(loaded, (row_tile, column_tile), strict=True):
            store(body, part, target, which)

    accumulator_types = [element] * (rows * columns)
    if double:  # the first step's tiles into pair 0 before the loop
        store_step(build, load_step(build, tile.const(0)), [tile.const(0)])
        build.insert(gpu.BarrierOp())
    steps = scf.ForOp(tile.const(0), tile.const(depth), tile.const(bk), [initial] * (rows * columns),
                      block_region([IndexType(), *accumulator_types]))  # fmt: skip
    build.insert(steps)
    step_body = Builder(InsertPoint.at_start(steps.body.block))
    k0, *accumulators = steps.body.block.args
    current: list[SSAValue] = []
    if double:
        # Pair (k0 / BK) % 2 holds this step's tiles; the next step's are
        # loaded now, kept in registers over the products, and stored into
        # the other pair, which no thread reads in this step.
        number = step_body.insert(arith.DivUIOp(k0, tile.const(bk))).results[0]
        current = [step_body.insert(arith.RemUIOp(number, tile.const(2))).results[0]]
        other = step_body.insert(arith.SubiOp(tile.const(1), current[0])).results[0]
        upcoming = load_step(step_body, tile.add(step_body, k0, tile.const(bk)))
    else:
        store_step(step_body, load_step(step_body, k0), [])
        step_body.insert(gpu.BarrierOp())
    products = scf.ForOp(tile.const(0), tile.const(bk), tile.const(1), list(accumulators),
                         block_region([IndexType(), *accumulator_types]))  # fmt: skip
    step_body.insert(products)
    inner = Builder(InsertPoint.at_start(products.body.block))
    kk, *partial = products.body.block.args
    row_of = [tile.add(inner, ty, tile.const(i * ty_count)) for i in range(rows)]
    column_of = [tile.add(inner, tx, tile.const(j * tx_count)) for j in range(columns)]
    row_values = [inner.insert(memref.LoadOp.get(row_tile, [*current, r, kk])).results[0]
                  for r in row_of]  # fmt: skip
    column_values = [inner.insert(memref.LoadOp.get(column_tile, [*current, kk, c])).results[0]
                     for c in column_of]  # fmt: skip
    sums = []
    for i in range(rows):
        for j in range(columns):
            fma = math.FmaOp(row_values[i], column_values[j], partial[i * columns + j])
            sums.append(inner.insert(fma).results[0])
    inner.insert(scf.YieldOp(*sums))
    if double:
        store_step(step_body, upcoming, [other])
    step_body.insert(gpu.BarrierOp())
    step_body.insert(scf.YieldOp(*products.results))

    def place(then: Builder, row_at: SSAValue, column_at: SSAValue) -> list[SSAValue]:
        at = list(ivs)
        tile.delinearize(then, row_at, m, at)
        tile.delinearize(then, column_at, n, at)
        return at

    finish_register_tile(kernel, host, tile, op, steps.results, (bm, bn), (first_row, first_column),
                         ((ty, ty_count), (tx, tx_count)), (rows_total, columns_total),
                         prod(sizes[d] for d in roles.batch), place, start is None)  # fmt: skip


def block_region(types: Sequence[Attribute]) -> Region:
    """A region of one block of arguments of `types` (a loop's body)."""
    return Region(Block(arg_types=types))


__all__ = [
    "VECTOR_BYTES",
    "Padding",
    "Roles",
    "block_region",
    "contraction_problem",
    "contraction_roles",
    "folded_paddings",
    "marked_epilogue",
    "vector_problem",
    "outline_contraction",
    "padding_of",
    "read_padded",
    "finish_register_tile",
    "tiled_schedule",
]
