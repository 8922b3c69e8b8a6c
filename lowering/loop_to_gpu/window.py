"""A depthwise convolution as output tiles computed from input windows
staged in shared memory.

For a structured op whose body accumulates a product (`out + a * b`), with
static extents and a `schedule` of `#ember_gpu.window<tile = [TH, TW],
threads = [TX, TY]>` (dialects/ember_gpu.py), whose iteration space
`window_roles` splits so:

- the output's last two dims, the *height* h and the *width* w, are
  parallel dims; its other dims, the *plane* dims (batch, channel, a
  depthwise multiplier), too;
- one product operand, the *input*, reads the plane dims as they are in
  all its indices but the last two, and in its last two `h * s + kh * d +
  c`-like sums (linear, non-negative coefficients) of h (w) and reduction
  dims, every reduction dim in one of them: no channel is summed, each
  output point reads one plane of the input;
- the other, the *weights*, reads no h and no w;

the kernel is:

- the grid is (ceil(W / TW), ceil(H / TH), the plane dims' points); block
  (bx, by, bz) computes the outputs [by * TH, +TH) x [bx * TW, +TW) of
  plane bz (row-major over the plane dims);
- the block's TX x TY threads copy the input window those outputs read,
  SH x SW elements, halo included (SH = (TH - 1) * s + (KH - 1) * d + 1,
  per the sums' coefficients; SW alike), into shared memory
  (`ember_gpu.shared`), thread t the elements t, t + TX * TY, ... in
  row-major order, so neighbouring threads read neighbouring elements of
  the input's rows; an element past the input's extent is 0 (it feeds
  only outputs past the output's extent, which are not stored); an input
  built as a padded copy by fills and a copy marked `#ember_gpu.padding`
  is not read, its copy's source is, with bounds checks, as a tiled
  contraction reads one (`padding_of`), and the fills and the copy run no
  kernel; then wait at a `gpu.barrier`;
- each thread keeps (TH / TY) x (TW / TX) accumulators in registers, for
  the rows ty + i * TY and the columns tx + j * TX of the tile, and for
  each point of the reduction dims (in row-major order) reads the weight
  once and adds its product with each of its outputs' window elements from
  shared memory (a `math.fma` each);
- at the end each thread adds its accumulators to the output elements it
  owns that exist (or starts from the value of the `linalg.fill` into the
  output just before the op, `absorbed_fill`, whose kernel is not
  emitted), through the op's epilogue (`#ember_gpu.epilogue`: a bias, an
  activation) in registers, as a tiled contraction does.

Each input element is read from global memory once a block instead of
once for each output whose window holds it (KH x KW times at stride 1),
and each weight once a thread for all its outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, math, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, MemRefType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import (
    MAX_SHARED_BYTES,
    SharedOp,
    WindowScheduleAttr,
    shared_memory_type,
)
from ember.dialects.loop_nests import LoopNestBuilder
from ember.dialects.schedule import PARALLEL, SCHEDULE, IterationSpace, describe, iteration_space
from ember.lowering.loop_to_gpu.contraction import (
    Padding,
    block_region,
    finish_register_tile,
    marked_epilogue,
    padding_of,
    read_padded,
)
from ember.lowering.loop_to_gpu.index_math import IndexMath
from ember.lowering.loop_to_gpu.outline import (
    PASS,
    KernelBuilder,
    ValueCopier,
    absorbed_fill,
)

_X, _Y, _Z = (gpu.DimensionAttr(d) for d in (gpu.DimensionEnum.X, gpu.DimensionEnum.Y,
                                             gpu.DimensionEnum.Z))  # fmt: skip


@dataclass(frozen=True)
class Window:
    """How an op's iteration space splits for the window kernel: the input
    and weights operand numbers, the height and width dims, the reduction
    (window) dims, the plane dims, and per spatial index of the input its
    coefficients: (constant, {dim: coefficient})."""

    input: int
    weights: int
    height: int
    width: int
    window: tuple[int, ...]
    plane: tuple[int, ...]
    sums: tuple[tuple[int, dict[int, int]], tuple[int, dict[int, int]]]

    def staged(self, extents: Sequence[int], tile: tuple[int, int]) -> tuple[int, int]:
        """(SH, SW): the input window a tile of `tile` outputs reads."""
        spans = []
        for (_, coefficients), size in zip(self.sums, tile, strict=True):
            spans.append(1 + sum(c * ((size if d in (self.height, self.width) else extents[d]) - 1)
                                 for d, c in coefficients.items()))  # fmt: skip
        return spans[0], spans[1]


def _linear(expr: AffineExpr, rank: int) -> tuple[int, dict[int, int]] | None:
    """`expr` as a constant and a non-negative coefficient per dim it uses,
    where it is linear so (checked at a few points), else None."""
    used = sorted(expr.used_dims())
    constant = expr.eval([0] * rank, [])
    coefficients = {}
    for d in used:
        unit = [0] * rank
        unit[d] = 1
        coefficients[d] = expr.eval(unit, []) - constant
    for scale in (1, 2, 3, 7):
        point = [(d + 1) * scale for d in range(rank)]
        want = constant + sum(c * point[d] for d, c in coefficients.items())
        if expr.eval(point, []) != want:
            return None
    if any(c < 0 for c in coefficients.values()):
        return None
    return constant, coefficients


def window_roles(space: IterationSpace, types: Sequence[Attribute]) -> Window | str:
    """How an op of iteration space `space` and operand types `types` runs
    as the window kernel (see the module docstring), or why it cannot."""
    if space.product is None:
        return "its body is not a sum of products (out + a * b)"
    if DYNAMIC_INDEX in space.extents:
        return "its extents are not all static"
    (out,) = space.output_maps
    rank = len(space.extents)
    if len(out.results) < 3 or not all(isinstance(r, AffineDimExpr) for r in out.results):
        return "its output must have three dims or more, each read as it is"
    dims = [r.position for r in out.results]  # type: ignore[attr-defined]
    height, width = dims[-2:]
    window = tuple(d for d, kind in enumerate(space.iterators) if kind != PARALLEL)
    plane = tuple(dims[:-2])
    if not window or any(space.iterators[d] != PARALLEL for d in dims):
        return "its parallel dims must be the output's and it must have reduction dims"
    for input, weights in (space.product, space.product[::-1]):
        amap = space.maps[input]
        if len(amap.results) < 2 or space.maps[weights].used_dims() & {height, width}:
            continue
        *others, h_sum, w_sum = amap.results
        if any(not isinstance(r, AffineDimExpr) or r.position not in plane for r in others):
            continue
        sums = [_linear(e, rank) for e in (h_sum, w_sum)]
        if sums[0] is None or sums[1] is None:
            continue
        (_, h_uses), (_, w_uses) = sums
        if (height not in h_uses or width not in w_uses
                or set(h_uses) - {height} & set(w_uses) - {width}
                or set(h_uses) | set(w_uses) != {height, width, *window}):  # fmt: skip
            continue
        buffer_type = types[input]
        if not isinstance(buffer_type, MemRefType) or not buffer_type.has_static_shape():
            return "its input's shape is not static"
        return Window(input, weights, height, width, window, plane, (sums[0], sums[1]))
    return (
        "no product operand reads one plane through windows (its last two indices sums of "
        "the output's last two dims and the reduction dims, the others the output's other "
        "dims) while the other reads neither of the output's last two dims"
    )


def window_problem(space: IterationSpace, schedule: WindowScheduleAttr,
                   types: Sequence[Attribute]) -> str | None:  # fmt: skip
    """Why an op cannot run as `schedule` says (None if it can)."""
    roles = window_roles(space, types)
    if isinstance(roles, str):
        return roles
    rows, columns = roles.staged(space.extents, schedule.block_tile)
    element = types[roles.input].element_type  # type: ignore[attr-defined]
    staged = rows * columns * element.bitwidth // 8
    if staged > MAX_SHARED_BYTES:
        return (f"its staged window of {rows} x {columns} elements needs {staged} bytes of "
                f"shared memory, more than {MAX_SHARED_BYTES}")  # fmt: skip
    return None


def window_schedule(op: Operation) -> WindowScheduleAttr | None:
    """The op's `#ember_gpu.window`, if it has one."""
    schedule = op.attributes.get(SCHEDULE)
    return schedule if isinstance(schedule, WindowScheduleAttr) else None


