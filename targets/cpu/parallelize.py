"""`loop-parallelize`: the outermost parallel loops of a function run on threads.

A target runs an `scf.parallel` on several threads the way TVM's CPU
runtime does: its body is outlined into a function of a range, and a launch
splits the range between threads. This pass does the outlining at the loop
level, so what runs in parallel is visible in the IR:

    scf.parallel (%i) = (%c0) to (%c64) step (%c1) { body(%i) }

becomes, in the function (a kernel) that held it,

    func.call @k_parallel0(%a, %b, %c0, %c64) {ember.parallel_threads = 2 : i64}

and a new function (marked `ember.parallel_body` and `ember.kernel`)

    func.func private @k_parallel0(%a, %b, %begin: index, %end: index) {
      scf.for %l = %begin to %end step %c1 { body(%l) }
    }

The call's last two operands are the range [begin, end) of iterations, the
others the values the loop captured (constants are copied in instead). Run
as written, the call does the whole range on one thread, which is what the
loop meant; the `ember.parallel_threads` mark lets the LLVM lowering launch
it on that many threads instead (`convert-loop-to-llvm` calls the target's
`ember_parallel_for`), each thread getting consecutive sub-ranges.

Which loops: the outermost `scf.parallel` loops of each function (inside
`scf.for` loops too); loops nested in one that is outlined stay in its body
and run serially on its thread. A parallel loop whose body is just another
parallel loop (with bounds from outside) forms one band with it; index
arithmetic between the two (a column block's number, say) first moves into
the inner loop, where only it reads it (LLVM hoists it back), so that it
does not cut the band. The range is the band's iterations linearised over
the fewest leading dims that give every thread some chunks
(`CHUNKS_PER_THREAD`), and the body recovers each dim's index from the
linear one. The runtime hands each thread a share of consecutive chunks,
the same share in every launch, so the dims are linearised in the order of
the written buffer's layout (`linearisation_order`): each share writes one
contiguous part of the output, no cache line is written by two threads,
and kernels splitting rows alike find their rows in the same core's cache.
Column blocks (too few to give every thread its chunks) thus vary fastest
and the shares split the rows (each thread reads its rows, not the whole
input), unless the weight they index outweighs the input. A band
with fewer iterations than threads (a batch of one) is not outlined: the
outermost parallel loops inside it are considered instead. A trip count
known only at run time (a symbolic batch) counts as 1 here, since it may
be: the band is linearised over the dims after it too, its range computed
at run time.

Grain: a loop is outlined only if its estimated work (`estimated_work`: ops
times trip counts; a dynamic trip count counts as large) is at least
`min-work`, since a launch costs microseconds. With `threads=1` nothing is
outlined. Loops with results (reductions) and loops capturing values a
thread cannot be handed (vectors) are left alone.

Outlining never changes what an iteration computes, only which thread runs
it, so results are bit-identical to the serial loop's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.loop import (
    KERNEL_ATTR,
    PARALLEL_BODY_ATTR,
    PARALLEL_THREADS_ATTR,
    byte_size,
)
from ember.dialects.loop_nests import INDEX, constant_index

CHUNKS_PER_THREAD = 4
"""The range is made at least this many iterations per thread where the
band allows, so the runtime can hand out several chunks per thread."""
DYNAMIC_TRIP_COUNT = math.inf
"""What a trip count unknown at compile time counts as in the work estimate:
large enough to be worth a launch (static shapes are the common case)."""

_PASSABLE = (MemRefType, IndexType, IntegerType, Float16Type, Float32Type, Float64Type)
"""Types of values a parallel body can take as arguments (a scalar or a
buffer); a loop capturing anything else (a vector not made by a constant,
which would be copied in) stays serial."""


@dataclass(frozen=True)
class Dim:
    """One dim of a parallel band: dim `index` of `loop`."""

    loop: scf.ParallelOp
    index: int

    @property
    def bounds(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        return (self.loop.lowerBound[self.index], self.loop.upperBound[self.index],
                self.loop.step[self.index])  # fmt: skip

    @property
    def induction_variable(self) -> SSAValue:
        return self.loop.body.block.args[self.index]

    def static_trip_count(self) -> int | None:
        return static_trip_count(*self.bounds)


def static_trip_count(lower: SSAValue, upper: SSAValue, step: SSAValue) -> int | None:
    """max(0, ceil((upper - lower) / step)), as `scf` counts iterations, when
    the three are constants (and the step positive); else None."""
    lo, hi, st = (constant_index(v) for v in (lower, upper, step))
    if lo is None or hi is None or st is None or st <= 0:
        return None
    return max(0, -(-(hi - lo) // st))


def _trip_or_dynamic(trip: int | None) -> float:
    return DYNAMIC_TRIP_COUNT if trip is None else trip


def estimated_work(op: Operation) -> float:
    """Ops executed by `op`, counting each loop's body once per iteration."""
    if isinstance(op, scf.ParallelOp):
        trips = math.prod(_trip_or_dynamic(Dim(op, d).static_trip_count())
                          for d in range(len(op.lowerBound)))  # fmt: skip
        return trips * _block_work(op.body.block)
    if isinstance(op, scf.ForOp):
        trips = _trip_or_dynamic(static_trip_count(op.lb, op.ub, op.step))
        return trips * _block_work(op.body.block)
    return 1 + sum(_block_work(block) for region in op.regions for block in region.blocks)


