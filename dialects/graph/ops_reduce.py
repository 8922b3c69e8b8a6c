"""Reductions: the ReduceX family (axes as an optional operand), ArgMax/ArgMin, the
running sums and products CumSum/CumProd, and TopK."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import IntegerType, TensorType, i64

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, UnknownValueError, result
from ember.dialects.graph.spec import OpSpec, int_attr, one, opt
from ember.dialects.graph.types import DYNAMIC


def reduced_shape(
    ctx: ShapeContext, shape: tuple[int, ...], axes: list[int], keepdims: bool
) -> list[int]:
    normalized = {ctx.normalize_axis(a, len(shape), "reduction axis") for a in axes}
    if len(normalized) != len(axes):
        raise ShapeError(f"axes {axes} repeat an axis")
    if keepdims:
        return [1 if i in normalized else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in normalized]


def reduce(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("data")
    element_type = ctx.element_type("data")
    keepdims = bool(ctx.attr("keepdims"))
    if ctx.has("axes"):
        axes = ctx.int_values("axes")
        if axes is None:
            rank = len(shape) if keepdims else DYNAMIC
            if rank == DYNAMIC:
                raise UnknownValueError("axes must be known at compile time when keepdims=0")
            return result(element_type, [DYNAMIC] * rank)
    else:
        axes = []
    if not axes:
        if ctx.attr("noop_with_empty_axes"):
            return result(element_type, shape)
        axes = list(range(len(shape)))
    return result(element_type, reduced_shape(ctx, shape, axes, keepdims))


def arg_reduce(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("data")
    return result(i64, reduced_shape(ctx, shape, [ctx.attr("axis")], bool(ctx.attr("keepdims"))))


def cumulative(ctx: ShapeContext) -> list[TensorType]:
    """CumSum/CumProd keep the input's type; `axis` is one integer."""
    axis_type = ctx.type("axis")
    if not isinstance(axis_type.element_type, IntegerType) or math.prod(axis_type.get_shape()) != 1:
        raise ShapeError(f"axis must be a single integer, got {axis_type}")
    axis = ctx.int_values("axis")
    if axis is not None:
        ctx.normalize_axis(int(axis[0]), len(ctx.shape("x")))
    return [ctx.type("x")]


def top_k(ctx: ShapeContext) -> list[TensorType]:
    """Values and i64 Indices: X's shape with K along `axis` (unknown while K is)."""
    shape = list(ctx.shape("X"))
    axis = ctx.normalize_axis(ctx.attr("axis"), len(shape))
    k_type = ctx.type("K")
    if k_type.element_type != i64 or math.prod(k_type.get_shape()) != 1:
        raise ShapeError(f"K must be a single i64, got {k_type}")
    k = ctx.int_values("K")
    if k is not None:
        count = k[0]
        if isinstance(count, int) and (
            count < 0 or (shape[axis] != DYNAMIC and count > shape[axis])
        ):
            raise ShapeError(f"K ({count}) must be in [0, {shape[axis]}] (the axis' size)")
        shape[axis] = count
    else:
        shape[axis] = DYNAMIC
    return [*result(ctx.element_type("X"), shape), *result(i64, shape)]


REDUCTIONS = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
              "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum")  # fmt: skip

SPECS = [
    OpSpec(name, [one("data"), opt("axes")], [one("reduced")], reduce,
           attributes=(int_attr("keepdims", 1), int_attr("noop_with_empty_axes", 0)),
           summary=f"ONNX {name} over axes (all axes when absent).")
    for name in REDUCTIONS
] + [
    OpSpec(name, [one("data")], [one("reduced")], arg_reduce,
           attributes=(int_attr("axis", 0), int_attr("keepdims", 1),
                       int_attr("select_last_index", 0)),
           summary=f"ONNX {name}: i64 indices along axis.")
    for name in ("ArgMax", "ArgMin")
] + [
    OpSpec(name, [one("x"), one("axis")], [one("y")], cumulative,
           attributes=(int_attr("exclusive", 0), int_attr("reverse", 0)),
           summary=f"ONNX {name}: running {kind} along axis (exclusive: without the element "
                   "itself; reverse: from the end).")
    for name, kind in (("CumSum", "sums"), ("CumProd", "products"))
] + [
    OpSpec("TopK", [one("X"), one("K")], [one("Values"), one("Indices")], top_k,
           attributes=(int_attr("axis", -1), int_attr("largest", 1), int_attr("sorted", 1)),
           summary="The K largest (or smallest) elements along axis and their indices, "
                   "in order; equal values in index order."),
]  # fmt: skip


# ----------------------------------------------------------- the op classes
# One class per row of SPECS, in table order; `graph_op` builds each from its
# row (tests/dialects/test_graph_op_classes.py holds the two together).


@graph_op(SPECS)
class ReduceMeanOp(GraphOp): ...


@graph_op(SPECS)
class ReduceSumOp(GraphOp): ...


@graph_op(SPECS)
class ReduceMaxOp(GraphOp): ...


@graph_op(SPECS)
class ReduceMinOp(GraphOp): ...


@graph_op(SPECS)
class ReduceProdOp(GraphOp): ...


@graph_op(SPECS)
class ReduceL1Op(GraphOp): ...


@graph_op(SPECS)
class ReduceL2Op(GraphOp): ...


@graph_op(SPECS)
class ReduceSumSquareOp(GraphOp): ...


@graph_op(SPECS)
class ReduceLogSumExpOp(GraphOp): ...


@graph_op(SPECS)
class ReduceLogSumOp(GraphOp): ...


@graph_op(SPECS)
class ArgMaxOp(GraphOp): ...


@graph_op(SPECS)
class ArgMinOp(GraphOp): ...


@graph_op(SPECS)
class CumSumOp(GraphOp): ...


@graph_op(SPECS)
class CumProdOp(GraphOp): ...


@graph_op(SPECS)
class TopKOp(GraphOp): ...
