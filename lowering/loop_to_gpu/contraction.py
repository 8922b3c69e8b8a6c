"""A contraction as a block-tiled kernel: shared-memory staging, a register
tile per thread.

For a structured op whose body accumulates a product (`out + a * b`) and
whose `schedule` is `#ember_gpu.schedule<dims = [m, n, k], block = [BM, BN],
threads = [TX, TY], k_tile = BK>` (dialects/ember_gpu.py), with static
extents M, N, K along m, n, k and any other dims parallel (batch dims, all
in the output):

- the grid is (ceil(N / BN), ceil(M / BM), the batch dims' points); block
  (bx, by, bz) computes the outputs m in [by * BM, +BM), n in [bx * BN,
  +BN) of batch point bz (row-major over the batch dims);
- each of its TX x TY threads keeps RM x RN = (BM / TY) x (BN / TX)
  accumulators in registers (loop-carried values), for the rows ty + i * TY
  and the columns tx + j * TX of the tile: neighbouring threads hold
  neighbouring columns, so the final stores are coalesced;
- the reduction runs in steps of BK: the block's threads together copy a
  BM x BK tile of `a` and a BK x BN tile of `b` into shared memory
  (`ember_gpu.shared`; thread t copies the elements t, t + TX * TY, ... in
  row-major order, so neighbouring threads read neighbouring elements of
  each operand's contiguous dim where it is k for `a` and n for `b`; an
  element past the operand's extent is 0), wait at a `gpu.barrier`, each
  accumulate the step's BK products from shared memory, and wait at a
  second barrier before the next step overwrites the tiles;
- at the end each thread adds its accumulators to the output elements it
  owns that exist (or, where a `linalg.fill` of a constant into the output
  comes just before the op, starts from that constant and stores without
  reading: the fill's kernel is not emitted).

Operands are read through the op's indexing maps, so transposed operands
(`a` k-major, `b` n-major as in Q K^T) and views work, less coalesced.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, MemRefType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import GpuScheduleAttr, SharedOp, shared_memory_type
from ember.dialects.loop_nests import LoopNestBuilder
from ember.dialects.schedule import PARALLEL, SCHEDULE, IterationSpace, describe, iteration_space
from ember.lowering.loop_to_gpu.outline import PASS, KernelBuilder, ValueCopier, host_index

_X, _Y, _Z = (gpu.DimensionAttr(d) for d in (gpu.DimensionEnum.X, gpu.DimensionEnum.Y,
                                             gpu.DimensionEnum.Z))  # fmt: skip


def tiled_schedule(op: Operation) -> GpuScheduleAttr | None:
    """The op's `#ember_gpu.schedule`, if it has one."""
    schedule = op.attributes.get(SCHEDULE)
    return schedule if isinstance(schedule, GpuScheduleAttr) else None


def contraction_problem(space: IterationSpace, schedule: GpuScheduleAttr) -> str | None:
    """Why an op of iteration space `space` cannot run as the block-tiled
    contraction `schedule` describes (None if it can)."""
    if space.product is None:
        return "its body is not a sum of products (out + a * b)"
    m, n, k = schedule.m, schedule.n, schedule.k
    rank = len(space.extents)
    if max(m, n, k) >= rank:
        return f"dims = [{m}, {n}, {k}] name dims it does not have ({rank})"
    kinds = space.iterators
    if kinds[m] != PARALLEL or kinds[n] != PARALLEL or kinds[k] == PARALLEL:
        return "m and n must be parallel dims and k a reduction dim"
    if any(kind != PARALLEL for d, kind in enumerate(kinds) if d != k):
        return "it has a reduction dim other than k"
    if DYNAMIC_INDEX in space.extents:
        return "its extents are not all static"
    a, b = (space.maps[i] for i in space.product)
    (out,) = space.output_maps
    if _uses(a, n) or _uses(b, m) or _uses(out, k) or not (_uses(out, m) and _uses(out, n)):
        return "a must not depend on n, b not on m, and the output on m and n but not k"
    return None


def _uses(amap: AffineMap, dim: int) -> bool:
    return any(result.used_dims() & {dim} for result in amap.results)


def absorbed_fill(op: Operation) -> linalg.FillOp | None:
    """The `linalg.fill` of a constant into the output of `op`, a tiled
    contraction, just before it: the contraction's accumulators start from
    its value and the fill is not run."""
    fill = op.prev_op
    if tiled_schedule(op) is None or not isinstance(fill, linalg.FillOp):
        return None
    outputs = getattr(op, "outputs", ())
    if len(outputs) != 1 or fill.outputs[0] is not outputs[0]:
        return None
    owner = fill.inputs[0].owner
    return fill if isinstance(owner, arith.ConstantOp) else None


