"""Graph-to-tensor lowering of the ops computed from element positions along
an axis (`linalg.index` in their bodies): CumSum, CumProd, TopK, Hardmax,
OneHot, EyeLike and ReverseSequence.

- CumSum and CumProd: one generic over the result and a second position k
  along the axis (a reduction): each result element combines the inputs
  whose k is at or before its own position (after it: `reverse`; strictly:
  `exclusive`), the others counting as 0 or 1. Quadratic in the axis' size,
  which keeps every element's sum in one loop nest.
- TopK and Hardmax rank the elements along the axis: the rank of x[i] counts
  the x[j] that come before it in the order (larger, or smaller for
  `largest=0`, and equal ones of lower index), so ranks are a permutation
  and ties go in index order, as ONNX asks. Hardmax is rank == 0; TopK
  gathers, for each output position r < K, the element of rank r and its
  index (a reduction over the axis).
- OneHot: one parallel generic comparing each position along the new axis
  with its index (truncated, negative ones counted from depth); off and on
  values are read from `values` at constant positions.
- EyeLike: one parallel generic, 1 where column - row == k.
- ReverseSequence: the time step each (batch, time) position reads
  (len - 1 - t inside the sequence, t after it), then `ember_linalg.gather`
  along the time axis by it.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import i1, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ember.dialects import ember_linalg
from ember.dialects.graph import (
    CumProdOp,
    CumSumOp,
    EyeLikeOp,
    GraphOp,
    HardmaxOp,
    OneHotOp,
    ReverseSequenceOp,
    TopKOp,
)
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    NeedsConstants,
    _constant_operands,
    _dim,
    _dims_map,
    _elem,
    _int_constant,
    _map,
    _normalize_axis,
    _shape,
)


def _position(b: Body, dim: int) -> SSAValue:
    """The loop position along `dim`, as i64."""
    return b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(dim)), i64))


def _along(rank: int, axis: int) -> AffineMap:
    """The map of an operand of the result's shape read at position `rank`
    (the extra loop) along `axis`, over rank + 1 loops."""
    return _map(rank + 1, [_dim(rank) if d == axis else _dim(d) for d in range(rank)])


# Which positions k count for the result at i: (reverse, exclusive) -> relation of k to i.
_COUNTED = {(0, 0): "le", (0, 1): "lt", (1, 0): "ge", (1, 1): "gt"}


def _lower_cumulative(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(_int_constant(op.operands[1])[0], rank)
    product = isinstance(op, CumProdOp)
    neutral = 1 if product else 0
    relation = _COUNTED[(op.attr("reverse"), op.attr("exclusive"))]

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        counted = b.cmp(relation, _position(b, rank), _position(b, axis))
        term = b.select(counted, a[0], b.const(neutral, t))
        return [b.mul(a[1], term) if product else b.add(a[1], term)]

    iterators = [PARALLEL] * rank + [REDUCTION]
    maps = [_along(rank, axis), _dims_map(rank + 1, range(rank))]
    return e.generic([x], [e.fill(neutral, shape, t)], maps, iterators, body)


def _ranks(e: Emitter, x: SSAValue, axis: int, largest: bool) -> SSAValue:
    """The i64 rank of each element of `x` in the order along `axis`."""
    shape, rank = _shape(x), len(_shape(x))
    ahead = "gt" if largest else "lt"

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        mine, other, count = a
        tie = b.and_(b.cmp("eq", other, mine), b.cmp("lt", _position(b, rank), _position(b, axis)))
        before = b.or_(b.cmp(ahead, other, mine), tie)
        return [b.add(count, b.convert(before, i64))]

    identity = _dims_map(rank + 1, range(rank))
    iterators = [PARALLEL] * rank + [REDUCTION]
    return e.generic([x, x], [e.fill(0, shape, i64)], [identity, _along(rank, axis), identity],
                     iterators, body)[0]  # fmt: skip


def _lower_hardmax(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    shape, t = _shape(x), _elem(x)
    ranks = _ranks(e, x, _normalize_axis(op.attr("axis"), len(shape)), largest=True)

    def first(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.select(b.cmp("eq", a[0], b.const(0, i64)), b.const(1, t), b.const(0, t))

    return [e.parallel([ranks], shape, t, first)]


def _lower_top_k(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    t, rank = _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    ranks = _ranks(e, x, axis, largest=bool(op.attr("largest")))
    out_shape = _shape(op.results[0])

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        value, place, kept_value, kept_index = a
        hit = b.cmp("eq", place, _position(b, axis))
        return [b.select(hit, value, kept_value), b.select(hit, _position(b, rank), kept_index)]

    read = _along(rank, axis)
    write = _dims_map(rank + 1, range(rank))
    outputs = [e.fill(0, out_shape, t), e.fill(0, out_shape, i64)]
    return e.generic([x, ranks], outputs, [read, read, write, write],
                     [PARALLEL] * rank + [REDUCTION], body)  # fmt: skip


def _lower_one_hot(e: Emitter, op: GraphOp) -> list[SSAValue]:
    indices, values = op.operand_group("indices")[0], op.operand_group("values")[0]
    shape, t = _shape(op.results[0]), _elem(op.results[0])
    rank = len(shape)
    axis = _normalize_axis(op.attr("axis"), rank)
    depth = shape[axis]
    maps = [_dims_map(rank, [d for d in range(rank) if d != axis]), _map(rank, [0]),
            _map(rank, [1])]  # fmt: skip

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        index = b.convert(a[0], i64)
        index = b.select(b.cmp("lt", index, b.const(0, i64)), b.add(index, b.const(depth, i64)),
                         index)  # fmt: skip
        return b.select(b.cmp("eq", index, _position(b, axis)), a[2], a[1])

    return [e.parallel([indices, values, values], shape, t, body, maps=maps)]


def _lower_eye_like(e: Emitter, op: GraphOp) -> list[SSAValue]:
    shape, t = _shape(op.results[0]), _elem(op.results[0])
    k = op.attr("k")

    def diagonal(b: Body, a: list[SSAValue]) -> SSAValue:
        offset = b.sub(_position(b, 1), _position(b, 0))
        return b.select(b.cmp("eq", offset, b.const(k, i64)), b.const(1, t), b.const(0, t))

    return [e.parallel([], shape, t, diagonal)]


def _lower_reverse_sequence(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """The time index each (batch, time) position reads, then a gather of the
    input by it along the time axis."""
    x, lens = op.operands
    shape, rank = _shape(x), len(_shape(x))
    time_axis, batch_axis = op.attr("time_axis"), op.attr("batch_axis")

    def source(b: Body, a: list[SSAValue]) -> SSAValue:
        step, length = _position(b, time_axis), a[0]
        reversed_step = b.sub(b.sub(length, b.const(1, i64)), step)
        return b.select(b.cmp("lt", step, length), reversed_step, step)

    steps = e.parallel([lens], shape[:2], i64, source, maps=[_map(2, [_dim(batch_axis)])])
    dims = [_dim(d) for d in range(rank)]
    data = [AffineExpr.symbol(0) if d == time_axis else dims[d] for d in range(rank)]
    maps = ([AffineMap(rank, 0, tuple(dims[:2]))], AffineMap(rank, 1, tuple(data)))
    return [e.value(ember_linalg.GatherOp.on_tensors(x, steps, op.result_types[0], maps))]


def _check_axis_constant(op: GraphOp) -> str | None:
    if not _constant_operands(op, "axis"):
        return NeedsConstants("axis must be a constant")
    return None


def _check_one_hot(op: GraphOp) -> str | None:
    if _elem(op.operands[0]) == i1:
        return "boolean indices"
    return None


class PositionPattern(FamilyPattern):
    """CumSum, CumProd, TopK, Hardmax, OneHot, EyeLike and ReverseSequence."""

    lowerings = {
        CumSumOp: _lower_cumulative,
        CumProdOp: _lower_cumulative,
        TopKOp: _lower_top_k,
        HardmaxOp: _lower_hardmax,
        OneHotOp: _lower_one_hot,
        EyeLikeOp: _lower_eye_like,
        ReverseSequenceOp: _lower_reverse_sequence,
    }
    checks = {CumSumOp: _check_axis_constant, CumProdOp: _check_axis_constant,
              OneHotOp: _check_one_hot}  # fmt: skip
    unread = {
        TopKOp: lambda op: frozenset({"K"}),
        OneHotOp: lambda op: frozenset({"depth"}),
        CumSumOp: lambda op: frozenset({"axis"}),
        CumProdOp: lambda op: frozenset({"axis"}),
    }
