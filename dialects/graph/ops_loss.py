"""Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

Both take class scores laid out (N, C, d1, ..., dk), targets (N, d1, ..., dk)
of class indices, and optional per-class weights (C); `reduction` is "none"
(the per-element losses, shaped like the targets), "sum" or "mean" (a
scalar; the mean divides by the total weight of the counted elements).
Elements whose target is `ignore_index` count nothing.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType, i1

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.shapes import ShapeContext, ShapeError, dims_compatible, result
from ember.dialects.graph.spec import OpSpec, int_attr, one, opt, string_attr
from ember.dialects.graph.types import is_float

REDUCTIONS = ("none", "sum", "mean")


def loss(ctx: ShapeContext) -> list[TensorType]:
    """Shared by both losses: their operands are (scores, targets, weights) in
    ONNX order, whatever ONNX names them."""
    scores_name, targets_name, weights_name = (o.name for o in ctx.spec.operands)
    scores, targets = ctx.type(scores_name), ctx.type(targets_name)
    shape = symbolic_shape(scores)
    element_type = scores.element_type
    if not is_float(element_type):
        raise ShapeError(f"{scores_name} must be a floating-point tensor, got {scores}")
    if len(shape) < 2:
        raise ShapeError(f"{scores_name} must have rank >= 2 (N, C, ...), got {scores}")
    if not isinstance(targets.element_type, IntegerType) or targets.element_type == i1:
        raise ShapeError(f"{targets_name} must be an integer tensor, got {targets}")
    expected = (shape[0], *shape[2:])
    target_shape = symbolic_shape(targets)
    if len(target_shape) != len(expected) or not all(
        dims_compatible(a, b) for a, b in zip(target_shape, expected)
    ):
        raise ShapeError(
            f"{targets_name} {list(target_shape)} must be {scores_name}'s shape without "
            f"its class axis, {list(expected)}"
        )
    weights = ctx.optional_type(weights_name)
    if weights is not None:
        if weights.element_type != element_type or len(symbolic_shape(weights)) != 1:
            raise ShapeError(f"{weights_name} must be a vector of {element_type}, got {weights}")
        if not dims_compatible(symbolic_shape(weights)[0], shape[1]):
            raise ShapeError(f"{weights_name} must have one weight per class ({shape[1]})")
    reduction = ctx.attr("reduction")
    if reduction not in REDUCTIONS:
        raise ShapeError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    results = result(element_type, expected if reduction == "none" else [])
    if ctx.num_results > 1:  # SoftmaxCrossEntropyLoss's log_prob
        results += result(element_type, shape)
    return results


_ATTRIBUTES = (int_attr("ignore_index"), string_attr("reduction", "mean"))

SPECS = [
    OpSpec("NegativeLogLikelihoodLoss", [one("input"), one("target"), opt("weight")],
           [one("loss")], loss, attributes=_ATTRIBUTES,
           summary="-input[n, target[n, d], d] * weight[target[n, d]], reduced."),
    OpSpec("SoftmaxCrossEntropyLoss", [one("scores"), one("labels"), opt("weights")],
           [one("output"), opt("log_prob")], loss, attributes=_ATTRIBUTES,
           summary="NegativeLogLikelihoodLoss of LogSoftmax(scores) over the class axis."),
]  # fmt: skip


# ----------------------------------------------------------- the op classes


@graph_op(SPECS)
class NegativeLogLikelihoodLossOp(GraphOp): ...


@graph_op(SPECS)
class SoftmaxCrossEntropyLossOp(GraphOp): ...
