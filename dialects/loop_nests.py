"""`LoopNestBuilder`: emits loop-level IR (loops, index arithmetic, loads,
stores, scalar constants) at one insertion point. Bufferization and loop
generation build through it, so what a loop looks like in IR is decided
here once: a sequential loop is an `scf.for`, a parallel one a
one-dimensional `scf.parallel`, both with `index` bounds (`arith.constant`
where static). The functions below read such loops back for the loop passes.

The builder makes the ops that loop generation makes by the thousand (loops,
index constants and arithmetic, loads, stores, the micro-kernels' vector
ops) with `quick`: the same ops, without their constructors' checks after
the first of each kind.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    MemRefType,
    Signedness,
    VectorType,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from ember.dialects.quick_ops import quick

INDEX = IndexType()

Loop = scf.ForOp | scf.ParallelOp
"""A loop of the loop level (an `scf.parallel` of one dim, as emitted here)."""
Bound = int | SSAValue


def is_loop(op: Operation) -> bool:
    return isinstance(op, scf.ForOp | scf.ParallelOp)


def induction_variable(op: Loop) -> SSAValue:
    return op.body.block.args[0]


def constant_index(value: SSAValue) -> int | None:
    """The integer `value` holds if an `arith.constant` defines it, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def loop_operands(op: Loop) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(lower, upper, step) of a loop (its first dim, for an `scf.parallel`)."""
    if isinstance(op, scf.ForOp):
        return op.lb, op.ub, op.step
    return op.lowerBound[0], op.upperBound[0], op.step[0]


def static_bounds(op: Loop) -> tuple[int, int, int] | None:
    """(lower, upper, step) when all three are constants, else None (an
    `scf.parallel` of more than one dim has no single triple either)."""
    if isinstance(op, scf.ParallelOp) and len(op.lowerBound) != 1:
        return None
    bounds = tuple(constant_index(v) for v in loop_operands(op))
    return None if None in bounds else bounds  # type: ignore[return-value]


def body_end(op: Loop) -> Operation:
    """The terminator of a loop's body (new body ops go before it)."""
    terminator = op.body.block.last_op
    assert terminator is not None
    return terminator


def make_sequential(op: scf.ParallelOp) -> scf.ForOp:
    """Replaces a one-dim `scf.parallel` by an `scf.for` with the same bounds,
    body and attributes (its iterations are no longer independent)."""
    lower, upper, step = loop_operands(op)
    block = op.body.detach_block(op.body.block)
    reduce = block.last_op
    assert isinstance(reduce, scf.ReduceOp) and not reduce.args, "a reduction cannot run in order"
    block.erase_op(reduce)
    block.add_op(scf.YieldOp())
    for_op = scf.ForOp(lower, upper, step, [], Region(block))
    for_op.attributes.update(op.attributes)
    for_op.location = op.location
    parent = op.parent_block()
    assert parent is not None
    parent.insert_op_before(for_op, op)
    parent.erase_op(op)
    return for_op


