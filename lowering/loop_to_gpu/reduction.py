"""A reduction as one block per point of its parallel dims (a *row*): the
block's threads fold the row's reduction points side by side, then combine
their partials in shared memory as a tree.

For a `linalg.generic` whose `schedule` is `#ember_gpu.reduce<threads = T>`
(dialects/ember_gpu.py), with static extents, one output indexed by each
parallel dim once (so each row owns one output element), and a body

    out' = combine(g(inputs...), out)

where `combine` is one of `COMBINER_IDENTITIES` (addf, mulf, maximumf,
minimumf, maxnumf, minnumf: associative and commutative, up to rounding for
addf and mulf) taking the output's block argument once, and `g` any code of
the inputs (`reduction_combiner` recognises it):

- the grid is (R, 1, 1), R the number of rows (points of the parallel dims,
  numbered row-major: at most 2^31 - 1, the largest grid x); block b runs
  row b. With `rows = W` (and T = 32: a warp a row), the grid is
  (ceil(R / W), 1, 1) of 32 W threads; warp w of block b runs row
  b W + w, its lane l as thread t below (a last block's warps past the
  rows fold no point and store nothing, but still take part in the
  shuffles, as every lane of a warp must);
- thread t folds the row's reduction points t, t + T, t + 2T, ... (numbered
  row-major over the reduction dims, the last fastest, so neighbouring
  threads read neighbouring elements where that dim is an input's
  contiguous one), starting from `combine`'s identity, each as the body
  says: `p = combine(g(inputs at the point), p)`;
- where T > 32 (more than a warp), each thread stores its partial in slot
  t of a T-element `ember_gpu.shared` buffer; then log2(T) - 6 steps, each
  after a `gpu.barrier` (the slots written before it must show), in which
  the threads t < h (h = T/2, T/4, ..., 64) combine slots t and t + h into
  slot t; then, after a last barrier, each thread t < 32 (the first warp)
  combines slots t and t + 32 in a register (the other threads take the
  identity: their value is never used). Where T = 32 the thread's partial
  is that register: no shared memory and no barrier;
- then the warp finishes with five `ember_gpu.shuffle_xor` steps (masks
  16, 8, 4, 2, 1; `WARP_MASKS`), each lane combining its value with its
  partner lane's: after them every lane of the first warp holds the row's
  total. No barrier: a warp's lanes meet at each shuffle. Every warp of the
  block runs the shuffles, as the op asks all 32 lanes of a warp to take
  part, and the control flow stays the same for every thread of the block
  (which `convert-gpu-to-loop` needs); the other warps' results are unused;
- thread 0 (lane 0 of each warp, with `rows`) combines the row's total (in its register) with the output's
  old value, linalg's initial accumulator, and stores the result:
  `out = combine(total, out)`. Where a `linalg.fill` into the output comes
  just before the op (`absorbed_fill`), it combines with the fill's value
  instead and the fill runs no kernel.

Starting from the identity keeps the result what the sequential fold gives
but for the order of the operations: -0.0 for addf (0.0 would turn a row of
-0.0 into 0.0), -inf and +inf for maximumf and minimumf (NaN still wins),
and NaN for maxnumf and minnumf, which return the other operand of a NaN:
an infinity as start would turn a row of NaNs whose output starts as NaN
into that infinity. A tree sum rounds differently from a sequential one (by
a few ulp of the row's magnitude, usually less error, never more than the
sequential sum's bound); the shuffles keep the tree's pairing (slot t with
t + h), so only the rounding of the last five steps' order changes. Each
lane combines its value with its partner's in the same operand order, and
the combiners are commutative, so the lanes of the warp agree.
"""

from __future__ import annotations