def _block_work(block: Block) -> float:
    return sum(estimated_work(op) for op in block.ops)


def band(loop: scf.ParallelOp) -> list[Dim]:
    """The dims of `loop` and of the parallel loops perfectly nested in it
    (each one the whole body of the one around it, with bounds defined
    outside the outermost), outermost first."""
    dims: list[Dim] = []
    current = loop
    while True:
        dims += [Dim(current, d) for d in range(len(current.lowerBound))]
        ops = list(current.body.block.ops)
        inner = ops[0] if len(ops) == 2 and isinstance(ops[1], scf.ReduceOp) else None
        if (
            not isinstance(inner, scf.ParallelOp)
            or inner.results
            or any(loop.is_ancestor(_defining_op(v)) for v in inner.operands)
        ):
            return dims
        current = inner


def sink_index_math(loop: scf.ParallelOp) -> None:
    """If `loop`'s body is side-effect-free ops, then a parallel loop whose
    bounds do not use them, and only that loop uses their results, moves
    the ops to the start of that loop's body: the two loops then form a band."""
    ops = list(loop.body.block.ops)
    if len(ops) < 3:
        return
    *computed, inner, reduce = ops
    if not isinstance(inner, scf.ParallelOp) or not isinstance(reduce, scf.ReduceOp):
        return
    if any(op.regions or not is_side_effect_free(op) for op in computed):
        return
    if any(_defining_op(v) in computed for v in inner.operands):
        return
    if any(not inner.is_ancestor(use.operation) and use.operation not in computed
           for op in computed for result in op.results for use in result.uses):  # fmt: skip
        return
    first = inner.body.block.first_op
    assert first is not None
    for op in computed:
        op.detach()
        inner.body.block.insert_op_before(op, first)


def linearisation_order(split: Sequence[Dim], threads: int) -> list[Dim]:
    """The split dims from slowest- to fastest-varying in the linear range.

    In the order of the layout of the buffers the band writes (the dim
    indexing the largest stride slowest; ties and dims that index no
    written buffer as nested), so each thread's share of consecutive chunks
    writes one contiguous part of the output: no two threads write the same
    cache line (a grouped convolution nests its groups of 34 channels
    outside the rows, and split by groups, two threads wrote the line
    across a group boundary of every row), and a thread's rows are those a
    kernel before it wrote. Column blocks of a contraction (a leading dim
    over tiles: a constant step above 1) thus vary fastest, each thread
    reading all of their data (the weights) and its share of the rows'
    (the input); where they are fewer than the threads' chunks and the
    buffers that only they index outweigh those only the rows index, they
    go first instead, and each thread reads its share of the weights and
    all the input."""
    accesses = _Accesses(split)
    order = sorted(split, key=lambda d: -accesses.stored_stride(d))
    first = split[0]
    trips, step = first.static_trip_count(), constant_index(first.bounds[2])
    few = trips is not None and trips < threads * CHUNKS_PER_THREAD
    if len(split) > 1 and few and step is not None and step > 1:
        columns, rows = accesses.bytes_read_by_only(first)
        if columns > rows:
            return [first, *(d for d in order if d is not first)]
    return order


