"""Graph-to-tensor lowering of the reductions family."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import f64, i64
from xdsl.ir import Attribute, SSAValue

from ember.dialects.graph import (
    ArgMaxOp,
    ArgMinOp,
    GraphOp,
    ReduceL1Op,
    ReduceL2Op,
    ReduceLogSumExpOp,
    ReduceLogSumOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceProdOp,
    ReduceSumOp,
    ReduceSumSquareOp,
)
from ember.dialects.graph.types import is_float
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    NeedsConstants,
    _constant_operands,
    _dims_map,
    _elem,
    _highest,
    _identity,
    _int_constant,
    _lowest,
    _max_start,
    _min_start,
    _normalize_axis,
    _shape,
)

# -------------------------------------------------------------- reductions


def _itself(b: Body, value: SSAValue) -> SSAValue:
    return value


@dataclass(frozen=True)
class Reduction:
    """A ReduceX op: the neutral element, the value each element contributes,
    how it combines with the accumulator, and a final step (given the count)."""

    neutral: Callable[[Attribute], float]
    combine: Callable[[Body, SSAValue, SSAValue], SSAValue]
    contribution: Callable[[Body, SSAValue], SSAValue] = _itself
    finish: Callable[[Body, SSAValue, int], SSAValue] | None = None


def _square(b: Body, v: SSAValue) -> SSAValue:
    return b.mul(v, v)


def _divide_by_count(b: Body, v: SSAValue, count: int) -> SSAValue:
    return b.div(v, b.const(count, v.type))


def _square_root(b: Body, v: SSAValue, count: int) -> SSAValue:
    """sqrt; integers go through f64 and truncate back."""
    if is_float(v.type):
        return b.math(xmath.SqrtOp, v)
    return b.convert(b.math(xmath.SqrtOp, b.convert(v, f64)), v.type)


def _log(b: Body, v: SSAValue, count: int) -> SSAValue:
    return b.math(xmath.LogOp, v)


REDUCTIONS: dict[type[GraphOp], Reduction] = {
    ReduceSumOp: Reduction(lambda t: 0, Body.add),
    ReduceMeanOp: Reduction(lambda t: 0, Body.add, finish=_divide_by_count),
    # NaN is skipped: NaN only when every element is (docs/semantics.md).
    ReduceMaxOp: Reduction(_max_start, Body.max_skipping_nan),
    ReduceMinOp: Reduction(_min_start, Body.min_skipping_nan),
    ReduceProdOp: Reduction(lambda t: 1, Body.mul),
    ReduceL1Op: Reduction(lambda t: 0, Body.add, Body.abs),
    ReduceL2Op: Reduction(lambda t: 0, Body.add, _square, _square_root),
    ReduceSumSquareOp: Reduction(lambda t: 0, Body.add, _square),
    ReduceLogSumOp: Reduction(lambda t: 0, Body.add, finish=_log),
}


def _reduced_axes(op: GraphOp) -> list[int]:
    """The normalized axes (all of them when absent or empty, unless
    noop_with_empty_axes, which reduces none)."""
    rank = len(_shape(op.operands[0]))
    group = op.operand_group("axes")
    axes = _int_constant(group[0]) if group else []
    if not axes:
        return [] if op.attr("noop_with_empty_axes") else list(range(rank))
    return sorted({_normalize_axis(a, rank) for a in axes})


def _lower_reduce(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """fill(neutral) + one reduction generic (+ a generic for the final step)."""
    x = op.operand_group("data")[0]
    shape, t = _shape(x), _elem(x)
    axes = _reduced_axes(op)
    spec = REDUCTIONS[type(op)]

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        return spec.combine(b, a[1], spec.contribution(b, a[0]))

    neutral = spec.neutral(t)
    count = math.prod(shape[i] for i in axes)
    if count == 0 and math.isnan(neutral):
        neutral = _lowest(t) if spec.combine is Body.max_skipping_nan else _highest(t)  # ONNX
    y = e.reduction(x, axes, neutral, t, body)
    if spec.finish is not None:
        finish = spec.finish
        y = e.parallel([y], _shape(y), t, lambda b, a: finish(b, a[0], count))
    return [e.reshape(y, _shape(op.results[0]))]


def _lower_reduce_log_sum_exp(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """m = max (0 where not finite); m + log(sum of exp(x - m))."""
    x = op.operand_group("data")[0]
    t = _elem(x)
    axes = _reduced_axes(op)
    peak = e.reduction(x, axes, -math.inf, t, lambda b, a: b.max(a[1], a[0]))

    def finite(b: Body, a: list[SSAValue]) -> SSAValue:
        is_finite = b.cmpf("olt", b.abs(a[0]), b.const(math.inf, t))
        return b.select(is_finite, a[0], b.const(0, t))

    shift = e.parallel([peak], _shape(peak), t, finite)

    def accumulate(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.add(a[2], b.exp(b.sub(a[0], a[1])))

    total = e.reduction(x, axes, 0, t, accumulate, [shift])
    y = e.parallel([shift, total], _shape(peak), t,
                   lambda b, a: b.add(a[0], b.math(xmath.LogOp, a[1])))  # fmt: skip
    return [e.reshape(y, _shape(op.results[0]))]


def _lower_arg_reduce(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A reduction with two outputs, the best value so far and its index; the
    index comes from an iota constant indexed by the reduced dim. As in
    onnxruntime (docs/semantics.md), the first element is the best so far and
    a later one replaces it when greater (ArgMin: less; or equal too with
    select_last_index): a NaN is never taken, except as the first element,
    which then stays the answer."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    is_max, last = isinstance(op, ArgMaxOp), bool(op.attr("select_last_index"))
    relation = ("ge" if last else "gt") if is_max else ("le" if last else "lt")
    kept = [d for i, d in enumerate(shape) if i != axis]
    kept_map = _dims_map(rank, [i for i in range(rank) if i != axis])
    iota = e.constant(np.arange(shape[axis], dtype=np.int64))
    outputs = [e.fill(_lowest(t) if is_max else _highest(t), kept, t), e.fill(0, kept, i64)]

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        value, index, best, best_index = a
        take = b.cmp(relation, value, best)  # ordered: false with a NaN
        if is_float(t):
            take = b.or_(take, b.cmp("eq", index, b.const(0, i64)))
        return [b.select(take, value, best), b.select(take, index, best_index)]

    maps = [_identity(rank), _dims_map(rank, [axis]), kept_map, kept_map]
    iterators = [REDUCTION if i == axis else PARALLEL for i in range(rank)]
    _, indices = e.generic([x, iota], outputs, maps, iterators, body)
    return [e.reshape(indices, _shape(op.results[0]))]


def _check_reduce(op: GraphOp) -> str | None:
    if not _constant_operands(op, "axes"):
        return NeedsConstants("axes must be a constant")
    if isinstance(op, ReduceLogSumExpOp | ReduceLogSumOp) and not is_float(_elem(op.operands[0])):
        return "integer operands"
    return None


class ReductionPattern(FamilyPattern):
    """ReduceX (table REDUCTIONS), ReduceLogSumExp, ArgMax and ArgMin."""

    lowerings = {
        **{op_class: _lower_reduce for op_class in REDUCTIONS},
        ReduceLogSumExpOp: _lower_reduce_log_sum_exp,
        ArgMaxOp: _lower_arg_reduce,
        ArgMinOp: _lower_arg_reduce,
    }
    checks = {op_class: _check_reduce for op_class in (*REDUCTIONS, ReduceLogSumExpOp)}
    symbolic = frozenset(REDUCTIONS)