from math import inf, nan, prod

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, MemRefType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import (
    WARP_SIZE,
    ReduceScheduleAttr,
    SharedOp,
    ShuffleXorOp,
    shared_memory_type,
)
from ember.dialects.ember_linalg import indexing_maps
from ember.dialects.loop_nests import LoopNestBuilder
from ember.dialects.schedule import PARALLEL, SCHEDULE, IterationSpace, describe, iteration_space
from ember.lowering.loop_to_gpu.index_math import IndexMath
from ember.lowering.loop_to_gpu.outline import (
    PASS,
    KernelBuilder,
    ValueCopier,
    absorbed_fill,
    host_index,
    outside_values,
)

COMBINER_IDENTITIES: dict[type[Operation], float] = {
    arith.AddfOp: -0.0,
    arith.MulfOp: 1.0,
    arith.MaximumfOp: -inf,
    arith.MinimumfOp: inf,
    arith.MaxnumfOp: nan,
    arith.MinnumfOp: nan,
}
"""The ops a block-per-row reduction combines with, and each one's identity
(`combine(identity, x) == x` for every x; the module docstring says why
these)."""

WARP_MASKS = (16, 8, 4, 2, 1)
"""The lane masks of a warp's butterfly reduction, in order: after them every
lane holds the combination of all 32 lanes' values."""

MAX_GRID_X = 2**31 - 1
"""The most blocks a grid has along x (CUDA's limit): the most rows."""

_X = gpu.DimensionAttr(gpu.DimensionEnum.X)


def reduction_combiner(op: linalg.GenericOp) -> Operation | None:
    """The op combining each point's value into the output in the body of
    `op`, when the body is `yield combine(g(inputs...), out)` (see the
    module docstring): one output, whose block argument only `combine`
    reads, once, and whose result only the yield reads; None for any other
    body."""
    block = op.body.block
    yielded = block.last_op
    if len(op.outputs) != 1 or not isinstance(yielded, linalg.YieldOp):
        return None
    if len(yielded.operands) != 1 or not isinstance(yielded.operands[0].owner, Operation):
        return None
    combiner = yielded.operands[0].owner
    if type(combiner) not in COMBINER_IDENTITIES or combiner.parent_block() is not block:
        return None
    out = block.args[len(op.inputs)]
    readers = [use.operation for use in out.uses]
    if readers != [combiner] or [use.operation for use in combiner.results[0].uses] != [yielded]:
        return None
    return combiner


def reduction_problem(op: Operation, space: IterationSpace) -> str | None:
    """Why `op`, of iteration space `space`, cannot run as a block-per-row
    reduction (None if it can)."""
    if not isinstance(op, linalg.GenericOp) or len(op.outputs) != 1:
        return "only a linalg.generic with one output runs so"
    if all(kind == PARALLEL for kind in space.iterators):
        return "it has no reduction dims"
    if DYNAMIC_INDEX in space.extents:
        return "its extents are not all static"
    if reduction_combiner(op) is None:
        kinds = ", ".join(c.name for c in COMBINER_IDENTITIES)
        return f"its body is not `yield combine(g(inputs...), out)` with combine one of {kinds}"
    parallel = [d for d, kind in enumerate(space.iterators) if kind == PARALLEL]
    (out,) = space.output_maps
    if sorted(r.position if isinstance(r, AffineDimExpr) else -1 for r in out.results) != parallel:
        return "its output must be indexed by each parallel dim once, by the dim alone"
    rows = prod(space.extents[d] for d in parallel)
    if rows > MAX_GRID_X:
        return f"its {rows} rows are more blocks than a grid holds along x ({MAX_GRID_X})"
    return None


def _combine(builder: Builder, combiner: Operation, out: BlockArgument, accumulated: SSAValue,
             value: SSAValue) -> SSAValue:  # fmt: skip
    """`combiner` (with its flags and operand order) applied to `accumulated`
    in the place of `out` and `value` in the place of its other operand."""
    (other,) = (operand for operand in combiner.operands if operand is not out)
    clone = combiner.clone(value_mapper={out: accumulated, other: value})
    return builder.insert(clone).results[0]