def _index(builder: Builder, value: int) -> SSAValue:
    return builder.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).results[0]


class _Tile:
    """Index arithmetic of one kernel, with the constants it needs made once,
    at `builder` (a point that comes before all of their uses)."""

    def __init__(self, builder: Builder):
        self.builder = builder
        self.constants: dict[int, SSAValue] = {}

    def const(self, value: int) -> SSAValue:
        if value not in self.constants:
            self.constants[value] = _index(self.builder, value)
        return self.constants[value]

    def add(self, builder: Builder, a: SSAValue, b: SSAValue) -> SSAValue:
        return builder.insert(arith.AddiOp(a, b)).results[0]

    def mul(self, builder: Builder, a: SSAValue, b: SSAValue) -> SSAValue:
        return builder.insert(arith.MuliOp(a, b)).results[0]

    def below(self, builder: Builder, values: Sequence[tuple[SSAValue, int]]) -> SSAValue:
        """Whether each value is below its bound, all together (an i1)."""
        checks = [builder.insert(arith.CmpiOp(v, self.const(bound), "ult")).results[0]
                  for v, bound in values]  # fmt: skip
        result = checks[0]
        for check in checks[1:]:
            result = builder.insert(arith.AndIOp(result, check)).results[0]
        return result


def outline_contraction(kernel: KernelBuilder, host: ValueCopier, op: Operation) -> None:
    """Builds the block-tiled kernel of `op` (see the module docstring) and
    its launch at `host`."""
    schedule = tiled_schedule(op)
    assert schedule is not None
    space = iteration_space(op)
    problem = contraction_problem(space, schedule)
    if problem is not None:
        raise DiagnosticException(f"{PASS}: {describe(op)} cannot run as {schedule}: {problem}")
    operands: list[SSAValue] = [*op.inputs, *op.outputs]  # type: ignore[attr-defined]
    copy = kernel.copier
    copy.copy_all(operands)
    fill = absorbed_fill(op)
    start = copy(fill.inputs[0]) if fill is not None else None
    build = kernel.body
    m, n, k = schedule.m, schedule.n, schedule.k
    sizes = space.extents
    (bm, bn), (tx_count, ty_count) = schedule.block_tile, schedule.block_threads
    bk = schedule.k_step
    rows, columns = bm // ty_count, bn // tx_count
    count = tx_count * ty_count
    batch = [d for d in range(len(sizes)) if d not in (m, n, k)]
    a_index, b_index = space.product
    a, b, out = (copy(operands[i]) for i in (a_index, b_index, len(operands) - 1))
    a_map, b_map, out_map = space.maps[a_index], space.maps[b_index], space.maps[-1]
    output_type = out.type
    assert isinstance(output_type, MemRefType)
    element: Attribute = output_type.element_type
    a_tile = build.insert(SharedOp(shared_memory_type(element, (bm, bk)))).results[0]
    b_tile = build.insert(SharedOp(shared_memory_type(element, (bk, bn)))).results[0]

    tx, ty = (build.insert(gpu.ThreadIdOp(d)).results[0] for d in (_X, _Y))
    # Constants go before the first thread id: wherever one is first needed,
    # it then comes before every use.
    tile = _Tile(Builder(InsertPoint.before(tx.owner)))  # type: ignore[arg-type]
    bx, by, bz = (build.insert(gpu.BlockIdOp(d)).results[0] for d in (_X, _Y, _Z))
    first_row, first_column = (
        tile.mul(build, by, tile.const(bm)),
        tile.mul(build, bx, tile.const(bn)),
    )
    ivs: list[SSAValue] = [tile.const(0)] * len(sizes)
    rest = bz
    for d in reversed(batch):
        ivs[d] = build.insert(arith.RemUIOp(rest, tile.const(sizes[d]))).results[0]
        rest = build.insert(arith.DivUIOp(rest, tile.const(sizes[d]))).results[0]
    thread = tile.add(build, tile.mul(build, ty, tile.const(tx_count)), tx)
    zero = build.insert(arith.ConstantOp(FloatAttr(0.0, element))).results[0]  # type: ignore[arg-type]
    initial = start if start is not None else zero

    def stage(body: Builder, source: SSAValue, amap: AffineMap, target: SSAValue,
              shape: tuple[int, int], dims: tuple[int, int], origin: tuple[SSAValue, SSAValue]) -> None:  # fmt: skip
        """Copies the tile of `source` at `origin` (along `dims`) into `target`."""
        height, width = shape
        for step in range(height * width // count):
            linear = tile.add(body, thread, tile.const(step * count))
            row = body.insert(arith.DivUIOp(linear, tile.const(width))).results[0]
            column = body.insert(arith.RemUIOp(linear, tile.const(width))).results[0]
            at = list(ivs)
            at[dims[0]] = tile.add(body, origin[0], row)
            at[dims[1]] = tile.add(body, origin[1], column)
            inside = tile.below(
                body, [(at[dims[0]], sizes[dims[0]]), (at[dims[1]], sizes[dims[1]])]
            )
            read = scf.IfOp(inside, [element], Region(Block()), [scf.YieldOp(zero)])
            body.insert(read)
            then = Builder(InsertPoint.at_start(read.true_region.block))
            nest = LoopNestBuilder(then)
            value = nest.load(source, [nest.affine(e, at) for e in amap.results])
            then.insert(scf.YieldOp(value))
            body.insert(memref.StoreOp.get(read.results[0], target, [row, column]))

    steps = scf.ForOp(tile.const(0), tile.const(sizes[k]), tile.const(bk),
                      [initial] * (rows * columns), _block([IndexType(), *[element] * (rows * columns)]))  # fmt: skip
    build.insert(steps)
    step_body = Builder(InsertPoint.at_start(steps.body.block))
    k0, *accumulators = steps.body.block.args
    stage(step_body, a, a_map, a_tile, (bm, bk), (m, k), (first_row, k0))
    stage(step_body, b, b_map, b_tile, (bk, bn), (k, n), (k0, first_column))
    step_body.insert(gpu.BarrierOp())
    products = scf.ForOp(tile.const(0), tile.const(bk), tile.const(1), list(accumulators),
                         _block([IndexType(), *[element] * (rows * columns)]))  # fmt: skip
    step_body.insert(products)
    inner = Builder(InsertPoint.at_start(products.body.block))
    kk, *partial = products.body.block.args
    row_of = [tile.add(inner, ty, tile.const(i * ty_count)) for i in range(rows)]
    column_of = [tile.add(inner, tx, tile.const(j * tx_count)) for j in range(columns)]
    a_values = [inner.insert(memref.LoadOp.get(a_tile, [r, kk])).results[0] for r in row_of]
    b_values = [inner.insert(memref.LoadOp.get(b_tile, [kk, c])).results[0] for c in column_of]
    sums = []
    for i in range(rows):
        for j in range(columns):
            product = inner.insert(arith.MulfOp(a_values[i], b_values[j])).results[0]
            sums.append(inner.insert(arith.AddfOp(partial[i * columns + j], product)).results[0])
    inner.insert(scf.YieldOp(*sums))
    step_body.insert(gpu.BarrierOp())
    step_body.insert(scf.YieldOp(*products.results))

    for i in range(rows):
        for j in range(columns):
            at = list(ivs)
            at[m] = tile.add(build, first_row, tile.add(build, ty, tile.const(i * ty_count)))
            at[n] = tile.add(build, first_column, tile.add(build, tx, tile.const(j * tx_count)))
            inside = tile.below(build, [(at[m], sizes[m]), (at[n], sizes[n])])
            write = scf.IfOp(inside, [], [scf.YieldOp()])
            build.insert(write)
            then = Builder(InsertPoint.at_start(write.true_region.block))
            nest = LoopNestBuilder(then)
            indices = [nest.affine(e, at) for e in out_map.results]
            value = steps.results[i * columns + j]
            if start is None:
                old = nest.load(out, indices)
                value = then.insert(arith.AddfOp(old, value)).results[0]
            nest.store(value, out, indices)
    kernel.finish()
    batches = 1
    for d in batch:
        batches *= sizes[d]
    grid = [-(-sizes[n] // bn), -(-sizes[m] // bm), batches]
    kernel.launch(host.builder, [host_index(host, g) for g in grid],
                  [host_index(host, v) for v in (tx_count, ty_count, 1)])  # fmt: skip


def _block(types: Sequence[Attribute]) -> Region:
    return Region(Block(arg_types=types))


__all__ = ["absorbed_fill", "contraction_problem", "outline_contraction", "tiled_schedule"]
