"""Graph-to-tensor lowering of the shape queries family."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue

from ember.dialects.graph import (
    ConstantOfShapeOp,
    ConstantOp,
    GraphOp,
    RangeOp,
    ShapeOp,
    SizeOp,
    constant_value_of,
)
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.graph.types import is_float
from ember.lowering.graph_to_tensor.common import (
    Body,
    Emitter,
    FamilyPattern,
    NeedsConstants,
    _constant_operands,
    _elem,
    _shape,
)

# ---------------------------------------------------------- shape queries


def _symbolic(dims: Sequence[Dim]) -> bool:
    return any(isinstance(d, SymExpr) for d in dims)


def _lower_shape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A `graph.constant` of the dims; where some are symbolic (their values
    used as data, say in index arithmetic), a `tensor.from_elements` of the
    sizes, each an `arith.index_cast` of its index value."""
    dims = _shape(op.operands[0])[op.attr("start") : op.attr("end")]
    if not _symbolic(dims):
        return [e.constant(np.array(dims, dtype=np.int64))]
    elements = [e.value(arith.IndexCastOp(e.sizes.size(d), i64)) if isinstance(d, SymExpr)
                else e.value(arith.ConstantOp(IntegerAttr(d, i64))) for d in dims]  # fmt: skip
    return [e.value(tensor.FromElementsOp(*elements))]


def _lower_size(e: Emitter, op: GraphOp) -> list[SSAValue]:
    return [e.constant(np.array(math.prod(_shape(op.operands[0])), dtype=np.int64))]


def _lower_constant_of_shape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A splat `graph.constant` (one element stored); for symbolic sizes
    (the shape computed from symbolic dims) a `linalg.fill` of the result's
    shape, which shape inference computed from the shape operand."""
    assert isinstance(op, ConstantOfShapeOp)
    if _symbolic(_shape(op.results[0])):
        return [e.fill(op.element().item(), _shape(op.results[0]), _elem(op.results[0]))]
    splat = ConstantOp.build(result_types=op.result_types, properties={"value": op.splat()})
    return [e.value(splat)]


def _constant_of_shape_unread(op: GraphOp) -> frozenset[str]:
    """A ConstantOfShape of symbolic sizes reads them from its result type."""
    return frozenset({"input"}) if _symbolic(_shape(op.results[0])) else frozenset()


def _lower_range(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A `graph.constant` of the values; with a limit computed at run time
    (`Range(0, S)`, the position ids of a sequence) a generic writing
    start + i * delta at each position i (the size is the result type's,
    which shape inference computed from the limit)."""
    from ember.reference.evaluate import evaluate

    arrays = [constant_value_of(v) for v in op.operands]
    if all(a is not None for a in arrays):
        return [e.constant(evaluate(op, arrays)[0])]
    t = _elem(op.results[0])
    start, delta = (np.asarray(a).reshape(()).item() for a in (arrays[0], arrays[2]))

    def value(b: Body, args: list[SSAValue]) -> SSAValue:
        position = b.emit(linalg.IndexOp(0))
        if is_float(t):
            i = b.emit(arith.SIToFPOp(b.emit(arith.IndexCastOp(position, i64)), t))
        else:
            i = b.emit(arith.IndexCastOp(position, t))
        scaled = i if delta == 1 else b.mul(i, b.const(delta, t))
        # 0.0 + x is x but for x = -0.0 (0 * a negative float delta)
        if start == 0 and (delta > 0 or not is_float(t)):
            return scaled
        return b.add(b.const(start, t), scaled)

    return [e.parallel([], _shape(op.results[0]), t, value)]


def _check_range(op: GraphOp) -> str | None:
    if _constant_operands(op, "start", "delta"):
        return None
    return NeedsConstants("start and delta must be constants")


def _range_unread(op: GraphOp) -> frozenset[str]:
    """A Range with constant start and delta reads its size from its result type."""
    return frozenset({"limit"}) if _check_range(op) is None else frozenset()


class ShapeQueryPattern(FamilyPattern):
    """Shape, Size, ConstantOfShape and Range become `graph.constant`s (a
    Shape of symbolic dims a `tensor.from_elements` of their sizes, a
    ConstantOfShape of symbolic sizes a fill, a Range to a limit computed at
    run time a generic)."""

    lowerings = {ShapeOp: _lower_shape, SizeOp: _lower_size,
                 ConstantOfShapeOp: _lower_constant_of_shape, RangeOp: _lower_range}  # fmt: skip
    checks = {RangeOp: _check_range}
    symbolic = frozenset({ShapeOp, ConstantOfShapeOp, RangeOp})
    unread = {ConstantOfShapeOp: _constant_of_shape_unread, RangeOp: _range_unread}