def _fold_point(builder: Builder, op: linalg.GenericOp, combiner: Operation,
                at: list[SSAValue], partial: SSAValue, copy: ValueCopier) -> SSAValue:  # fmt: skip
    """`partial` with the body's value at the point `at` (one index per
    dim) combined into it: the inputs the body reads loaded there, its ops
    but the combiner cloned (`linalg.index` is the point's index)."""
    block = op.body.block
    nest = LoopNestBuilder(builder)
    mapping: dict[SSAValue, SSAValue] = {}
    for arg, operand, amap in zip(block.args, op.inputs, indexing_maps(op)):
        if arg.uses:
            mapping[arg] = nest.load(copy(operand), [nest.affine(e, at) for e in amap.results])
    computed = [o for o in block.ops if o is not combiner and not isinstance(o, linalg.YieldOp)]
    for value in outside_values([*computed, combiner]):
        if not (isinstance(value, BlockArgument) and value.owner is block):
            mapping[value] = copy(value)
    for body_op in computed:
        if isinstance(body_op, linalg.IndexOp):
            mapping[body_op.result] = at[body_op.dim.value.data]
            continue
        clone = body_op.clone(value_mapper=mapping)
        builder.insert(clone)
        mapping.update(zip(body_op.results, clone.results))
    out = block.args[len(op.inputs)]
    (other,) = (operand for operand in combiner.operands if operand is not out)
    return _combine(builder, combiner, out, partial, mapping.get(other, other))