class LoopNestBuilder:
    """Emits loop nests, index arithmetic, loads and stores at one insertion point."""

    def __init__(self, builder: Builder, location: LocationAttr | None = None):
        self.builder = builder
        self.location = location
        """Given to each op inserted (the source names of what it implements)."""

    def insert(self, op: Operation) -> Operation:
        if self.location is not None:
            op.location = self.location
        return self.builder.insert(op)

    def index(self, value: int) -> SSAValue:
        """An `index` constant, named as MLIR names them (`%c16`, `%cm1`)."""
        constant = quick(lambda: arith.ConstantOp(IntegerAttr(value, INDEX)),
                         (arith.ConstantOp, INDEX, value), arith.ConstantOp, (), (INDEX,))  # fmt: skip
        result = self.insert(constant).results[0]
        result.name_hint = f"c{value}".replace("-", "m")
        return result

    def bound(self, value: Bound, constants: dict[int, SSAValue] | None = None) -> SSAValue:
        """`value` as an `index` SSA value (a constant made here, or reused
        from `constants`, for an int)."""
        if isinstance(value, SSAValue):
            return value
        if constants is None:
            return self.index(value)
        if value not in constants:
            constants[value] = self.index(value)
        return constants[value]

    def loop(
        self, lower: Bound, upper: Bound, step: Bound = 1, *, parallel: bool = False,
        constants: dict[int, SSAValue] | None = None,
    ) -> tuple[SSAValue, LoopNestBuilder]:  # fmt: skip
        """One loop from `lower` to `upper` (exclusive) by `step` (ints or
        `index` values); returns its induction variable and a builder for its
        body. Int bounds become constants before the loop (`constants`, when
        given, shares them between loops)."""
        operands = [self.bound(v, constants) for v in (lower, upper, step)]
        block = Block(arg_types=[INDEX])
        body = Region(block)
        if parallel:
            block.add_op(quick(scf.ReduceOp, scf.ReduceOp, scf.ReduceOp, (), ()))
            op: Loop = quick(lambda: scf.ParallelOp(*([v] for v in operands), body),
                       (scf.ParallelOp, 1), scf.ParallelOp, operands, (), (body,))  # fmt: skip
        else:
            block.add_op(quick(scf.YieldOp, scf.YieldOp, scf.YieldOp, (), ()))
            op = self.for_loop(*operands, [], body)
        self.insert(op)
        inner = Builder(InsertPoint.before(body_end(op)))
        return block.args[0], LoopNestBuilder(inner)

    @staticmethod
    def for_loop(lower: SSAValue, upper: SSAValue, step: SSAValue, carried: Sequence[SSAValue],
                 body: Region) -> scf.ForOp:  # fmt: skip
        """An `scf.for` with `body`, carrying `carried` (not inserted)."""
        return quick(lambda: scf.ForOp(lower, upper, step, carried, body), scf.ForOp, scf.ForOp,
                     (lower, upper, step, *carried), [v.type for v in carried], (body,))  # fmt: skip

    def nest(
        self, extents: Sequence[Bound], parallel: Sequence[bool]
    ) -> tuple[list[SSAValue], Builder]:
        """Loops over `extents`, outermost first; returns the ivs and a builder
        for the innermost body. No extents (a 0-d buffer) still make one loop,
        of one iteration, so every memory access in a function is inside a loop
        nest (the unit that loop passes fuse and outline)."""
        # The bounds are made once, before the outermost loop: fewer ops to
        # build and lower than three constants per loop.
        constants: dict[int, SSAValue] = {}
        for value in (0, 1, *extents):
            self.bound(value, constants)
        if not extents:
            _, body = self.loop(0, 1, 1, parallel=True, constants=constants)
            return [], body.builder
        nest: LoopNestBuilder = self
        ivs: list[SSAValue] = []
        for extent, is_parallel in zip(extents, parallel):
            iv, nest = nest.loop(0, extent, 1, parallel=is_parallel, constants=constants)
            ivs.append(iv)
        return ivs, nest.builder

    def affine(self, expr: AffineExpr, ivs: Sequence[SSAValue]) -> SSAValue:
        """The index value of an affine expression of the loop ivs."""
        if isinstance(expr, AffineDimExpr):
            return ivs[expr.position]
        if isinstance(expr, AffineConstantExpr):
            return self.index(expr.value)
        assert isinstance(expr, AffineBinaryOpExpr), f"unsupported affine expression {expr}"
        lhs, rhs = self.affine(expr.lhs, ivs), self.affine(expr.rhs, ivs)
        op_class = {
            AffineBinaryOpKind.Add: arith.AddiOp,
            AffineBinaryOpKind.Mul: arith.MuliOp,
            AffineBinaryOpKind.FloorDiv: arith.FloorDivSIOp,
            AffineBinaryOpKind.Mod: arith.RemSIOp,
        }[expr.kind]
        return self.binary(op_class, lhs, rhs)

    def binary(self, kind: type[arith.SignlessIntegerBinaryOperation], lhs: SSAValue,
               rhs: SSAValue) -> SSAValue:  # fmt: skip
        """`kind` (`arith.addi`, `arith.muli`, ...) of two `index` values, no flags."""
        op = quick(lambda: kind(lhs, rhs), kind, kind, (lhs, rhs), (lhs.type,))
        return self.insert(op).results[0]

    def load(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        memref_type = buffer.type
        assert isinstance(memref_type, MemRefType)
        operands = (buffer, *indices)
        op = quick(lambda: memref.LoadOp.get(buffer, list(indices)), memref.LoadOp,
                   memref.LoadOp, operands, (memref_type.element_type,))  # fmt: skip
        return self.insert(op).results[0]

    def store(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        operands = (value, buffer, *indices)
        self.insert(quick(lambda: memref.StoreOp.get(value, buffer, list(indices)),
                          memref.StoreOp, memref.StoreOp, operands, ()))  # fmt: skip

    def vector_load(self, buffer: SSAValue, indices: Sequence[SSAValue],
                    vector_type: VectorType) -> SSAValue:  # fmt: skip
        op = quick(lambda: vector.LoadOp(buffer, indices, vector_type), vector.LoadOp,
                   vector.LoadOp, (buffer, *indices), (vector_type,))  # fmt: skip
        return self.insert(op).results[0]

    def vector_store(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        self.insert(quick(lambda: vector.StoreOp(value, buffer, indices), vector.StoreOp,
                          vector.StoreOp, (value, buffer, *indices), ()))  # fmt: skip

    def broadcast(self, scalar: SSAValue, vector_type: VectorType) -> SSAValue:
        op = quick(lambda: vector.BroadcastOp(scalar, vector_type), vector.BroadcastOp,
                   vector.BroadcastOp, (scalar,), (vector_type,))  # fmt: skip
        return self.insert(op).results[0]

    def fma(self, lhs: SSAValue, rhs: SSAValue, accumulator: SSAValue) -> SSAValue:
        """`vector.fma`: `lhs * rhs + accumulator`."""
        op = quick(lambda: vector.FMAOp(lhs, rhs, accumulator), vector.FMAOp, vector.FMAOp,
                   (lhs, rhs, accumulator), (accumulator.type,))  # fmt: skip
        return self.insert(op).results[0]

    def constant(self, value: FloatAttr | IntegerAttr) -> SSAValue:
        """A scalar constant of `value`'s type (see `scalar_constant_ops`)."""
        ops = scalar_constant_ops(value)
        for op in ops:
            self.insert(op)
        return ops[-1].results[0]


def scalar_constant_ops(value: FloatAttr | IntegerAttr) -> list[Operation]:
    """The ops making the scalar `value`: one `arith.constant`, or for an
    unsigned (or signed) integer type the signless constant of its bits and
    an `arith.bitcast` to that type (arith.constant takes signless integers
    only). The last op's result is the scalar."""
    element = value.type
    if isinstance(element, IntegerType) and element.signedness.data != Signedness.SIGNLESS:
        bits = arith.ConstantOp(IntegerAttr(value.value.data, IntegerType(element.width.data)))
        return [bits, arith.BitcastOp(bits.results[0], element)]
    # The value is the op's one property: part of the key.
    return [quick(lambda: arith.ConstantOp(value), (arith.ConstantOp, value), arith.ConstantOp, (),
                  (element,))]  # fmt: skip


__all__ = [
    "scalar_constant_ops",
    "Loop",
    "LoopNestBuilder",
    "body_end",
    "constant_index",
    "induction_variable",
    "is_loop",
    "loop_operands",
    "make_sequential",
    "static_bounds",
]


def buffer_size(buffer: SSAValue, dim: int, builder: Builder) -> Bound:
    """The extent of `dim` of a memref: its type's where static, else the
    value that sized it (the `memref.alloc`, `memref.view`,
    `memref.reinterpret_cast` or `memref.subview` operand, so that nests
    over buffers of one symbolic size share one bound), else a `memref.dim`
    made at `builder`."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    shape = buffer_type.get_shape()
    if shape[dim] != DYNAMIC_INDEX:
        return shape[dim]
    position = sum(1 for d in shape[:dim] if d == DYNAMIC_INDEX)
    owner = buffer.owner
    sizes: Sequence[SSAValue] | None = None
    if isinstance(owner, memref.AllocOp):
        sizes = owner.dynamic_sizes
    elif isinstance(owner, memref.ViewOp | memref.ReinterpretCastOp | memref.SubviewOp):
        sizes = owner.sizes
    if sizes is not None and len(sizes) == shape.count(DYNAMIC_INDEX):
        return sizes[position]
    if isinstance(owner, Block):  # an argument: a dim read at the top of its block
        for use in buffer.uses:
            read = use.operation
            if (isinstance(read, memref.DimOp) and read.parent is owner
                    and constant_index(read.index) == dim):  # fmt: skip
                return read.result
    index = builder.insert(arith.ConstantOp(IntegerAttr(dim, INDEX))).results[0]
    return builder.insert(memref.DimOp(buffer, index)).results[0]


def buffer_shape(buffer: SSAValue, builder: Builder) -> list[Bound]:
    """`buffer_size` of each dim."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    return [buffer_size(buffer, d, builder) for d in range(buffer_type.get_num_dims())]