class _Accesses:
    """The buffers a band's loads and stores access, and which of the
    split dims' induction variables their indices are computed from."""

    def __init__(self, split: Sequence[Dim]) -> None:
        self.ivs = {d.induction_variable for d in split}
        self.memo: dict[SSAValue, frozenset[SSAValue]] = {}
        self.read: dict[SSAValue, set[SSAValue]] = {}
        self.stride: dict[SSAValue, float] = {}
        for op in split[0].loop.walk():
            if isinstance(op, memref.LoadOp | vector.LoadOp):
                buffer, *indices = op.operands
                used = self.read.setdefault(buffer, set())
                for index in indices:
                    used |= self.sources(index)
            elif isinstance(op, memref.StoreOp | vector.StoreOp):
                _, buffer, *indices = op.operands
                assert isinstance(buffer.type, MemRefType)
                for index, stride in zip(indices, buffer.type.get_strides()):
                    for iv in self.sources(index):
                        known = math.inf if stride is None else stride
                        self.stride[iv] = max(self.stride.get(iv, 0), known)

    def sources(self, value: SSAValue) -> frozenset[SSAValue]:
        """The split dims' induction variables that `value` is computed from."""
        if value in self.ivs:
            return frozenset({value})
        if value not in self.memo:
            self.memo[value] = frozenset()  # cuts cycles through loop-carried values
            owner = value.owner
            found: frozenset[SSAValue] = frozenset()
            if isinstance(owner, Operation) and not owner.regions:
                for operand in owner.operands:
                    found |= self.sources(operand)
            self.memo[value] = found
        return self.memo[value]

    def stored_stride(self, dim: Dim) -> float:
        """The largest stride of a written buffer's index computed from
        `dim` (infinite if it indexes none: it stays outermost)."""
        return self.stride.get(dim.induction_variable, math.inf)

    def bytes_read_by_only(self, dim: Dim) -> tuple[float, float]:
        """The bytes of the buffers read with indices computed from `dim`
        but no other split dim, and of those read with indices from other
        split dims but not `dim`."""
        iv = dim.induction_variable
        only = sum(_bytes(b) for b, used in self.read.items() if used == {iv})
        others = sum(_bytes(b) for b, used in self.read.items() if used and iv not in used)
        return only, others


def _bytes(buffer: SSAValue) -> float:
    """A buffer's bytes; one with a dim known only at run time (a batch)
    counts as large."""
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    return math.inf if any(d < 0 for d in memref_type.get_shape()) else byte_size(memref_type)


def _defining_op(value: SSAValue) -> Operation:
    owner = value.owner
    parent = owner.parent_op() if isinstance(owner, Block) else owner
    assert parent is not None
    return parent


def _captured(loop: Operation) -> dict[SSAValue, list[tuple[Operation, int]]]:
    """Values `loop` (its operands included) uses but does not define, in
    first-use order, each with its uses there (operation, operand index)."""
    captured: dict[SSAValue, list[tuple[Operation, int]]] = {}
    for op in loop.walk():
        for index, value in enumerate(op.operands):
            if not loop.is_ancestor(_defining_op(value)):
                captured.setdefault(value, []).append((op, index))
    return captured


