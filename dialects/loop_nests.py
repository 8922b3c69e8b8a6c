"""`LoopNestBuilder`: emits `loop` IR (loops, index arithmetic, loads,
stores, copies and fills) at one insertion point. Bufferization and loop
generation build through it, so what a loop looks like in IR is decided
here once.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, Signedness
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from ember.dialects import loop

INDEX = IndexType()


class LoopNestBuilder:
    """Emits loop nests, index arithmetic, loads and stores at one insertion point."""

    def __init__(self, builder: Builder):
        self.builder = builder

    def insert(self, op: Operation) -> Operation:
        return self.builder.insert(op)

    def index(self, value: int) -> SSAValue:
        return self.insert(arith.ConstantOp(IntegerAttr(value, INDEX))).results[0]

    def loop(
        self, lower: int, upper: int, step: int = 1, *, parallel: bool = False
    ) -> tuple[SSAValue, LoopNestBuilder]:
        """One loop from `lower` to `upper` (exclusive) by `step`; returns its
        induction variable and a builder for its body."""
        for_op = loop.ForOp(lower, upper, step, parallel=parallel)
        self.builder.insert(for_op)
        inner = Builder(InsertPoint.before(for_op.body.block.last_op))  # type: ignore[arg-type]
        return for_op.induction_variable, LoopNestBuilder(inner)

    def nest(
        self, extents: Sequence[int], parallel: Sequence[bool]
    ) -> tuple[list[SSAValue], Builder]:
        """Loops over `extents`, outermost first; returns the ivs and a builder
        for the innermost body. No extents (a 0-d buffer) still make one loop,
        of one iteration, so every memory access in a function is inside a loop
        nest (the unit that loop passes fuse and outline)."""
        builder = self.builder
        ivs: list[SSAValue] = []
        if not extents:
            for_op = loop.ForOp(0, 1, 1, parallel=True)
            builder.insert(for_op)
            return [], Builder(InsertPoint.before(for_op.body.block.last_op))  # type: ignore[arg-type]
        for extent, is_parallel in zip(extents, parallel):
            for_op = loop.ForOp(0, extent, 1, parallel=is_parallel)
            builder.insert(for_op)
            ivs.append(for_op.induction_variable)
            builder = Builder(InsertPoint.before(for_op.body.block.last_op))  # type: ignore[arg-type]
        return ivs, builder

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
        return self.insert(op_class(lhs, rhs)).results[0]

    def load(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return self.insert(memref.LoadOp.get(buffer, list(indices))).results[0]

    def store(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        self.insert(memref.StoreOp.get(value, buffer, list(indices)))

    def copy(self, source: SSAValue, dest: SSAValue) -> None:
        """dest[...] = source[...] for two buffers of one shape."""
        shape = source.type.get_shape()  # type: ignore[attr-defined]
        ivs, inner = self.nest(shape, [True] * len(shape))
        body = LoopNestBuilder(inner)
        body.store(body.load(source, ivs), dest, ivs)

    def fill(self, dest: SSAValue, value: FloatAttr | IntegerAttr) -> None:
        shape = dest.type.get_shape()  # type: ignore[attr-defined]
        ivs, inner = self.nest(shape, [True] * len(shape))
        body = LoopNestBuilder(inner)
        element = value.type
        if isinstance(element, IntegerType) and element.signedness.data != Signedness.SIGNLESS:
            # arith.constant takes signless integers: the same bits, reinterpreted.
            signless = IntegerType(element.width.data)
            bits = body.insert(arith.ConstantOp(IntegerAttr(value.value.data, signless)))
            constant = body.insert(arith.BitcastOp(bits.results[0], element)).results[0]
        else:
            constant = body.insert(arith.ConstantOp(value)).results[0]
        body.store(constant, dest, ivs)


__all__ = ["LoopNestBuilder"]
