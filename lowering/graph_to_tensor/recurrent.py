"""Graph-to-tensor lowering of RNN, GRU and LSTM: per direction, one loop
over the time steps (`scf.for` on tensors), not a copy of the cell per step.

With `layout = 1` X and the initial states are transposed to time-major
first and the outputs back at the end. Then, per direction:

- A backwards direction runs forwards over its input reversed per batch
  entry: an `ember_linalg.gather` of X by `rev[t, b] = t < len[b] ? len[b]
  - 1 - t : t` (`len` the `sequence_lens` clamped into [0, T], or T), a
  generic over `linalg.index`; its Y is gathered back by the same table.
- The input projection of every step at once: X as `[T * B, I]` times W^T
  (one `linalg.matmul`) plus W's bias, `[T, B, G * H]` for G gates.
- `scf.for` over the steps carrying the state (`[1, B, H]`; LSTM's cell
  state too) and Y (`[T, B, H]`, zeros at first). Its body extracts step t
  of the projection, multiplies the state by R^T (one `linalg.matmul`;
  GRU without `linear_before_reset` multiplies the reset state by the
  candidate's part of R in a second one) and computes the gates and the new
  states in one generic over `[1, B, H]`, each gate reading its columns of
  the projections through an offset map. With `sequence_lens` the generic
  also reads `t < len[b]` (a `[T, B]` i1 table computed before the loop):
  entries past their length keep their states and write 0 into Y. The
  step's output is inserted into Y at t.

The directions' Y are concatenated along the direction axis, their last
states stacked. Activations (with their alphas and betas) are the ops'
scalar functions; `clip` bounds every gate's input, not the cell state
LSTM's output function reads (as `ember.reference` and onnxruntime do).
T and B may be symbolic; the feature and hidden sizes are static.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, f32, i1, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ember.dialects import ember_linalg
from ember.dialects.graph import GraphOp, GRUOp, LSTMOp, RNNOp, constant_value_of
from ember.dialects.graph.dims import symbolic_type
from ember.dialects.graph.ops_recurrent import CELLS, Activation, cell_activations
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    Body,
    Emitter,
    FamilyPattern,
    _dim,
    _dims_map,
    _identity,
    _map,
    _matmul,
    _shape,
    _transpose,
)
from ember.lowering.graph_to_tensor.elementwise import (
    _clamp01,
    _sigmoid,
    _softplus_of,
    _softsign,
)

ScalarFn = Callable[[Body, SSAValue, Activation], SSAValue]


def _const(b: Body, value: float) -> SSAValue:
    return b.const(value, f32)


def _negative(b: Body, v: SSAValue) -> SSAValue:
    return b.cmp("lt", v, _const(b, 0))


ACTIVATIONS: dict[str, ScalarFn] = {
    "Relu": lambda b, v, a: b.max(v, _const(b, 0)),
    "Tanh": lambda b, v, a: b.math(xmath.TanhOp, v),
    "Sigmoid": lambda b, v, a: _sigmoid(b, [v], f32),
    "Affine": lambda b, v, a: b.add(b.mul(_const(b, a.alpha), v), _const(b, a.beta)),
    "LeakyRelu": lambda b, v, a: b.select(_negative(b, v), b.mul(_const(b, a.alpha), v), v),
    "ThresholdedRelu": lambda b, v, a: b.select(
        b.cmp("gt", v, _const(b, a.alpha)), v, _const(b, 0)
    ),
    "ScaledTanh": lambda b, v, a: b.mul(
        _const(b, a.alpha), b.math(xmath.TanhOp, b.mul(_const(b, a.beta), v))
    ),
    "HardSigmoid": lambda b, v, a: _clamp01(
        b, b.add(b.mul(_const(b, a.alpha), v), _const(b, a.beta))
    ),
    "Elu": lambda b, v, a: b.select(
        _negative(b, v), b.mul(_const(b, a.alpha), b.math(xmath.ExpM1Op, v)), v
    ),
    "Softsign": lambda b, v, a: _softsign(b, [v], f32),
    "Softplus": lambda b, v, a: _softplus_of(b, v),
}
"""The scalar body of each activation ONNX's recurrent ops take."""