def folded_padding(op: Operation, roles: Window) -> Padding | None:
    """The padding of `op`'s input that its window kernel reads with bounds
    checks (where the ops building it are marked `#ember_gpu.padding`), or None."""
    operands: list[SSAValue] = [*op.inputs, *op.outputs]  # type: ignore[attr-defined]
    return padding_of(operands[roles.input], op, marked=True)


def outline_window(kernel: KernelBuilder, host: ValueCopier, op: Operation) -> None:
    """Builds the window kernel of `op` (see the module docstring) and its
    launch at `host`."""
    schedule = window_schedule(op)
    assert schedule is not None
    space = iteration_space(op)
    types = [v.type for v in op.operands]
    problem = window_problem(space, schedule, types)
    if problem is not None:
        raise DiagnosticException(f"{PASS}: {describe(op)} cannot run as {schedule}: {problem}")
    roles = window_roles(space, types)
    assert isinstance(roles, Window)
    operands: list[SSAValue] = [*op.inputs, *op.outputs]  # type: ignore[attr-defined]
    padding = folded_padding(op, roles)
    copy = kernel.copier
    # A padded input is never read: its copy's source and fill value are.
    copy.copy_all(v for i, v in enumerate(operands) if padding is None or i != roles.input)
    copy.copy_all((padding.source, padding.value) if padding is not None else ())
    copy.copy_all(v for generic in marked_epilogue(op) for v in generic.operands)
    fill = absorbed_fill(op)
    start = copy(fill.inputs[0]) if fill is not None else None
    weights, out = (copy(operands[i]) for i in (roles.weights, -1))
    input_map, weights_map = (space.maps[i] for i in (roles.input, roles.weights))
    sizes = space.extents
    (th, tw), (tx_count, ty_count) = schedule.block_tile, schedule.block_threads
    rows, columns = th // ty_count, tw // tx_count
    count = tx_count * ty_count
    staged_rows, staged_columns = roles.staged(sizes, (th, tw))
    output_type = out.type
    assert isinstance(output_type, MemRefType)
    element: Attribute = output_type.element_type
    input_height, input_width = types[roles.input].get_shape()[-2:]  # type: ignore[attr-defined]
    height, width = sizes[roles.height], sizes[roles.width]

    build = kernel.body
    staged = build.insert(
        SharedOp(shared_memory_type(element, (staged_rows, staged_columns)))
    ).results[0]
    tx, ty = (build.insert(gpu.ThreadIdOp(d)).results[0] for d in (_X, _Y))
    tile = IndexMath(Builder(InsertPoint.before(tx.owner)), sizes)  # type: ignore[arg-type]
    bx, by, bz = (build.insert(gpu.BlockIdOp(d)).results[0] for d in (_X, _Y, _Z))
    zero = build.insert(arith.ConstantOp(FloatAttr(0.0, element))).results[0]  # type: ignore[arg-type]
    ivs: list[SSAValue] = [tile.const(0)] * len(sizes)
    if roles.plane:
        tile.delinearize(build, bz, roles.plane, ivs)
    first_row = tile.mul(build, by, tile.const(th))
    first_column = tile.mul(build, bx, tile.const(tw))
    corner = list(ivs)
    corner[roles.height], corner[roles.width] = first_row, first_column
    nest = LoopNestBuilder(build)
    origin = [nest.affine(e, corner) for e in input_map.results]

    # The window, halo included, into shared memory: thread t copies t, t + count, ...
    thread = tile.add(build, tile.mul(build, ty, tile.const(tx_count)), tx)
    copies = scf.ForOp(thread, tile.const(staged_rows * staged_columns), tile.const(count), [],
                       block_region([IndexType()]))  # fmt: skip
    build.insert(copies)
    body = Builder(InsertPoint.at_start(copies.body.block))
    (linear,) = copies.body.block.args
    row = body.insert(arith.DivUIOp(linear, tile.const(staged_columns))).results[0]
    column = body.insert(arith.RemUIOp(linear, tile.const(staged_columns))).results[0]
    at_row, at_column = tile.add(body, origin[-2], row), tile.add(body, origin[-1], column)
    inside = tile.below(body, [(at_row, input_height), (at_column, input_width)])
    read = scf.IfOp(inside, [element], Region(Block()), [scf.YieldOp(zero)])
    body.insert(read)
    then = Builder(InsertPoint.at_start(read.true_region.block))
    indices = [*origin[:-2], at_row, at_column]
    if padding is None:
        value = then.insert(memref.LoadOp.get(copy(operands[roles.input]), indices)).results[0]
    else:
        value = read_padded(then, tile, padding, copy(padding.source), copy(padding.value),
                            indices, types[roles.input].get_shape())  # type: ignore[attr-defined]  # fmt: skip
    then.insert(scf.YieldOp(value))
    body.insert(memref.StoreOp.get(read.results[0], staged, [row, column]))
    body.insert(scf.YieldOp())
    build.insert(gpu.BarrierOp())

    # Each thread's outputs, a weight at a time over the window's points.
    initial = start if start is not None else zero
    points = prod(sizes[d] for d in roles.window)
    steps = scf.ForOp(tile.const(0), tile.const(points), tile.const(1),
                      [initial] * (rows * columns),
                      block_region([IndexType(), *[element] * (rows * columns)]))  # fmt: skip
    build.insert(steps)
    inner = Builder(InsertPoint.at_start(steps.body.block))
    point, *partial = steps.body.block.args
    at = list(ivs)
    tile.delinearize(inner, point, roles.window, at)
    inner_nest = LoopNestBuilder(inner)
    weight = inner_nest.load(weights, [inner_nest.affine(e, at) for e in weights_map.results])
    local = [tile.const(0)] * len(sizes)
    for d in roles.window:
        local[d] = at[d]
    sums = []
    for i in range(rows):
        for j in range(columns):
            local[roles.height] = tile.add(inner, ty, tile.const(i * ty_count))
            local[roles.width] = tile.add(inner, tx, tile.const(j * tx_count))
            where = []
            for expr, (constant, _) in zip(input_map.results[-2:], roles.sums, strict=True):
                index = inner_nest.affine(expr, local)
                if constant:
                    index = inner.insert(arith.SubiOp(index, tile.const(constant))).results[0]
                where.append(index)
            element_value = inner.insert(memref.LoadOp.get(staged, where)).results[0]
            fma = math.FmaOp(element_value, weight, partial[i * columns + j])
            sums.append(inner.insert(fma).results[0])
    inner.insert(scf.YieldOp(*sums))

    def place(then: Builder, row_at: SSAValue, column_at: SSAValue) -> list[SSAValue]:
        at = list(ivs)
        at[roles.height], at[roles.width] = row_at, column_at
        return at

    finish_register_tile(kernel, host, tile, op, steps.results, (th, tw), (first_row, first_column),
                         ((ty, ty_count), (tx, tx_count)), (height, width),
                         prod(sizes[d] for d in roles.plane), place, start is None)  # fmt: skip


__all__ = [
    "Window",
    "folded_padding",
    "outline_window",
    "window_problem",
    "window_roles",
    "window_schedule",
]