def outline_reduction(kernel: KernelBuilder, host: ValueCopier, op: Operation) -> None:
    """Builds the block-per-row kernel of `op` (see the module docstring)
    and its launch at `host`; a diagnostic when `op` cannot run so."""
    schedule = op.attributes.get(SCHEDULE)
    assert isinstance(schedule, ReduceScheduleAttr)
    space = iteration_space(op)
    problem = reduction_problem(op, space)
    if problem is not None:
        raise DiagnosticException(f"{PASS}: {describe(op)} cannot run as {schedule}: {problem}")
    assert isinstance(op, linalg.GenericOp)
    combiner = reduction_combiner(op)
    assert combiner is not None
    out_arg = op.body.block.args[len(op.inputs)]
    threads = schedule.block_threads
    extents = space.extents
    parallel = [d for d, kind in enumerate(space.iterators) if kind == PARALLEL]
    reductions = [d for d, kind in enumerate(space.iterators) if kind != PARALLEL]
    rows, depth = (prod(extents[d] for d in dims) for dims in (parallel, reductions))

    copy = kernel.copier
    copy.copy_all([*op.inputs, *op.outputs])
    fill = absorbed_fill(op)
    start = copy(fill.inputs[0]) if fill is not None else None
    build = kernel.body
    out = copy(op.outputs[0])
    output_type = out.type
    assert isinstance(output_type, MemRefType)
    element: Attribute = output_type.element_type
    slots = None
    if threads > WARP_SIZE:
        slots = build.insert(SharedOp(shared_memory_type(element, (threads,)))).results[0]
    per_block = schedule.block_rows
    thread = build.insert(gpu.ThreadIdOp(_X)).results[0]
    # Constants go before the thread id: wherever one is first needed, it
    # then comes before every use.
    index = IndexMath(Builder(InsertPoint.before(thread.owner)), extents)  # type: ignore[arg-type]
    row = build.insert(gpu.BlockIdOp(_X)).results[0]
    end = index.const(depth)
    valid = None
    if per_block > 1:  # a warp a row: the lane folds, the warp picks the row
        warp = build.insert(arith.DivUIOp(thread, index.const(WARP_SIZE))).results[0]
        thread = build.insert(arith.RemUIOp(thread, index.const(WARP_SIZE))).results[0]
        row = index.add(build, index.mul(build, row, index.const(per_block)), warp)
        if rows % per_block:  # the last block's extra warps fold nothing, store nothing
            valid = index.below(build, [(row, rows)])
            end = build.insert(arith.SelectOp(valid, end, index.const(0))).results[0]
    ivs: list[SSAValue] = [index.const(0)] * len(extents)
    if parallel:
        index.delinearize(build, row, parallel, ivs)
    identity = FloatAttr(COMBINER_IDENTITIES[type(combiner)], element)  # type: ignore[arg-type]
    start_value = build.insert(arith.ConstantOp(identity)).results[0]

    fold = scf.ForOp(thread, end, index.const(threads), [start_value],
                     Region(Block(arg_types=[IndexType(), element])))  # fmt: skip
    build.insert(fold)
    point_body = Builder(InsertPoint.at_start(fold.body.block))
    point, partial = fold.body.block.args
    at = list(ivs)
    index.delinearize(point_body, point, reductions, at)
    point_body.insert(scf.YieldOp(_fold_point(point_body, op, combiner, at, partial, copy)))

    def combine_halves(builder: Builder, half: int) -> SSAValue:
        """Slot `thread` combined with slot `thread + half`."""
        assert slots is not None
        partner = index.add(builder, thread, index.const(half))
        mine, theirs = (builder.insert(memref.LoadOp.get(slots, [t])).results[0]
                        for t in (thread, partner))  # fmt: skip
        return _combine(builder, combiner, out_arg, mine, theirs)

    def below(half: int, result_types: list[Attribute]) -> tuple[scf.IfOp, Builder]:
        """An `scf.if` for the threads t < `half` (the else branch is the
        caller's to fill where it has results) and a builder in its body."""
        active = build.insert(arith.CmpiOp(thread, index.const(half), "ult")).results[0]
        if result_types:
            step = scf.IfOp(active, result_types, Region(Block()), Region(Block()))
        else:
            step = scf.IfOp(active, [], [scf.YieldOp()])
        build.insert(step)
        return step, Builder(InsertPoint.at_start(step.true_region.block))

    warp_value = fold.results[0]
    if slots is not None:
        build.insert(memref.StoreOp.get(warp_value, slots, [thread]))
        half = threads // 2
        while half > WARP_SIZE:
            build.insert(gpu.BarrierOp())  # the slots the step reads are written
            _, then = below(half, [])
            then.insert(memref.StoreOp.get(combine_halves(then, half), slots, [thread]))
            half //= 2
        build.insert(gpu.BarrierOp())
        first_warp, then = below(WARP_SIZE, [element])
        then.insert(scf.YieldOp(combine_halves(then, WARP_SIZE)))
        first_warp.false_region.block.add_op(scf.YieldOp(start_value))
        warp_value = first_warp.results[0]
    for mask in WARP_MASKS:
        shuffled = build.insert(ShuffleXorOp(warp_value, mask)).results[0]
        warp_value = _combine(build, combiner, out_arg, warp_value, shuffled)

    first = build.insert(arith.CmpiOp(thread, index.const(0), "eq")).results[0]
    if valid is not None:
        first = build.insert(arith.AndIOp(first, valid)).results[0]
    store = scf.IfOp(first, [], [scf.YieldOp()])
    build.insert(store)
    then = Builder(InsertPoint.at_start(store.true_region.block))
    nest = LoopNestBuilder(then)
    (out_map,) = space.output_maps
    positions = [nest.affine(e, ivs) for e in out_map.results]
    old = start if start is not None else nest.load(out, positions)
    nest.store(_combine(then, combiner, out_arg, old, warp_value), out, positions)
    kernel.finish()
    one = host_index(host, 1)
    kernel.launch(host.builder, [host_index(host, -(-rows // per_block)), one, one],
                  [host_index(host, threads * per_block), one, one])  # fmt: skip


__all__ = [
    "COMBINER_IDENTITIES",
    "MAX_GRID_X",
    "WARP_MASKS",
    "outline_reduction",
    "reduction_combiner",
    "reduction_problem",
]