@dataclass
class _Reads:
    """The inputs of the cell's generic, by name, each with its map from the
    `[1, B, H]` space (dims u, b, j)."""

    values: list[SSAValue] = field(default_factory=list)
    maps: list[AffineMap] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, value: SSAValue | None, results: Sequence[AffineExpr]) -> None:
        if value is None:
            return
        self.names[name] = len(self.values)
        self.values.append(value)
        self.maps.append(AffineMap(3, 0, tuple(results)))

    def columns(self, name: str, value: SSAValue | None, gate: int) -> None:
        """`value` (`[1, B, G, H]`, `[B, G, H]` or `[G, H]`) read at `gate`."""
        if value is None:
            return
        leading = [[], [_dim(1)], [_dim(0), _dim(1)]][len(_shape(value)) - 2]
        self.add(name, value, [*leading, AffineExpr.constant(gate), _dim(2)])


@dataclass
class _Direction:
    """What one direction's loop reads: its weights (R^T as `[H, G * H]`, or
    GRU's split), biases and activations."""

    recurrence: SSAValue
    candidate: SSAValue | None
    """GRU without linear_before_reset: R^T of the candidate gate, `[H, H]`."""
    recurrence_bias: SSAValue | None
    peepholes: SSAValue | None
    functions: list[Callable[[Body, SSAValue], SSAValue]]


def _function(activation: Activation, clip: float | None) -> Callable[[Body, SSAValue], SSAValue]:
    fn = ACTIVATIONS[activation.name]
    if clip is None:
        return lambda b, v: fn(b, v, activation)
    return lambda b, v: fn(b, b.min(b.max(v, _const(b, -clip)), _const(b, clip)), activation)


def _operand(op: GraphOp, name: str) -> SSAValue | None:
    if name not in op.FIELD_NAMES:
        return None
    group = op.operand_group(name)
    return group[0] if group else None


def _matrix(e: Emitter, value: SSAValue, d: int, start: int, size: int) -> SSAValue:
    """Rows start..start+size of direction d of W or R (`[D, rows, cols]`),
    transposed (`[cols, size]`): sliced now when a constant."""
    array = constant_value_of(value)
    if array is not None:
        return e.constant(np.ascontiguousarray(array[d, start : start + size].T))
    cols = _shape(value)[2]
    part = e.reshape(e.extract(value, [d, start, 0], [1, size, cols]), [size, cols])
    return _transpose(e, part, [1, 0])


def _by_gate(e: Emitter, value: SSAValue, d: int, start: int, size: int,
             hidden: int) -> SSAValue:  # fmt: skip
    """Entries start..start+size of direction d of B or P (`[D, n]`), one row
    per gate (`[size / hidden, hidden]`): sliced now when a constant."""
    array = constant_value_of(value)
    rows = size // hidden
    if array is not None:
        return e.constant(
            np.ascontiguousarray(array[d, start : start + size].reshape(rows, hidden))
        )
    return e.reshape(e.extract(value, [d, start], [1, size]), [rows, hidden])


def _by_step(e: Emitter, op: GraphOp, steps: Dim, batch: Dim,
             body: Callable[[Body, SSAValue, SSAValue], SSAValue], t: Attribute) -> SSAValue:  # fmt: skip
    """A generic over `[T, B]` of `body(b, step, length)` (both i64): the step
    from `linalg.index`, the length each batch entry's `sequence_lens`
    clamped into [0, T] (T without them)."""
    if isinstance(steps, SymExpr):
        count = e.value(arith.IndexCastOp(e.sizes.size(steps), i64))
        total = e.value(tensor.FromElementsOp(count))
    else:
        total = e.constant(np.array([steps], np.int64))
    lens = _operand(op, "sequence_lens")
    tables = [total] if lens is None else [total, lens]
    maps = [_map(2, [0]), _dims_map(2, [1])][: len(tables)]

    def value(b: Body, args: list[SSAValue]) -> SSAValue:
        step = b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(0)), i64))
        length = args[0]
        if lens is not None:
            length = b.min(b.max(b.convert(args[1], i64), b.const(0, i64)), length)
        return body(b, step, length)

    return e.parallel(tables, [steps, batch], t, value, maps=maps)