class _IndexMath:
    """Index arithmetic at an insertion point, folded where both sides are constants."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.constants: dict[int, SSAValue] = {}

    def const(self, value: int) -> SSAValue:
        if value not in self.constants:
            self.constants[value] = self.builder.insert(
                arith.ConstantOp.from_int_and_width(value, INDEX)
            ).result
        return self.constants[value]

    def _binary(self, op: type[Operation], lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.builder.insert(op(lhs, rhs)).results[0]  # type: ignore[call-arg]

    def trip_count(self, lower: SSAValue, upper: SSAValue, step: SSAValue) -> SSAValue:
        """max(0, ceil((upper - lower) / step)), as `scf` counts iterations."""
        known = static_trip_count(lower, upper, step)
        if known is not None:
            return self.const(known)
        span = self._binary(arith.SubiOp, upper, lower)
        trips = self._binary(arith.CeilDivSIOp, span, step)
        return self._binary(arith.MaxSIOp, trips, self.const(0))

    def mul(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        a, b = constant_index(lhs), constant_index(rhs)
        if a is not None and b is not None:
            return self.const(a * b)
        if a == 1 or b == 1:
            return rhs if a == 1 else lhs
        return self._binary(arith.MuliOp, lhs, rhs)

    def add(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        if constant_index(lhs) == 0 or constant_index(rhs) == 0:
            return rhs if constant_index(lhs) == 0 else lhs
        return self._binary(arith.AddiOp, lhs, rhs)

    def div(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return lhs if constant_index(rhs) == 1 else self._binary(arith.DivUIOp, lhs, rhs)

    def rem(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self._binary(arith.RemUIOp, lhs, rhs)


def _split_prefix(dims: Sequence[Dim], threads: int) -> int | None:
    """How many leading dims of the band to linearise: the fewest whose
    iterations give each thread CHUNKS_PER_THREAD (all of them if the band
    has fewer), or None if the whole band has fewer iterations than threads.
    A trip count known only at run time may be 1 (a batch of one): it
    counts as 1 here, so the dims after it are linearised too, and such a
    band is always outlined."""
    iterations = 1
    dynamic = False
    for count, dim in enumerate(dims, start=1):
        trips = dim.static_trip_count()
        if trips is None:
            dynamic = True
        else:
            iterations *= trips
        if iterations >= threads * CHUNKS_PER_THREAD:
            return count
    return len(dims) if iterations >= threads or dynamic else None


def launch_sites(
    block: Block, threads: int, min_work: float
) -> Iterator[tuple[scf.ParallelOp, int]]:
    """The parallel loops in `block` to outline, each with its prefix length."""
    for op in block.ops:
        if not isinstance(op, scf.ParallelOp):
            for region in op.regions:
                for inner in region.blocks:
                    yield from launch_sites(inner, threads, min_work)
            continue
        if op.results or estimated_work(op) < min_work:
            continue  # too little work for a launch: its inner loops have less
        dims = band(op)
        prefix = _split_prefix(dims, threads)
        if prefix is None:  # e.g. a batch of one: split the loops inside instead
            yield from launch_sites(dims[-1].loop.body.block, threads, min_work)
        elif all(isinstance(v.type, _PASSABLE) for v in _captured(op)
                 if not isinstance(v.owner, arith.ConstantOp)):  # fmt: skip
            yield op, prefix


def outline(loop: scf.ParallelOp, prefix: int, name: str, threads: int) -> FuncOp:
    """Replaces `loop` by a call of a new function `name` over the linearised
    range of the band's first `prefix` dims; returns the function."""
    dims = band(loop)
    split, rest = dims[:prefix], dims[prefix:]
    order = linearisation_order(split, threads)
    captured = _captured(loop)
    constants = [v for v in captured if isinstance(v.owner, arith.ConstantOp)]
    arguments = [v for v in captured if v not in constants]
    block = Block(arg_types=[*(v.type for v in arguments), INDEX, INDEX])
    *inner_arguments, begin, end = block.args
    inside: dict[SSAValue, SSAValue] = dict(zip(arguments, inner_arguments))
    for value in constants:
        copy = value.owner.clone()  # type: ignore[union-attr]
        block.add_op(copy)
        inside[value] = copy.results[0]

    def mapped(value: SSAValue) -> SSAValue:
        return inside.get(value, value)

    math_in_body = _IndexMath(Builder(InsertPoint.at_end(block)))
    # Every split dim's trip count but the slowest's: the linear index
    # is divided by them (the slowest takes what is left).
    trips = [math_in_body.trip_count(*map(mapped, d.bounds)) for d in order[1:]]
    for_block = Block(arg_types=[INDEX])
    block.add_op(scf.ForOp(begin, end, math_in_body.const(1), [], Region(for_block)))
    block.add_op(ReturnOp())

    # The range's index l, delinearised: the last dim of `order` varies fastest.
    index_math = _IndexMath(Builder(InsertPoint.at_end(for_block)))
    index_math.constants = dict(math_in_body.constants)
    remaining = for_block.args[0]
    ivs: dict[Dim, SSAValue] = {}
    for position in reversed(range(len(order))):
        dim = order[position]
        within = remaining
        if position > 0:
            within = index_math.rem(remaining, trips[position - 1])
            remaining = index_math.div(remaining, trips[position - 1])
        lower, _, step = map(mapped, dim.bounds)
        ivs[dim] = index_math.add(lower, index_math.mul(within, step))

    # The call, where the loop was: the range is every iteration of the split dims.
    outside = _IndexMath(Builder(InsertPoint.before(loop)))
    static_trips = [d.static_trip_count() for d in order]
    if None not in static_trips:
        count = outside.const(math.prod(static_trips))  # type: ignore[arg-type]
    else:
        count = outside.trip_count(*order[0].bounds)
        for dim in order[1:]:
            count = outside.mul(count, outside.trip_count(*dim.bounds))
    call = CallOp(SymbolRefAttr(name), [*arguments, outside.const(0), count], [])
    call.attributes[PARALLEL_THREADS_ATTR] = IntegerAttr(threads, i64)
    Builder(InsertPoint.before(loop)).insert(call)
    for value, uses in captured.items():  # the body reads the function's values
        for user, index in uses:
            user.operands[index] = inside[value]
    for dim, iv in ivs.items():
        dim.induction_variable.replace_all_uses_with(iv)

    innermost = split[-1].loop
    old_body = innermost.body.block
    if rest and rest[0].loop is innermost:  # dims of the same loop are left: keep them parallel
        kept = [d.index for d in rest if d.loop is innermost]
        new_loop_block = Block(arg_types=[INDEX] * len(kept))
        for d, arg in zip(kept, new_loop_block.args):
            Dim(innermost, d).induction_variable.replace_all_uses_with(arg)
        for op in list(old_body.ops):
            op.detach()
            new_loop_block.add_op(op)
        lowers, uppers, steps = (
            [mapped(Dim(innermost, d).bounds[k]) for d in kept] for k in range(3)
        )
        for_block.add_op(scf.ParallelOp(lowers, uppers, steps, Region(new_loop_block)))
    else:
        for op in list(old_body.ops)[:-1]:  # all but the scf.reduce
            op.detach()
            for_block.add_op(op)
    for_block.add_op(scf.YieldOp())

    loop.detach()
    loop.erase(safe_erase=False)

    for op in list(block.ops):  # constants only the dissolved loops' bounds used
        if isinstance(op, arith.ConstantOp) and not op.result.uses:
            block.erase_op(op)
    function = FuncOp(name, ([*(v.type for v in arguments), INDEX, INDEX], []), Region(block),
                      visibility="private")  # fmt: skip
    function.attributes[KERNEL_ATTR] = UnitAttr()
    function.attributes[PARALLEL_BODY_ATTR] = UnitAttr()
    return function


