"""Recurrent kernels: RNN, GRU and LSTM, a loop over the time steps per direction.

Each batch entry runs its own `sequence_lens` steps, clamped into [0, T]
(a reverse direction starts at its last one); past them its outputs are
zero and its states stay. The cells are ONNX's equations, in float64, with `clip` applied to
every gate's input before its activation (as onnxruntime does: not to the
cell state LSTM's output function reads).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ember.dialects.graph.ops_recurrent import CELLS, Activation, cell_activations

from ._registry import Attrs, Inputs, arg, register_all

Fn = Callable[[np.ndarray], np.ndarray]

_FUNCTIONS: dict[str, Callable[[np.ndarray, float, float], np.ndarray]] = {
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "Tanh": lambda x, a, b: np.tanh(x),
    "Sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "Affine": lambda x, a, b: a * x + b,
    "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "ThresholdedRelu": lambda x, a, b: np.where(x > a, x, 0.0),
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "Elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(np.minimum(x, 0)) - 1)),
    "Softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "Softplus": lambda x, a, b: np.logaddexp(0, x),
}


def _function(activation: Activation, clip: float | None) -> Fn:
    fn = _FUNCTIONS[activation.name]
    if clip is None:
        return lambda x: fn(x, activation.alpha, activation.beta)
    return lambda x: fn(np.clip(x, -clip, clip), activation.alpha, activation.beta)


def _split(value: np.ndarray, parts: int) -> list[np.ndarray]:
    return np.split(value, parts, axis=-1)


def _step(op_type: str, fns: list[Fn], attrs: Attrs, x: np.ndarray, h: np.ndarray,
          c: np.ndarray, w: np.ndarray, r: np.ndarray, bias: np.ndarray,
          peep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """One step of one direction's cell: the new (H, C)."""
    gates = CELLS[op_type].gates
    wb, rb = _split(bias, 2)
    if op_type == "RNN":
        return fns[0](x @ w.T + h @ r.T + wb + rb), c
    if op_type == "GRU":
        f, g = fns
        xz, xr, xh = _split(x @ w.T + wb, gates)
        rz, rr, rh = np.split(r, gates, axis=0)
        bz, br, bh = _split(rb, gates)
        z = f(xz + h @ rz.T + bz)
        reset = f(xr + h @ rr.T + br)
        if attrs.get("linear_before_reset", 0):
            candidate = g(xh + reset * (h @ rh.T + bh))
        else:
            candidate = g(xh + (reset * h) @ rh.T + bh)
        return (1 - z) * candidate + z * h, c
    f, g, out = fns
    i_in, o_in, f_in, c_in = _split(x @ w.T + h @ r.T + wb + rb, gates)
    pi, po, pf = _split(peep, 3)
    i = f(i_in + pi * c)
    forget = 1 - i if attrs.get("input_forget", 0) else f(f_in + pf * c)
    c_new = forget * c + i * g(c_in)
    o = f(o_in + po * c_new)
    return o * out(c_new), c_new


def recurrent(op_type: str, inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, w, r = (np.asarray(v, np.float64) for v in inputs[:3])
    bias, lens, h0 = arg(inputs, 3), arg(inputs, 4), arg(inputs, 5)
    c0, peep = (arg(inputs, 6), arg(inputs, 7)) if op_type == "LSTM" else (None, None)
    layout, direction = int(attrs.get("layout", 0)), attrs.get("direction", "forward")
    if layout:  # batch first: run on the time-major layout
        x = x.transpose(1, 0, 2)
        h0, c0 = (None if s is None else np.asarray(s).transpose(1, 0, 2) for s in (h0, c0))
    steps, batch, _ = x.shape
    directions, hidden = w.shape[0], r.shape[2]
    functions = cell_activations(op_type, direction, attrs.get("activations"),
                                 attrs.get("activation_alpha"), attrs.get("activation_beta"))  # fmt: skip
    clip = attrs.get("clip")
    # lengths outside [0, steps] (onnxruntime rejects them) are clamped into it
    lengths = (
        np.full(batch, steps) if lens is None else np.clip(np.asarray(lens, np.int64), 0, steps)
    )
    y = np.zeros((steps, directions, batch, hidden))
    y_h, y_c = np.zeros((directions, batch, hidden)), np.zeros((directions, batch, hidden))
    rows = np.arange(batch)
    for d in range(directions):
        # clip bounds the gates' inputs; LSTM's output function reads C, unclipped
        fns = [_function(a, None if (op_type, k) == ("LSTM", 2) else clip)
               for k, a in enumerate(functions[d])]  # fmt: skip
        b = np.zeros(2 * w.shape[1]) if bias is None else np.asarray(bias, np.float64)[d]
        p = np.zeros(3 * hidden) if peep is None else np.asarray(peep, np.float64)[d]
        h = np.zeros((batch, hidden)) if h0 is None else np.asarray(h0, np.float64)[d]
        c = np.zeros((batch, hidden)) if c0 is None else np.asarray(c0, np.float64)[d]
        backwards = direction == "reverse" or d == 1
        for step in range(steps):
            active = step < lengths
            t = np.clip(lengths - 1 - step if backwards else np.full(batch, step), 0, steps - 1)
            h_new, c_new = _step(op_type, fns, attrs, x[t, rows], h, c, w[d], r[d], b, p)
            h = np.where(active[:, None], h_new, h)
            c = np.where(active[:, None], c_new, c)
            y[t[active], d, rows[active]] = h_new[active]
        y_h[d], y_c[d] = h, c
    if layout:
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    outputs = [y, y_h, y_c] if op_type == "LSTM" else [y, y_h]
    return [o.astype(np.float32) for o in outputs]


for _op in CELLS:
    register_all([_op], lambda inputs, attrs, op_type=_op: recurrent(op_type, inputs, attrs))