def _reversed_steps(e: Emitter, op: GraphOp, steps: Dim, batch: Dim) -> SSAValue:
    """`rev[t, b]`: the step a backwards direction reads at step t."""

    def rev(b: Body, step: SSAValue, length: SSAValue) -> SSAValue:
        last = b.sub(b.sub(length, b.const(1, i64)), step)
        return b.select(b.cmp("lt", step, length), last, step)

    return _by_step(e, op, steps, batch, rev, i64)


def _active(e: Emitter, op: GraphOp, steps: Dim, batch: Dim) -> SSAValue | None:
    """`t < len[b]` over `[T, B]`, with `sequence_lens` (else every step runs)."""
    if _operand(op, "sequence_lens") is None:
        return None
    return _by_step(e, op, steps, batch, lambda b, step, length: b.cmp("lt", step, length), i1)


def _by_steps(e: Emitter, x: SSAValue, rev: SSAValue) -> SSAValue:
    """x[rev[t, b], b, :] for x of `[T, B, N]`."""
    dims = [AffineExpr.dimension(d) for d in range(3)]
    maps = ([AffineMap(3, 0, (dims[0], dims[1]))],
            AffineMap(3, 1, (AffineExpr.symbol(0), dims[1], dims[2])))  # fmt: skip
    return e.value(ember_linalg.GatherOp.on_tensors(x, rev, x.type, maps))


def _cell(op: GraphOp, b: Body, a: list[SSAValue], reads: _Reads,
          direction: _Direction) -> list[SSAValue]:  # fmt: skip
    """The new states (H, and C for LSTM) of one element."""

    def get(name: str) -> SSAValue | None:
        return a[reads.names[name]] if name in reads.names else None

    def gate(k: int, extra: SSAValue | None = None) -> SSAValue:
        total = b.add(get(f"x{k}"), get(f"h{k}"))  # type: ignore[arg-type]
        for term in (get(f"rb{k}"), extra):
            if term is not None:
                total = b.add(total, term)
        return total

    f = direction.functions
    h = get("h")
    assert h is not None
    if isinstance(op, RNNOp):
        return [f[0](b, gate(0))]
    if isinstance(op, GRUOp):
        z, reset = f[0](b, gate(0)), f[0](b, gate(1))
        recur = get("h2")
        assert recur is not None
        if op.attr("linear_before_reset"):
            bias = get("rb2")
            inner = recur if bias is None else b.add(recur, bias)
            candidate = f[1](b, b.add(get("x2"), b.mul(reset, inner)))  # type: ignore[arg-type]
        else:
            candidate = f[1](b, gate(2))
        one = _const(b, 1)
        return [b.add(b.mul(b.sub(one, z), candidate), b.mul(z, h))]
    c = get("c")
    assert c is not None

    def peep(k: int, state: SSAValue) -> SSAValue | None:
        weight = get(f"p{k}")
        return None if weight is None else b.mul(weight, state)

    i = f[0](b, gate(0, peep(0, c)))
    forget = b.sub(_const(b, 1), i) if op.attr("input_forget") else f[0](b, gate(2, peep(2, c)))
    c_new = b.add(b.mul(forget, c), b.mul(i, f[1](b, gate(3))))
    o = f[0](b, gate(1, peep(1, c_new)))
    return [b.mul(o, f[2](b, c_new)), c_new]


def _reset_state(e: Emitter, x_t: SSAValue, recur: SSAValue, h: SSAValue,
                 direction: _Direction) -> SSAValue:  # fmt: skip
    """GRU without linear_before_reset: (r * H) @ R_h^T, `[B, 1, H]`."""
    reads = _Reads()
    reads.columns("x", x_t, 1)
    reads.columns("h", recur, 1)
    reads.columns("rb", direction.recurrence_bias, 1)
    reads.add("state", h, [_dim(0), _dim(1), _dim(2)])
    shape = _shape(h)

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        get = {name: a[index] for name, index in reads.names.items()}
        total = b.add(get["x"], get["h"])
        if "rb" in get:
            total = b.add(total, get["rb"])
        return [b.mul(direction.functions[0](b, total), get["state"])]

    reset = e.generic(reads.values, [e.empty(shape, f32)], [*reads.maps, _identity(3)],
                      [PARALLEL] * 3, body)[0]  # fmt: skip
    assert direction.candidate is not None
    _, batch, hidden = shape
    product = _matmul(e, e.reshape(reset, [batch, hidden]), direction.candidate)
    return e.reshape(product, [batch, 1, hidden])