def parallelize(module: ModuleOp, threads: int, min_work: float) -> None:
    """Outlines the parallel loops `launch_sites` picks in every function."""
    if threads < 1:
        raise DiagnosticException(f"loop-parallelize: threads must be at least 1, got {threads}")
    if threads == 1:
        return
    taken = {f.sym_name.data for f in module.ops if isinstance(f, FuncOp)}
    functions = [f for f in module.ops if isinstance(f, FuncOp) and not f.is_declaration
                 and PARALLEL_BODY_ATTR not in f.attributes]  # fmt: skip
    for function in functions:
        for loop in [op for op in function.walk() if isinstance(op, scf.ParallelOp)]:
            sink_index_math(loop)
        sites = list(launch_sites(function.body.block, threads, min_work))
        for number, (loop, prefix) in enumerate(sites):
            name = _fresh(f"{function.sym_name.data}_parallel{number}", taken)
            module.body.block.add_op(outline(loop, prefix, name, threads))


def _fresh(name: str, taken: set[str]) -> str:
    candidate, suffix = name, 1
    while candidate in taken:
        candidate, suffix = f"{name}_{suffix}", suffix + 1
    taken.add(candidate)
    return candidate


@dataclass(frozen=True)
class ParallelizePass(ModulePass):
    """Outlines the outermost parallel loops worth a launch into functions of
    an iteration range, called with the thread count to split them among."""

    name = "loop-parallelize"

    threads: int = 2
    """Threads to split each outlined loop among (the CPU pipeline passes the
    compile's count); 1 outlines nothing."""
    min_work: int = 32768
    """The least estimated work (ops times trip counts) worth a launch."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        parallelize(op, self.threads, self.min_work)


__all__ = [
    "PARALLEL_BODY_ATTR",
    "PARALLEL_THREADS_ATTR",
    "ParallelizePass",
    "estimated_work",
    "parallelize",
]
