"""Graph-to-tensor lowering of the normalisation family."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import AnyFloat, f32
from xdsl.ir import Attribute, SSAValue

from ember.dialects.graph import (
    BatchNormalizationOp,
    GraphOp,
    GroupNormalizationOp,
    InstanceNormalizationOp,
    LayerNormalizationOp,
    LogSoftmaxOp,
    LpNormalizationOp,
    LRNOp,
    MeanVarianceNormalizationOp,
    SoftmaxOp,
)
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    _bits,
    _dim,
    _dims_map,
    _elem,
    _identity,
    _map,
    _normalize_axis,
    _shape,
    broadcast_map,
)

# ----------------------------------------------------------- normalisation


def _lower_batch_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """(x - mean) / sqrt(var + eps) * scale + B, per channel (dim 1). In
    training mode mean and var are the batch's (`_moments` over every dim
    but 1), and the running statistics asked for are input * momentum +
    batch * (1 - momentum)."""
    x, scale, bias, mean, var = op.operands
    shape, t = _shape(x), _elem(x)
    eps = op.attr("epsilon")
    running: list[SSAValue] = []
    if op.attr("training_mode"):
        given = (mean, var)
        mean, var = _moments(e, x, [0, *range(2, len(shape))], t)
        momentum = op.attr("momentum")

        def blend(b: Body, a: list[SSAValue]) -> SSAValue:
            kept = b.mul(a[0], b.const(momentum, a[0].type))
            taken = b.mul(b.convert(a[1], a[0].type), b.const(1 - momentum, a[0].type))
            return b.add(kept, taken)

        running = [e.parallel([old, new], _shape(old), _elem(old), blend)
                   for old, new in zip(given, (mean, var))][: len(op.results) - 1]  # fmt: skip

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        v, scale, bias, mean, var = a
        std = b.math(xmath.SqrtOp, b.add(var, b.const(eps, t)))
        return b.add(b.mul(b.div(b.sub(v, mean), std), scale), bias)

    channel = _dims_map(len(shape), [1])
    maps = [_identity(len(shape)), *[channel] * 4]
    return [e.parallel([x, scale, bias, mean, var], shape, t, body, maps=maps), *running]


def _sum(b: Body, total: SSAValue, term: SSAValue) -> SSAValue:
    """total + term, where the running sum may be reassociated (`reassoc`):
    LLVM then vectorises the sum over a row as lane-wise partial sums. The
    rounding differs from a strict left-to-right sum by no more than that
    of the sum itself (docs/semantics.md); integer sums are exact anyway."""
    if not isinstance(total.type, AnyFloat):
        return b.add(total, term)
    return b.emit(arith.AddfOp(total, term, arith.FastMathFlagsAttr(["reassoc"])))


def _moments(
    e: Emitter, x: SSAValue, axes: Sequence[int], ct: Attribute
) -> tuple[SSAValue, SSAValue]:
    """Mean and (biased) variance of `x` over `axes`, in type `ct`: a sum
    reduction, then a reduction of squared deviations from the mean."""
    shape = _shape(x)
    kept = [d for i, d in enumerate(shape) if i not in axes]
    count = math.prod(shape[i] for i in axes)

    def divide(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.div(a[0], b.const(count, ct))

    def deviation(b: Body, a: list[SSAValue]) -> SSAValue:
        d = b.sub(b.convert(a[0], ct), a[1])
        return _sum(b, a[2], b.mul(d, d))

    total = e.reduction(x, axes, 0, ct, lambda b, a: _sum(b, a[1], b.convert(a[0], ct)))
    mean = e.parallel([total], kept, ct, divide)
    variance = e.parallel([e.reduction(x, axes, 0, ct, deviation, [mean])], kept, ct, divide)
    return mean, variance


def _normalize(b: Body, v: SSAValue, mean: SSAValue, var: SSAValue, eps: float) -> SSAValue:
    std = b.math(xmath.SqrtOp, b.add(var, b.const(eps, var.type)))
    return b.div(b.sub(v, mean), std)


def _lower_instance_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Moments over the spatial dims per (N, C); then scale and B per channel."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    mean, var = _moments(e, x, list(range(2, rank)), t)
    eps = op.attr("epsilon")

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        v, m, s2, scale, bias = a
        return b.add(b.mul(_normalize(b, v, m, s2, eps), scale), bias)

    stats, channel = _dims_map(rank, [0, 1]), _dims_map(rank, [1])
    inputs = [x, mean, var, *op.operands[1:]]
    maps = [_identity(rank), stats, stats, channel, channel]
    return [e.parallel(inputs, shape, t, body, maps=maps)]


def _lower_group_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Reshaped to (N, groups, the rest): moments over the rest, normalised,
    reshaped back; then scale and bias per channel. The statistics are in f32
    for narrower inputs when stash_type is 1."""
    x, scale, bias = op.operands
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    groups = op.attr("num_groups")
    ct = f32 if op.attr("stash_type") == 1 and _bits(t) < 32 else t
    grouped_shape = [shape[0], groups, math.prod(shape[1:]) // groups]
    grouped = e.reshape(x, grouped_shape)
    mean, var = _moments(e, grouped, [2], ct)
    eps = op.attr("epsilon")

    def normalize(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.convert(_normalize(b, b.convert(a[0], ct), a[1], a[2], eps), t)

    stats = _dims_map(3, [0, 1])
    y = e.parallel([grouped, mean, var], grouped_shape, t, normalize,
                   maps=[_identity(3), stats, stats])  # fmt: skip
    channel = _dims_map(rank, [1])
    return [e.parallel([e.reshape(y, shape), scale, bias], shape, t,
                       lambda b, a: b.add(b.mul(a[0], a[1]), a[2]),
                       maps=[_identity(rank), channel, channel])]  # fmt: skip


def _lower_mean_variance_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Moments over axes; (x - mean) / (sqrt(variance) + 1e-9)."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axes = sorted({_normalize_axis(a, rank) for a in op.attr("axes")})
    mean, var = _moments(e, x, axes, t)

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        std = b.add(b.math(xmath.SqrtOp, a[2]), b.const(1e-9, t))
        return b.div(b.sub(a[0], a[1]), std)

    stats = _dims_map(rank, [i for i in range(rank) if i not in axes])
    return [e.parallel([x, mean, var], shape, t, body, maps=[_identity(rank), stats, stats])]


def _lower_layer_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Moments over dims [axis, rank), then * Scale (+ B), both broadcast. The
    statistics are computed in f32 for narrower inputs when stash_type is 1."""
    x = op.operand_group("X")[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    ct = f32 if op.attr("stash_type") == 1 and _bits(t) < 32 else t
    mean, var = _moments(e, x, list(range(axis, rank)), ct)
    eps = op.attr("epsilon")
    params = [*op.operand_group("Scale"), *op.operand_group("B")]

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        v, m, s2, *weights = a
        y = b.mul(_normalize(b, b.convert(v, ct), m, s2, eps), b.convert(weights[0], ct))
        if len(weights) > 1:
            y = b.add(y, b.convert(weights[1], ct))
        return b.convert(y, t)

    stats = _dims_map(rank, range(axis))
    maps = [_identity(rank), stats, stats, *[broadcast_map(_shape(p), shape) for p in params]]
    y = e.parallel([x, mean, var, *params], shape, t, body, maps=maps)
    # Mean and InvStdDev, read only where used (dead code otherwise)
    st = _elem(op.results[1])

    def inverse(b: Body, a: list[SSAValue]) -> SSAValue:
        one = b.const(1.0, ct)
        return b.convert(b.div(one, b.math(xmath.SqrtOp, b.add(a[0], b.const(eps, ct)))), st)

    kept = _shape(mean)
    statistics = [e.parallel([mean], kept, st, lambda b, a: b.convert(a[0], st)),
                  e.parallel([var], kept, st, inverse)]  # fmt: skip
    return [y, *(e.reshape(v, _shape(op.results[1])) for v in statistics)]


def _lower_lrn(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Zero-pad the channels, sum squares over a window dim (a reduction dim d_n
    read as channel d1 + d_n; a `size`-element constant, whose values the body
    ignores, gives d_n its extent), then x / (bias + alpha/size * sum)^beta."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    size = op.attr("size")
    low = (size - 1) // 2
    padded = e.pad(x, [0, low] + [0] * (rank - 2), [0, size - 1 - low] + [0] * (rank - 2), 0)
    window = e.constant(np.ones(size, dtype=np.bool_))
    d = [_dim(i) for i in range(rank + 1)]
    maps = [_map(rank + 1, [d[0], d[1] + d[rank], *d[2:rank]]),
            _map(rank + 1, [d[rank]]), _dims_map(rank + 1, range(rank))]  # fmt: skip
    iterators = [PARALLEL] * rank + [REDUCTION]
    init = e.fill(0, shape, t)
    squares = e.generic([padded, window], [init], maps, iterators,
                        lambda b, a: [b.add(a[2], b.mul(a[0], a[0]))])[0]  # fmt: skip
    alpha, beta, bias = op.attr("alpha"), op.attr("beta"), op.attr("bias")

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        base = b.add(b.const(bias, t), b.mul(b.const(alpha / size, t), a[1]))
        return b.div(a[0], b.math(xmath.PowFOp, base, b.const(beta, t)))

    return [e.parallel([x, squares], shape, t, body)]


def _lower_softmax(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    axis = _normalize_axis(op.attr("axis"), len(_shape(x)))
    return [softmax(e, x, axis, log=isinstance(op, LogSoftmaxOp))]


def softmax(e: Emitter, x: SSAValue, axis: int, *, log: bool) -> SSAValue:
    """m = max over the axis; Softmax: p = exp(x - m), s = sum of p, p / s
    (each exp computed once); LogSoftmax (`log`): s = sum of exp(x - m),
    (x - m) - log(s)."""
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    peak = e.reduction(x, [axis], -math.inf, t, lambda b, a: b.max(a[1], a[0]))
    kept = _dims_map(rank, [i for i in range(rank) if i != axis])

    def shifted_exp(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.exp(b.sub(a[0], a[1]))

    if log:
        total = e.reduction(x, [axis], 0, t, lambda b, a: _sum(b, a[2], shifted_exp(b, a)), [peak])

        def log_body(b: Body, a: list[SSAValue]) -> SSAValue:
            return b.sub(b.sub(a[0], a[1]), b.math(xmath.LogOp, a[2]))

        maps = [_identity(rank), kept, kept]
        return e.parallel([x, peak, total], shape, t, log_body, maps=maps)
    powers = e.parallel([x, peak], shape, t, shifted_exp, maps=[_identity(rank), kept])
    total = e.reduction(powers, [axis], 0, t, lambda b, a: _sum(b, a[1], a[0]))
    maps = [_identity(rank), kept]
    return e.parallel([powers, total], shape, t, lambda b, a: b.div(a[0], a[1]), maps=maps)


def _lower_lp_normalization(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """norm = sum of |x| (p = 1) or sqrt of the sum of squares (p = 2) along
    the axis; x / norm, and 0 where the norm is 0 (ONNX)."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    squares = op.attr("p") == 2

    def accumulate(b: Body, a: list[SSAValue]) -> SSAValue:
        return _sum(b, a[1], b.mul(a[0], a[0]) if squares else b.abs(a[0]))

    total = e.reduction(x, [axis], 0, t, accumulate)
    kept = _dims_map(rank, [i for i in range(rank) if i != axis])

    def divide(b: Body, a: list[SSAValue]) -> SSAValue:
        norm = b.math(xmath.SqrtOp, a[1]) if squares else a[1]
        zero = b.const(0, t)
        return b.select(b.cmp("eq", norm, zero), zero, b.div(a[0], norm))

    return [e.parallel([x, total], shape, t, divide, maps=[_identity(rank), kept])]


class NormalizationPattern(FamilyPattern):
    """Batch, instance, group and layer normalisation, LRN, Softmax, LogSoftmax
    and LpNormalization."""

    lowerings = {
        BatchNormalizationOp: _lower_batch_norm,
        InstanceNormalizationOp: _lower_instance_norm,
        LayerNormalizationOp: _lower_layer_norm,
        GroupNormalizationOp: _lower_group_norm,
        MeanVarianceNormalizationOp: _lower_mean_variance_norm,
        LRNOp: _lower_lrn,
        SoftmaxOp: _lower_softmax,
        LogSoftmaxOp: _lower_softmax,
        LpNormalizationOp: _lower_lp_normalization,
    }
    symbolic = frozenset({LayerNormalizationOp, SoftmaxOp, LogSoftmaxOp})