def _loop(e: Emitter, op: GraphOp, projection: SSAValue, states: list[SSAValue],
          active: SSAValue | None, direction: _Direction) -> list[SSAValue]:  # fmt: skip
    """The `scf.for` over the steps: its results, the last states then Y."""
    steps, batch, gates, hidden = _shape(projection)
    assert isinstance(hidden, int) and isinstance(gates, int)
    y = e.fill(0.0, [steps, batch, hidden], f32)
    inits = [*states, y]
    block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    t, *carried = block.args
    inner = e.inside(block)
    x_t = inner.extract(projection, [t, 0, 0, 0], [1, batch, gates, hidden])
    h = carried[0]
    product = _matmul(inner, inner.reshape(h, [batch, hidden]), direction.recurrence)
    recur = inner.reshape(product, [batch, _shape(product)[1] // hidden, hidden])  # type: ignore[operator]
    reads = _Reads()
    identity = [_dim(0), _dim(1), _dim(2)]
    reads.add("h", h, identity)  # first: the space's extents are the state's
    for k in range(gates):
        reads.columns(f"x{k}", x_t, k)
        reads.columns(f"rb{k}", direction.recurrence_bias, k)
        if k < _shape(recur)[1]:  # type: ignore[operator]
            reads.columns(f"h{k}", recur, k)
    if direction.candidate is not None:  # GRU: the candidate's recurrence of the reset state
        reads.columns("h2", _reset_state(inner, x_t, recur, h, direction), 0)
    if isinstance(op, LSTMOp):
        reads.add("c", carried[1], identity)
        for k in range(3):
            reads.columns(f"p{k}", direction.peepholes, k)
    mask = None if active is None else inner.extract(active, [t, 0], [1, batch])
    reads.add("active", mask, [_dim(0), _dim(1)])
    count = len(states)
    shape = _shape(h)

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        new = _cell(op, b, a, reads, direction)
        if mask is None:
            return new
        keep = a[reads.names["active"]]
        kept = [b.select(keep, n, a[reads.names[name]]) for n, name in zip(new, ("h", "c"))]
        return [*kept, b.select(keep, new[0], _const(b, 0))]

    outputs = count + (mask is not None)
    new = inner.generic(reads.values, [inner.empty(shape, f32) for _ in range(outputs)],
                        [*reads.maps, *[_identity(3)] * outputs], [PARALLEL] * 3, body)  # fmt: skip
    y_next = inner.insert(new[-1] if mask is not None else new[0], carried[-1], [t, 0, 0])
    block.add_op(scf.YieldOp(*new[:count], y_next))
    bounds = [e.sizes.size(d) for d in (0, steps, 1)]
    loop = e.emit(scf.ForOp(*bounds, inits, block))
    return list(loop.results)


def _directions(e: Emitter, op: GraphOp, hidden: int) -> list[_Direction]:
    cell = CELLS[op.SPEC.onnx_type]
    names = cell_activations(op.SPEC.onnx_type, op.attr("direction"), op.attr("activations"),
                             op.attr("activation_alpha"), op.attr("activation_beta"))  # fmt: skip
    r, bias, peepholes = _operand(op, "R"), _operand(op, "B"), _operand(op, "P")
    assert r is not None
    width = cell.gates * hidden
    split = isinstance(op, GRUOp) and not op.attr("linear_before_reset")
    clip = op.attr("clip")
    result = []
    for d, activations in enumerate(names):
        functions = [_function(a, None if (isinstance(op, LSTMOp) and k == 2) else clip)
                     for k, a in enumerate(activations)]  # fmt: skip
        result.append(_Direction(
            _matrix(e, r, d, 0, 2 * hidden if split else width),
            _matrix(e, r, d, 2 * hidden, hidden) if split else None,
            None if bias is None else _by_gate(e, bias, d, width, width, hidden),
            None if peepholes is None else _by_gate(e, peepholes, d, 0, 3 * hidden, hidden),
            functions,
        ))  # fmt: skip
    return result


def _projection(e: Emitter, op: GraphOp, x: SSAValue, d: int, gates: int,
                hidden: int) -> SSAValue:  # fmt: skip
    """X W^T + W's bias for direction d, `[T, B, G, H]`."""
    w, bias = _operand(op, "W"), _operand(op, "B")
    assert w is not None
    steps, batch, features = _shape(x)
    product = _matmul(e, e.reshape(x, [steps * batch, features]),
                      _matrix(e, w, d, 0, gates * hidden))  # fmt: skip
    shape = [steps, batch, gates, hidden]
    if bias is None:
        return e.reshape(product, shape)
    return e.parallel([e.reshape(product, shape), _by_gate(e, bias, d, 0, gates * hidden, hidden)],
                      shape, f32, lambda b, a: b.add(a[0], a[1]))  # fmt: skip


def _initial(e: Emitter, op: GraphOp, name: str, d: int, batch: Dim, hidden: int) -> SSAValue:
    """Direction d's initial state, `[1, B, H]` (zeros when absent)."""
    value = _operand(op, name)
    if value is None:
        return e.fill(0.0, [1, batch, hidden], f32)
    if op.attr("layout"):
        value = _transpose(e, value, [1, 0, 2])
    return e.extract(value, [d, 0, 0], [1, batch, hidden])


def _concat(e: Emitter, values: list[SSAValue], axis: int) -> SSAValue:
    if len(values) == 1:
        return values[0]
    shape = list(_shape(values[0]))
    shape[axis] = sum(_shape(v)[axis] for v in values)  # type: ignore[assignment]
    return e.value(tensor.ConcatOp(values, axis, symbolic_type(f32, shape)))


def _lower_recurrent(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = _operand(op, "X")
    assert x is not None
    layout = op.attr("layout")
    if layout:
        x = _transpose(e, x, [1, 0, 2])
    steps, batch, _ = _shape(x)
    hidden = _shape(op.results[1])[2]
    assert isinstance(hidden, int)
    cell = CELLS[op.SPEC.onnx_type]
    directions = _directions(e, op, hidden)
    backwards = [op.attr("direction") == "reverse" or d == 1 for d in range(len(directions))]
    rev = _reversed_steps(e, op, steps, batch) if any(backwards) else None
    active = _active(e, op, steps, batch)
    ys, lasts = [], []
    for d, direction in enumerate(directions):
        source = _by_steps(e, x, rev) if backwards[d] and rev is not None else x
        projection = _projection(e, op, source, d, cell.gates, hidden)
        states = [_initial(e, op, "initial_h", d, batch, hidden)]
        if cell.cell_state:
            states.append(_initial(e, op, "initial_c", d, batch, hidden))
        *last, y = _loop(e, op, projection, states, active, direction)
        if backwards[d] and rev is not None:
            y = _by_steps(e, y, rev)
        ys.append(e.reshape(y, [steps, 1, batch, hidden]))
        lasts.append(last)
    outputs = [_concat(e, ys, 1), *(_concat(e, list(s), 0) for s in zip(*lasts))]
    if layout:
        outputs = [_transpose(e, outputs[0], [2, 0, 1, 3]),
                   *(_transpose(e, s, [1, 0, 2]) for s in outputs[1:])]  # fmt: skip
    return outputs


def _check_recurrent(op: GraphOp) -> str | None:
    for name in ("W", "R"):
        value = _operand(op, name)
        if value is not None and any(isinstance(d, SymExpr) for d in _shape(value)):
            return f"symbolic sizes of {name}"
    return None


class RecurrentPattern(FamilyPattern):
    """RNN, GRU, LSTM."""

    lowerings = {RNNOp: _lower_recurrent, GRUOp: _lower_recurrent, LSTMOp: _lower_recurrent}
    checks = {RNNOp: _check_recurrent, GRUOp: _check_recurrent, LSTMOp: _check_recurrent}
    symbolic = frozenset(lowerings)


__all__ = ["ACTIVATIONS", "RecurrentPattern"]
