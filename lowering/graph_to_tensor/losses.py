"""Graph-to-tensor lowering of the losses.

NegativeLogLikelihoodLoss picks each element's score of its target class
with `ember_linalg.gather` (and its class weight, the same way), one
all-parallel generic makes the weighted, negated losses and the weights of
the counted elements (0 where the target is `ignore_index`, whose clamped
gather is never used), and "sum" and "mean" reduce them to a scalar (the
mean divides by the total weight). SoftmaxCrossEntropyLoss is the same loss
of the LogSoftmax of its scores over the class axis, which is also its
optional `log_prob` result.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ember.dialects import ember_linalg
from ember.dialects.graph import GraphOp, NegativeLogLikelihoodLossOp, SoftmaxCrossEntropyLossOp
from ember.lowering.graph_to_tensor.common import Body, Emitter, FamilyPattern, _elem, _shape
from ember.lowering.graph_to_tensor.normalization import softmax


def _pick(e: Emitter, data: SSAValue, target: SSAValue, address: list[AffineExpr]) -> SSAValue:
    """result[p] = data[address(p) with symbol 0 = target[p]]."""
    rank = len(_shape(target))
    point = AffineMap(rank, 0, tuple(AffineExpr.dimension(d) for d in range(rank)))
    maps = ([point], AffineMap(rank, 1, tuple(address)))
    result_type = TensorType(_elem(data), list(_shape(target)))
    return e.value(ember_linalg.GatherOp.on_tensors(data, target, result_type, maps))


def negative_log_likelihood(
    e: Emitter, op: GraphOp, x: SSAValue, target: SSAValue, weight: SSAValue | None
) -> SSAValue:
    """The loss of the scores `x` (N, C, ...) for `target` (N, ...), with the
    attributes of `op`."""
    shape, t = _shape(target), _elem(x)
    rank = len(shape)
    dims = [AffineExpr.dimension(d) for d in range(rank)]
    picked = _pick(e, x, target, [dims[0], AffineExpr.symbol(0), *dims[1:]])
    inputs = [picked, target]
    if weight is not None:
        inputs.append(_pick(e, weight, target, [AffineExpr.symbol(0)]))
    ignore = op.attr("ignore_index")

    def weight_of(b: Body, a: list[SSAValue]) -> SSAValue:
        w = a[2] if weight is not None else b.const(1, t)
        if ignore is None:
            return w
        return b.select(b.cmp("ne", a[1], b.const(ignore, a[1].type)), w, b.const(0, t))

    def loss_of(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.neg(b.mul(a[0], weight_of(b, a)))

    losses = e.parallel(inputs, shape, t, loss_of)
    reduction = op.attr("reduction")
    if reduction == "none":
        return losses
    every_axis = range(rank)
    total = e.reduction(losses, every_axis, 0, t, lambda b, a: b.add(a[1], a[0]))
    if reduction == "sum":
        return total
    weights = e.parallel(inputs, shape, t, weight_of)
    weight_total = e.reduction(weights, every_axis, 0, t, lambda b, a: b.add(a[1], a[0]))
    return e.parallel([total, weight_total], [], t, lambda b, a: b.div(a[0], a[1]))


def _optional(op: GraphOp, name: str) -> SSAValue | None:
    group = op.operand_group(name)
    return group[0] if group else None


def _lower_nll(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x, target = op.operands[0], op.operands[1]
    return [negative_log_likelihood(e, op, x, target, _optional(op, "weight"))]


def _lower_softmax_cross_entropy(e: Emitter, op: GraphOp) -> list[SSAValue]:
    scores, labels = op.operands[0], op.operands[1]
    log_prob = softmax(e, scores, 1, log=True)
    loss = negative_log_likelihood(e, op, log_prob, labels, _optional(op, "weights"))
    return [loss, log_prob][: len(op.results)]


class LossPattern(FamilyPattern):
    """NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss."""

    lowerings = {
        NegativeLogLikelihoodLossOp: _lower_nll,
        SoftmaxCrossEntropyLossOp: _lower_softmax_cross_entropy,
    }
