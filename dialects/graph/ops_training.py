"""Optimiser update rules of ONNX's `ai.onnx.preview.training` domain:
`graph.adagrad`, `graph.adam` and `graph.momentum`.

Each updates n tensors at once. Its operands are the learning rate `R` (a
float scalar), the update count `T` (an int64 scalar) and `inputs`: the n
tensors to optimise, then their n gradients, then each state the rule keeps
per tensor, n at a time:

| op       | `inputs`                          | results                            |
|----------|-----------------------------------|------------------------------------|
| Adagrad  | X1..Xn, G1..Gn, H1..Hn            | X1_new..Xn_new, H1_new..Hn_new     |
| Adam     | X1..Xn, G1..Gn, V1..Vn, H1..Hn    | X_new's, V_new's, H_new's          |
| Momentum | X1..Xn, G1..Gn, V1..Vn            | X_new's, V_new's                   |

Every group's i-th tensor has the type of Xi, and so do the results. The
rules are elementwise; `R` and `T` apply to every element
(ember.reference.kernels.training spells them out).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, i64

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError
from ember.dialects.graph.spec import (
    TRAINING_DOMAIN,
    AttrSpec,
    OpSpec,
    float_attr,
    many,
    one,
    string_attr,
)
from ember.dialects.graph.types import is_float

STATES = {"Adagrad": ("H",), "Adam": ("V", "H"), "Momentum": ("V",)}
"""The per-tensor states of each rule, in the order `inputs` and the results
list them (after the tensors X, and for `inputs` their gradients G)."""

MOMENTUM_MODES = ("standard", "nesterov")


def _scalar(ctx: ShapeContext, name: str, what: str) -> None:
    if ctx.rank(name) != 0:
        raise ShapeError(f"{name} must be a scalar (the {what}), got {ctx.type(name)}")


def optimizer(ctx: ShapeContext) -> list[TensorType]:
    """The types of X1..Xn, then of each state group, after checking that R
    is a float scalar, T an int64 scalar, and the groups line up."""
    _scalar(ctx, "R", "learning rate")
    if not is_float(ctx.element_type("R")):
        raise ShapeError(f"R must be a floating-point scalar, got {ctx.type('R')}")
    _scalar(ctx, "T", "update count")
    if ctx.element_type("T") != i64:
        raise ShapeError(f"T must be an int64 scalar, got {ctx.type('T')}")
    op_type = ctx.spec.onnx_type
    groups = ("X", "G", *STATES[op_type])
    inputs = list(ctx.types("inputs"))
    if not inputs or len(inputs) % len(groups):
        raise ShapeError(
            f"{op_type} takes {', '.join(groups)} for each tensor it updates: the number of "
            f"inputs after R and T must be a positive multiple of {len(groups)}, got {len(inputs)}"
        )
    count = len(inputs) // len(groups)
    tensors = inputs[:count]
    for position, group in enumerate(groups[1:], 1):
        for index in range(count):
            given = inputs[position * count + index]
            if given != tensors[index]:
                raise ShapeError(
                    f"{group}{index + 1} must have the type of X{index + 1} "
                    f"({tensors[index]}), got {given}"
                )
    for index, tensor in enumerate(tensors):
        if not is_float(tensor.element_type):
            raise ShapeError(f"X{index + 1} must be a floating-point tensor, got {tensor}")
    expected = count * (len(groups) - 1)
    if ctx.num_results != expected:
        raise ShapeError(
            f"{op_type} of {count} tensor(s) gives {expected} outputs, "
            f"{ctx.num_results} are asked for"
        )
    if op_type == "Momentum" and ctx.attr("mode") not in MOMENTUM_MODES:
        raise ShapeError(
            f"mode must be one of {', '.join(MOMENTUM_MODES)}, got '{ctx.attr('mode')}'"
        )
    states = [inputs[(2 + k) * count : (3 + k) * count] for k in range(len(groups) - 2)]
    return [*tensors, *(t for group in states for t in group)]


def _rule(name: str, attributes: tuple[AttrSpec, ...], summary: str) -> OpSpec:
    return OpSpec(name, [one("R"), one("T"), many("inputs")], [many("outputs")], optimizer,
                  attributes=attributes, summary=summary, domain=TRAINING_DOMAIN)  # fmt: skip


SPECS: list[OpSpec] = [
    _rule("Adagrad", (float_attr("decay_factor", 0.0), float_attr("epsilon", 1e-6),
                      float_attr("norm_coefficient", 0.0)),
          "One Adagrad step: X - R / (1 + T * decay_factor) * G' / (sqrt(H + G'^2) + epsilon)."),
    _rule("Adam", (float_attr("alpha", 0.9), float_attr("beta", 0.999),
                   float_attr("epsilon", 1e-6), float_attr("norm_coefficient", 0.0),
                   float_attr("norm_coefficient_post", 0.0)),
          "One Adam step, with bias correction once T > 0."),
    _rule("Momentum", (float_attr("alpha", required=True), float_attr("beta", required=True),
                       string_attr("mode", required=True),
                       float_attr("norm_coefficient", required=True)),
          "One step of gradient descent with momentum (standard or Nesterov)."),
]  # fmt: skip


@graph_op(SPECS)
class AdagradOp(GraphOp): ...


@graph_op(SPECS)
class AdamOp(GraphOp): ...


@graph_op(SPECS)
class MomentumOp(GraphOp): ...
