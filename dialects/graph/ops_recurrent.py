"""Recurrent `graph` ops: ONNX RNN, GRU and LSTM (opset 22).

Each runs a cell over the time steps of X, forward, in reverse or both
(`direction`), from initial states (zeros by default), each batch entry
for its own `sequence_lens` steps. The three share their operands' layout:
W is [directions, gates * hidden, input], R [directions, gates * hidden,
hidden], B the input and recurrence biases side by side, and with
`layout = 1` the batch comes first in X, the states and the outputs.

`Cell` says what differs: the number of gates, their default activations
and whether the cell carries a second state (LSTM's C). `cell_activations`
resolves the `activations` attribute with its alphas and betas for each
direction; the reference kernel and the lowering share it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType, f32, i32

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result, same_element_type
from ember.dialects.graph.spec import (
    OpSpec,
    float_attr,
    floats_attr,
    int_attr,
    one,
    opt,
    string_attr,
    strings_attr,
)
from ember.dialects.graph.symbolic import Dim
from ember.dialects.graph.types import DYNAMIC, format_shape


@dataclass(frozen=True)
class Cell:
    gates: int
    activations: tuple[str, ...]
    """Defaults for one direction (f, g[, h] in ONNX's names)."""
    cell_state: bool = False


CELLS = {
    "RNN": Cell(1, ("Tanh",)),
    "GRU": Cell(3, ("Sigmoid", "Tanh")),
    "LSTM": Cell(4, ("Sigmoid", "Tanh", "Tanh"), cell_state=True),
}

ACTIVATION_DEFAULTS: dict[str, tuple[float | None, float | None]] = {
    "Relu": (None, None),
    "Tanh": (None, None),
    "Sigmoid": (None, None),
    "Softsign": (None, None),
    "Softplus": (None, None),
    "Affine": (1.0, 0.0),
    "LeakyRelu": (0.01, None),
    "ThresholdedRelu": (1.0, None),
    "ScaledTanh": (1.0, 1.0),
    "HardSigmoid": (0.2, 0.5),
    "Elu": (1.0, None),
}
"""The activations ONNX's recurrent ops take, with the (alpha, beta) each
reads (None: not read) and ONNX's defaults for them."""

DIRECTIONS = ("forward", "reverse", "bidirectional")


@dataclass(frozen=True)
class Activation:
    name: str
    alpha: float = 0.0
    beta: float = 0.0


def cell_activations(op_type: str, direction: str, names: list[str] | None,
                     alphas: list[float] | None,
                     betas: list[float] | None) -> list[list[Activation]]:  # fmt: skip
    """Per direction, the cell's activations with their alpha and beta: the
    listed ones (case-insensitive; one direction's list serves both), taking
    alphas and betas in order where they read one, or the defaults."""
    cell = CELLS[op_type]
    count, per = 2 if direction == "bidirectional" else 1, len(cell.activations)
    listed = list(names) if names else list(cell.activations) * count
    if len(listed) not in (per, 2 * per):
        raise ShapeError(f"activations lists {len(listed)} functions, {op_type} takes {per} "
                         f"per direction")  # fmt: skip
    # one direction's list serves both; a second direction's (RNN's default
    # lists two Tanh) is not read by a single direction
    listed = (listed * 2)[: per * count]
    by_lower = {n.lower(): n for n in ACTIVATION_DEFAULTS}
    alpha_values, beta_values = list(alphas or []), list(betas or [])
    resolved = []
    for name in listed:
        canonical = by_lower.get(name.lower())
        if canonical is None:
            raise ShapeError(
                f"unknown activation '{name}' (one of {', '.join(ACTIVATION_DEFAULTS)})"
            )
        alpha, beta = ACTIVATION_DEFAULTS[canonical]
        if alpha is not None and alpha_values:
            alpha = alpha_values.pop(0)
        if beta is not None and beta_values:
            beta = beta_values.pop(0)
        resolved.append(Activation(canonical, alpha or 0.0, beta or 0.0))
    return [resolved[d * per : (d + 1) * per] for d in range(count)]


def _expect(ctx: ShapeContext, name: str, shape: list[Dim]) -> None:
    actual = ctx.shape(name)
    if len(actual) != len(shape) or any(
        DYNAMIC not in (a, b) and a != b for a, b in zip(actual, shape)
    ):
        raise ShapeError(f"{name} must have shape {format_shape(shape)}, got "
                         f"{format_shape(actual)}")  # fmt: skip


def recurrent(ctx: ShapeContext) -> list[TensorType]:
    op_type = ctx.spec.onnx_type
    cell = CELLS[op_type]
    direction, layout = ctx.attr("direction"), ctx.attr("layout")
    if direction not in DIRECTIONS:
        raise ShapeError(f"unknown direction '{direction}' (one of {', '.join(DIRECTIONS)})")
    if layout not in (0, 1):
        raise ShapeError(f"layout must be 0 or 1, got {layout}")
    element_type = same_element_type(ctx, [ctx.type("X"), ctx.type("W"), ctx.type("R")])
    if element_type != f32:
        raise ShapeError(f"{op_type} needs f32 operands, got {element_type}")
    x = ctx.shape("X")
    if len(x) != 3:
        raise ShapeError(f"X must have rank 3, got {format_shape(x)}")
    steps, batch, features = (x[1], x[0], x[2]) if layout else x
    directions = 2 if direction == "bidirectional" else 1
    r = ctx.shape("R")
    hidden = ctx.attr("hidden_size") or (r[2] if len(r) == 3 else DYNAMIC)
    gates = cell.gates * hidden
    _expect(ctx, "W", [directions, gates, features])
    _expect(ctx, "R", [directions, gates, hidden])
    if ctx.has("B"):
        _expect(ctx, "B", [directions, 2 * gates])
    if ctx.has("sequence_lens"):
        _expect(ctx, "sequence_lens", [batch])
        if ctx.element_type("sequence_lens") != i32:
            raise ShapeError(f"sequence_lens must be i32, got {ctx.type('sequence_lens')}")
    state = [batch, directions, hidden] if layout else [directions, batch, hidden]
    for name in ("initial_h", "initial_c") if cell.cell_state else ("initial_h",):
        if ctx.has(name):
            _expect(ctx, name, state)
    if ctx.has("P"):
        _expect(ctx, "P", [directions, 3 * hidden])
    if cell.cell_state and ctx.attr("input_forget") not in (0, 1):
        raise ShapeError(f"input_forget must be 0 or 1, got {ctx.attr('input_forget')}")
    cell_activations(op_type, direction, ctx.attr("activations"), ctx.attr("activation_alpha"),
                     ctx.attr("activation_beta"))  # fmt: skip
    outputs = [batch, steps, directions, hidden] if layout else [steps, directions, batch, hidden]
    results = [*result(element_type, outputs), *result(element_type, state)]
    return results + (result(element_type, state) if cell.cell_state else [])


_COMMON = (
    floats_attr("activation_alpha"),
    floats_attr("activation_beta"),
    float_attr("clip"),
    string_attr("direction", "forward"),
    int_attr("hidden_size"),
    int_attr("layout", 0),
)
_OPERANDS = [one("X"), one("W"), one("R"), opt("B"), opt("sequence_lens"), opt("initial_h")]

SPECS = [
    OpSpec("RNN", _OPERANDS, [one("Y"), one("Y_h")], recurrent,
           attributes=(*_COMMON, strings_attr("activations", ["Tanh", "Tanh"])),
           summary="A simple recurrent layer over the time steps: H = f(X W^T + H R^T + b)."),
    OpSpec("GRU", _OPERANDS, [one("Y"), one("Y_h")], recurrent,
           attributes=(*_COMMON, strings_attr("activations"), int_attr("linear_before_reset", 0)),
           summary="A gated recurrent unit layer over the time steps (gates z, r, h)."),
    OpSpec("LSTM", [*_OPERANDS, opt("initial_c"), opt("P")], [one("Y"), one("Y_h"), one("Y_c")],
           recurrent, attributes=(*_COMMON, strings_attr("activations"), int_attr("input_forget", 0)),
           summary="A long short-term memory layer over the time steps (gates i, o, f, c)."),
]  # fmt: skip


@graph_op(SPECS)
class RNNOp(GraphOp): ...


@graph_op(SPECS)
class GRUOp(GraphOp): ...


@graph_op(SPECS)
class LSTMOp(GraphOp): ...
