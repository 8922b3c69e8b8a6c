"""Graph-to-tensor lowering of the `ai.onnx.preview.training` update rules
(Adagrad, Adam, Momentum).

Each result (a new tensor or a new state) is one all-parallel generic over
its tensor's shape, reading R and T (scalars, broadcast to every element),
the tensor, its gradient and its states. The body computes in f64 and
rounds the result to the tensor's type once, as the reference kernels
(`ember.reference.kernels.training`) do; the T > 0 cases are `arith.select`s.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import f64
from xdsl.ir import Attribute, SSAValue

from ember.dialects.graph import AdagradOp, AdamOp, GraphOp, MomentumOp
from ember.dialects.graph.ops_training import STATES
from ember.lowering.graph_to_tensor.common import Body, Emitter, FamilyPattern, _elem, _shape

StepFn = Callable[[Body, SSAValue, SSAValue, list[SSAValue]], list[SSAValue]]
"""(body, R, T, [X, G, *states]; all f64) -> [X_new, *new states], in f64."""


def _regularized(b: Body, x: SSAValue, g: SSAValue) -> SSAValue:
    """G' = norm_coefficient * X + G: the gradient with L2 regularisation."""
    return b.add(b.mul(b.const(b.attr("norm_coefficient"), f64), x), g)


def _sqrt(b: Body, v: SSAValue) -> SSAValue:
    return b.math(xmath.SqrtOp, v)


def _after_first(b: Body, t: SSAValue, later: SSAValue, first: SSAValue) -> SSAValue:
    """`later` once T > 0, else `first`."""
    return b.select(b.cmp("gt", t, b.const(0, f64)), later, first)


def _adagrad(b: Body, r: SSAValue, t: SSAValue, x: list[SSAValue]) -> list[SSAValue]:
    x0, g, h = x
    one = b.const(1, f64)
    rate = b.div(r, b.add(one, b.mul(t, b.const(b.attr("decay_factor"), f64))))
    reg = _regularized(b, x0, g)
    h_new = b.add(h, b.mul(reg, reg))
    scale = b.add(_sqrt(b, h_new), b.const(b.attr("epsilon"), f64))
    return [b.sub(x0, b.div(b.mul(rate, reg), scale)), h_new]


def _adam(b: Body, r: SSAValue, t: SSAValue, x: list[SSAValue]) -> list[SSAValue]:
    x0, g, v, h = x
    alpha, beta = b.attr("alpha"), b.attr("beta")
    one = b.const(1, f64)
    reg = _regularized(b, x0, g)
    v_new = b.add(b.mul(b.const(alpha, f64), v), b.mul(b.const(1 - alpha, f64), reg))
    h_new = b.add(b.mul(b.const(beta, f64), h), b.mul(b.mul(b.const(1 - beta, f64), reg), reg))

    def power(base: float) -> SSAValue:
        return b.math(xmath.PowFOp, b.const(base, f64), t)

    corrected = b.div(b.mul(r, _sqrt(b, b.sub(one, power(beta)))), b.sub(one, power(alpha)))
    rate = _after_first(b, t, corrected, r)
    scale = b.add(_sqrt(b, h_new), b.const(b.attr("epsilon"), f64))
    x_new = b.sub(x0, b.mul(rate, b.div(v_new, scale)))
    return [b.mul(b.const(1 - b.attr("norm_coefficient_post"), f64), x_new), v_new, h_new]


def _momentum(b: Body, r: SSAValue, t: SSAValue, x: list[SSAValue]) -> list[SSAValue]:
    x0, g, v = x
    alpha = b.const(b.attr("alpha"), f64)
    reg = _regularized(b, x0, g)
    beta = _after_first(b, t, b.const(b.attr("beta"), f64), b.const(1, f64))
    v_new = b.add(b.mul(alpha, v), b.mul(beta, reg))
    step = v_new if b.attr("mode") == "standard" else b.add(reg, b.mul(alpha, v_new))
    return [b.sub(x0, b.mul(r, step)), v_new]


def _update(step: StepFn) -> Callable[[Emitter, GraphOp], list[SSAValue]]:
    def lower(e: Emitter, op: GraphOp) -> list[SSAValue]:
        r, t = op.operand_group("R")[0], op.operand_group("T")[0]
        inputs = op.operand_group("inputs")
        groups = 2 + len(STATES[op.SPEC.onnx_type])
        count = len(inputs) // groups
        results: list[list[SSAValue]] = [[] for _ in range(groups - 1)]
        for i in range(count):
            operands = [r, t, *(inputs[k * count + i] for k in range(groups))]
            shape, elem = _shape(inputs[i]), _elem(inputs[i])
            for k, slot in enumerate(results):

                def body(
                    b: Body, args: list[SSAValue], k: int = k, elem: Attribute = elem
                ) -> SSAValue:
                    wide = [b.convert(a, f64) for a in args]
                    return b.convert(step(b, wide[0], wide[1], wide[2:])[k], elem)

                slot.append(e.parallel(operands, shape, elem, body))
        return [value for slot in results for value in slot]

    return lower


class TrainingPattern(FamilyPattern):
    """Adagrad, Adam and Momentum: one all-parallel generic per result."""

    lowerings = {AdagradOp: _update(_adagrad), AdamOp: _update(_adam),
                 MomentumOp: _update(_momentum)}  # fmt: skip
