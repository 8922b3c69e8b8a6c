"""Graph-to-tensor lowering of the shape queries family."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
)
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
from ember.dialects.graph.symbolic import SymExpr
from ember.dialects.graph.types import dense_from_array
from ember.lowering.graph_to_tensor.common import (
    Emitter,
    FamilyPattern,
    NeedsConstants,
    _constant_operands,
    _elem,
    _shape,
)

# ---------------------------------------------------------- shape queries


def _lower_shape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    dims = _shape(op.operands[0])[op.attr("start") : op.attr("end")]
    return [e.constant(np.array(dims, dtype=np.int64))]


def _lower_size(e: Emitter, op: GraphOp) -> list[SSAValue]:
    return [e.constant(np.array(math.prod(_shape(op.operands[0])), dtype=np.int64))]


def _lower_constant_of_shape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A splat `graph.constant` (one element stored); for symbolic sizes
    (the shape computed from symbolic dims) a `linalg.fill` of the result's
    shape, which shape inference computed from the shape operand."""
    value = op.attr("value")
    element = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(1)
    result_type = op.result_types[0]
    shape = _shape(op.results[0])
    if _symbolic(op):
        return [e.fill(element.item(), shape, _elem(op.results[0]))]
    attr = DenseIntOrFPElementsAttr(result_type, dense_from_array(element).data)  # type: ignore[arg-type]
    return [e.value(ConstantOp.build(result_types=[result_type], properties={"value": attr}))]


def _symbolic(op: GraphOp) -> bool:
    return any(isinstance(d, SymExpr) for d in _shape(op.results[0]))


def _constant_of_shape_unread(op: GraphOp) -> frozenset[str]:
    """A ConstantOfShape of symbolic sizes reads them from its result type."""
    return frozenset({"input"}) if _symbolic(op) else frozenset()


def _lower_range(e: Emitter, op: GraphOp) -> list[SSAValue]:
    from ember.reference.evaluate import evaluate

    arrays = [constant_value_of(v) for v in op.operands]
    return [e.constant(evaluate(op, arrays)[0])]


def _check_range(op: GraphOp) -> str | None:
    if _constant_operands(op, "start", "limit", "delta"):
        return None
    return NeedsConstants("non-constant operands")


class ShapeQueryPattern(FamilyPattern):
    """Shape, Size, ConstantOfShape and Range become `graph.constant`s (a
    ConstantOfShape of symbolic sizes a fill)."""

    lowerings = {ShapeOp: _lower_shape, SizeOp: _lower_size,
                 ConstantOfShapeOp: _lower_constant_of_shape, RangeOp: _lower_range}  # fmt: skip
    checks = {RangeOp: _check_range}
    symbolic = frozenset({ConstantOfShapeOp})
    unread = {ConstantOfShapeOp: _constant_of_shape_unread}
