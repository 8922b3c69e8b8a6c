"""Kernels of the `ai.onnx.preview.training` update rules: Adagrad, Adam, Momentum.

Inputs are R, T, then X1..Xn, G1..Gn and each state group (Adagrad: H;
Adam: V, H; Momentum: V); outputs are the new X's, then each new state
group. Every rule first adds the gradient of the L2 regularisation term,
G' = norm_coefficient * X + G, and computes in float64, rounding each
result to X's type once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ember.dialects.graph.ops_training import STATES

from ._registry import Attrs, Inputs, register

Rule = Callable[[float, int, list[np.ndarray], Attrs], list[np.ndarray]]
"""(R, T, [X, G, *states] in float64, attributes) -> [X_new, *new states]."""


def adagrad_step(r: float, t: int, x: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """r / (1 + t * decay_factor) is the learning rate; H accumulates G'^2."""
    x0, g, h = x
    rate = r / (1 + t * attrs["decay_factor"])
    regularized = attrs["norm_coefficient"] * x0 + g
    h_new = h + regularized * regularized
    return [x0 - rate * regularized / (np.sqrt(h_new) + attrs["epsilon"]), h_new]


def adam_step(r: float, t: int, x: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """V and H are the running means of G' and G'^2 (weights alpha, beta);
    from T > 0 on the rate is bias-corrected: r * sqrt(1 - beta^T) / (1 - alpha^T)."""
    x0, g, v, h = x
    alpha, beta = attrs["alpha"], attrs["beta"]
    regularized = attrs["norm_coefficient"] * x0 + g
    v_new = alpha * v + (1 - alpha) * regularized
    h_new = beta * h + (1 - beta) * regularized * regularized
    rate = r * np.sqrt(1 - beta**t) / (1 - alpha**t) if t > 0 else r
    x_new = x0 - rate * (v_new / (np.sqrt(h_new) + attrs["epsilon"]))
    return [(1 - attrs["norm_coefficient_post"]) * x_new, v_new, h_new]


def momentum_step(r: float, t: int, x: list[np.ndarray], attrs: Attrs) -> list[np.ndarray]:
    """V_new = alpha * V + beta' * G' (beta' = 1 at T = 0, else beta); X moves
    by R * V_new, or with mode "nesterov" by R * (G' + alpha * V_new)."""
    x0, g, v = x
    alpha = attrs["alpha"]
    regularized = attrs["norm_coefficient"] * x0 + g
    v_new = alpha * v + (attrs["beta"] if t > 0 else 1.0) * regularized
    step = v_new if attrs["mode"] == "standard" else regularized + alpha * v_new
    return [x0 - r * step, v_new]


def _run(rule: Rule, groups: int) -> Callable[[Inputs, Attrs], list[np.ndarray]]:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        r, t = float(np.asarray(inputs[0])), int(np.asarray(inputs[1]))
        tensors = [np.asarray(v) for v in inputs[2:]]
        count = len(tensors) // groups
        outputs: list[list[np.ndarray]] = [[] for _ in range(groups - 1)]
        for i in range(count):
            operands = [tensors[k * count + i].astype(np.float64) for k in range(groups)]
            with np.errstate(all="ignore"):
                new = rule(r, t, operands, attrs)
            for slot, value in zip(outputs, new, strict=True):
                slot.append(np.asarray(value).astype(tensors[i].dtype))
        return [value for slot in outputs for value in slot]

    return kernel


for _op_type, _rule in (("Adagrad", adagrad_step), ("Adam", adam_step),
                       ("Momentum", momentum_step)):  # fmt: skip
    register(_op_type)(_run(_rule, 2 + len(STATES[_op_type])))  # X, G and the states
