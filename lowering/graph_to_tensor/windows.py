"""Graph-to-tensor lowering of the windows family."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue

from ember.dialects.graph import (
    AveragePoolOp,
    ConvOp,
    ConvTransposeOp,
    GlobalAveragePoolOp,
    GlobalMaxPoolOp,
    GraphOp,
    LpPoolOp,
    MaxPoolOp,
    constant_value_of,
)
from ember.dialects.graph.ops_nn import transposed_pads
from ember.dialects.graph.symbolic import symbols_of
from ember.dialects.graph.types import is_float
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    Shape,
    _copy,
    _dim,
    _dims_map,
    _elem,
    _identity,
    _map,
    _max_start,
    _shape,
)
from ember.lowering.graph_to_tensor.grouped_conv import GroupedGeometry, grouped_conv, is_pointwise

# ---------------------------------------------------------------- windows

Pads = list[tuple[int, int]]
AttrFn = Callable[[str], Any]


def _window_attr(op: GraphOp) -> AttrFn:
    """`op.attr`, except that a 1-D window's kernel_shape, strides, dilations and
    pads get a leading 1 (pads 0): a 1-D window lowers as a 2-D one over
    N x C x 1 x L."""
    if len(_shape(op.operands[0])) != 3:
        return op.attr

    def attr(name: str) -> Any:
        value = op.attr(name)
        if not value:
            return value
        if name in ("kernel_shape", "strides", "dilations"):
            return [1, *value]
        if name == "pads":
            return [0, value[0], 0, value[1]]
        return value

    return attr


def _unit_height(shape: Shape) -> Shape:
    """N x C x L -> N x C x 1 x L (other ranks unchanged)."""
    return (*shape[:2], 1, *shape[2:]) if len(shape) == 3 else shape


def window_params(
    attr: AttrFn, spatial: Shape, kernel: Sequence[int]
) -> tuple[list[int], list[int], Pads]:
    """Strides, dilations and (begin, end) pads of a window, auto_pad resolved."""
    strides = attr("strides") or [1] * len(spatial)
    dilations = attr("dilations") or [1] * len(spatial)
    auto_pad = attr("auto_pad")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads: Pads = []
        for n, k, s, d in zip(spatial, kernel, strides, dilations):
            total = max(0, (-(-n // s) - 1) * s + (k - 1) * d + 1 - n)
            small = total // 2
            pads.append(
                (small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small)
            )
    elif auto_pad == "VALID":
        pads = [(0, 0)] * len(spatial)
    else:
        flat = attr("pads") or [0] * (2 * len(spatial))
        pads = list(zip(flat[: len(spatial)], flat[len(spatial) :]))
    return strides, dilations, pads


def _pad_spatial(e: Emitter, x: SSAValue, pads: Pads, value: float) -> SSAValue:
    return e.pad(x, [0, 0, *[p[0] for p in pads]], [0, 0, *[p[1] for p in pads]], value)


def _conv_generic(
    e: Emitter, x: SSAValue, w: SSAValue, init: SSAValue, strides: Sequence[int],
    dilations: Sequence[int],
) -> SSAValue:  # fmt: skip
    """An N-D convolution of the padded `x` as one generic over (n, f, o..., c,
    k...): out[n, f, o...] += x[n, c, o*s + k*d...] * w[f, c, k...]. For 2-D
    these are `linalg.conv_2d_nchw_fchw`'s maps."""
    _, _, *kernel = _shape(w)
    s = len(kernel)
    count = 2 * s + 3
    n, f, c = _dim(0), _dim(1), _dim(2 + s)
    outs = [_dim(2 + i) for i in range(s)]
    ks = [_dim(3 + s + i) for i in range(s)]
    reads = [o * st + k * d for o, k, st, d in zip(outs, ks, strides, dilations)]
    maps = [_map(count, [n, c, *reads]), _map(count, [f, c, *ks]), _map(count, [n, f, *outs])]
    iterators = [PARALLEL] * (2 + s) + [REDUCTION] * (1 + s)
    return e.generic([x, w], [init], maps, iterators,
                     lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))])[0]  # fmt: skip


def _grouped_geometry(
    x: SSAValue, w: SSAValue, shape: Shape, groups: int, strides: Sequence[int],
    dilations: Sequence[int], pads: Pads,
) -> GroupedGeometry:  # fmt: skip
    """The extents of an NCHW grouped convolution of `x` (unpadded) by `w`
    into `shape`; flattened when it is pointwise."""
    batch, channels, *spatial = _shape(x)
    filters, _, *kernel = _shape(w)
    padded = [size + low + high for size, (low, high) in zip(spatial, pads)]
    geometry = GroupedGeometry(batch, groups, channels // groups, filters // groups, padded,
                               kernel, shape[2:], strides, dilations)  # fmt: skip
    return geometry.flattened() if is_pointwise(kernel, strides, pads) else geometry


def _ints(values: Sequence[int]) -> DenseIntOrFPElementsAttr:
    return DenseIntOrFPElementsAttr.from_list(TensorType(i64, [len(values)]), list(values))


def _lower_conv(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """pad + fill 0 + `linalg.conv_2d_nchw_fchw` (+ a generic adding the bias
    per channel). 1-D: reshaped to 2-D (N x C x 1 x L, F x C x 1 x K) and
    back. A grouped convolution is `grouped_conv.grouped_conv` (the group a
    dim of its own); a 3-D one is one generic (`_conv_generic`)."""
    x, w = op.operand_group("X")[0], op.operand_group("W")[0]
    out, t = _shape(op.results[0]), _elem(x)
    x, w = e.reshape(x, _unit_height(_shape(x))), e.reshape(w, _unit_height(_shape(w)))
    shape = _unit_height(out)
    strides, dilations, pads = window_params(_window_attr(op), _shape(x)[2:], _shape(w)[2:])
    groups = op.attr("group")
    if groups > 1:
        geometry = _grouped_geometry(x, w, shape, groups, strides, dilations, pads)
        bias = op.operand_group("B")
        padded = _pad_spatial(e, x, pads, 0)
        return [grouped_conv(e, "NCHW", padded, w, bias[0] if bias else None, geometry, out)]
    padded, init = _pad_spatial(e, x, pads, 0), e.fill(0, shape, t)
    if len(shape) == 4:
        conv = linalg.Conv2DNchwFchwOp([padded, w], [init], [init.type],
                                       strides=_ints(strides), dilations=_ints(dilations))  # fmt: skip
        y = e.value(conv)
    else:
        y = _conv_generic(e, padded, w, init, strides, dilations)
    return [e.reshape(_add_bias(e, op, y), out)]


def _lower_conv_transpose(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """By phases (`_by_phases`) where the weights are constant and strided,
    with one group, no dilation and no negative pads. Otherwise a stride-1
    convolution, as TVM decomposes one: the input spread out by the strides (a strided `tensor.insert_slice` into a fill of 0) and padded
    by (k - 1) * d - pad on each side (output_padding more at the end; a
    negative amount crops), by the kernel flipped with its channel dims
    swapped per group (a copy generic, or a constant for constant weights);
    then the bias per channel."""
    x, w = op.operand_group("X")[0], op.operand_group("W")[0]
    (batch, channels, *spatial), (_, _, *kernel) = _shape(x), _shape(w)
    t, groups, out = _elem(x), op.attr("group"), _shape(op.results[0])
    strides, dilations, extra, pads = transposed_pads(spatial, kernel, op.attr)
    weights = constant_value_of(w)
    if (
        weights is not None
        and groups == 1
        and all(d == 1 for d in dilations)
        and all(lo >= 0 and hi >= 0 for lo, hi in pads)
        and any(st > 1 for st in strides)
    ):
        return [_add_bias(e, op, _by_phases(e, x, weights, strides, extra, pads, out))]
    low = [(k - 1) * d - lo for k, d, (lo, _) in zip(kernel, dilations, pads)]
    high = [(k - 1) * d - hi + o for k, d, o, (_, hi) in zip(kernel, dilations, extra, pads)]
    spread = [st * (n - 1) + 1 for st, n in zip(strides, spatial)]
    room = [n + max(lo, 0) + max(hi, 0) for n, lo, hi in zip(spread, low, high)]
    zeros = e.fill(0, [batch, channels, *room], t)
    spread_x = e.insert(x, zeros, [0, 0, *[max(lo, 0) for lo in low]], [1, 1, *strides])
    padded = e.extract(spread_x, [0, 0, *[max(-lo, 0) for lo in low]],
                       [batch, channels, *[n + lo + hi for n, lo, hi in zip(spread, low, high)]])  # fmt: skip
    flipped = _flipped_kernel(e, w, groups)
    ones = [1] * len(spatial)
    if groups > 1:
        geometry = _grouped_geometry(padded, flipped, out, groups, ones, dilations,
                                     [(0, 0)] * len(spatial))  # fmt: skip
        bias = op.operand_group("B")
        return [grouped_conv(e, "NCHW", padded, flipped, bias[0] if bias else None, geometry, out)]
    init = e.fill(0, out, t)
    if len(out) == 4:
        conv = linalg.Conv2DNchwFchwOp([padded, flipped], [init], [init.type], strides=_ints(ones),
                                       dilations=_ints(dilations))  # fmt: skip
        y = e.value(conv)
    else:
        y = _conv_generic(e, padded, flipped, init, ones, dilations)
    return [_add_bias(e, op, y)]


def _by_phases(e: Emitter, x: SSAValue, weights: np.ndarray, strides: Sequence[int],
               extra: Sequence[int], pads: Pads, out: Sequence[Any]) -> SSAValue:  # fmt: skip
    """A strided transposed convolution (constant weights, no dilation or
    groups) without the zeros: the outputs at phase r (position = r mod
    stride, per axis) come only from the kernel taps r, r + stride, ..., so
    each phase is a stride-1 "full" convolution of X (padded by taps - 1) by
    those taps, flipped, written into its phase of the whole output (a
    strided `tensor.insert_slice`), which is then cropped by the pads."""
    (batch, _, *spatial), kernel = _shape(x), weights.shape[2:]
    rank, t = len(spatial), _elem(x)
    whole = [(n - 1) * st + k + o for n, st, k, o in zip(spatial, strides, kernel, extra)]
    y = e.fill(0, [batch, weights.shape[1], *whole], t)
    padded_for: dict[tuple[int, ...], SSAValue] = {}  # phases with as many taps share it
    for phase in itertools.product(*(range(st) for st in strides)):
        taps = weights[(slice(None), slice(None),
                        *(slice(r, None, st) for r, st in zip(phase, strides)))]  # fmt: skip
        reach = list(taps.shape[2:])
        if 0 in reach:  # a phase no tap reaches (kernel shorter than the stride)
            continue
        flipped = np.flip(taps, axis=tuple(range(2, 2 + rank))).transpose(1, 0, *range(2, 2 + rank))
        if tuple(reach) not in padded_for:
            margin = [0, 0, *[j - 1 for j in reach]]
            padded_for[tuple(reach)] = e.pad(x, margin, margin, 0.0)
        padded = padded_for[tuple(reach)]
        init = e.fill(0, [batch, flipped.shape[0], *[n + j - 1 for n, j in zip(spatial, reach)]], t)
        kernel_value = e.constant(np.ascontiguousarray(flipped))
        ones = [1] * rank
        if rank == 2:
            part = e.value(linalg.Conv2DNchwFchwOp([padded, kernel_value], [init], [init.type],
                                                   strides=_ints(ones), dilations=_ints(ones)))  # fmt: skip
        else:
            part = _conv_generic(e, padded, kernel_value, init, ones, ones)
        y = e.insert(part, y, [0, 0, *phase], [1, 1, *strides])
    return e.extract(y, [0, 0, *[lo for lo, _ in pads]], list(out))


def _flipped_kernel(e: Emitter, w: SSAValue, groups: int) -> SSAValue:
    """ConvTranspose's W[C, F/g, k...] as Conv's W'[F, C/g, k...]:
    W'[g * F/g + f, c, k...] = W[g * C/g + c, f, K - 1 - k...]."""
    channels, per_group, *kernel = _shape(w)
    shape = [per_group * groups, channels // groups, *kernel]
    constant = constant_value_of(w)
    if constant is not None:
        grouped = constant.reshape(groups, channels // groups, per_group, *kernel)
        flipped = np.flip(grouped, axis=tuple(range(3, 3 + len(kernel))))
        return e.constant(np.ascontiguousarray(flipped.transpose(0, 2, 1, *range(3, 3 + len(kernel)))
                                               .reshape(shape)))  # fmt: skip
    f, c = _dim(0), _dim(1)
    read = [(f // per_group) * (channels // groups) + c, f % per_group,
            *[_dim(2 + i) * -1 + (k - 1) for i, k in enumerate(kernel)]]  # fmt: skip
    return e.parallel([w], shape, _elem(w), _copy, maps=[_map(len(shape), read)])


def _add_bias(e: Emitter, op: GraphOp, y: SSAValue) -> SSAValue:
    """`y` plus the convolution's bias B (if it has one) per channel (dim 1)."""
    bias = op.operand_group("B")
    if not bias:
        return y
    shape = _shape(y)
    maps = [_identity(len(shape)), _dims_map(len(shape), [1])]
    return e.parallel([y, bias[0]], shape, _elem(y), lambda b, a: b.add(a[0], a[1]), maps=maps)


def _pool_padding(attr: AttrFn, spatial: Shape) -> tuple[list[int], list[int], Pads, Pads]:
    """Strides, dilations, the explicit pads, and the pads that also make room
    for every ceil_mode window (extra high padding)."""
    kernel = attr("kernel_shape")
    strides, dilations, pads = window_params(attr, spatial, kernel)
    ceil_mode = bool(attr("ceil_mode")) and attr("auto_pad") == "NOTSET"
    full: Pads = []
    for n, k, s, d, (low, high) in zip(spatial, kernel, strides, dilations, pads):
        extent = (k - 1) * d + 1
        span = n + low + high - extent
        count = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (count - 1) * s >= n + low:
            count -= 1  # the last window must start inside the input or its low padding
        full.append((low, max(high, (count - 1) * s + extent - n - low)))
    return strides, dilations, pads, full


def average_pool_counts(
    spatial: Shape, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
    pads: Pads, full: Pads, count_include_pad: bool,
) -> np.ndarray:  # fmt: skip
    """How many elements each output window averages: the input's, plus the
    explicit padding's when count_include_pad, never the ceil_mode overhang."""
    mask = np.pad(np.ones(spatial), pads, constant_values=float(count_include_pad))
    mask = np.pad(mask, [(0, f[1] - p[1]) for f, p in zip(full, pads)])
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    windows = sliding_window_view(mask, extents)
    steps = (*[slice(None, None, s) for s in strides], *[slice(None, None, d) for d in dilations])
    return windows[steps].sum(axis=tuple(range(len(spatial), 2 * len(spatial))))


def _pool_generic(
    e: Emitter, x: SSAValue, init: SSAValue, kind: str, kernel: Sequence[int],
    strides: Sequence[int], dilations: Sequence[int],
) -> SSAValue:  # fmt: skip
    """An N-D pooling of the padded `x` as one generic over (n, c, o..., k...),
    with a window-shaped `tensor.empty` giving the kernel dims their extent (as
    linalg's pooling ops have). `kind` is "max" (NaN skipped: maxnum, which
    `linalg.pooling_nchw_max`'s maximumf is not) or "sum"."""
    s = len(kernel)
    count = 2 + 2 * s
    outs = [_dim(2 + i) for i in range(s)]
    ks = [_dim(2 + s + i) for i in range(s)]
    reads = [o * st + k * d for o, k, st, d in zip(outs, ks, strides, dilations)]
    t = _elem(x)
    window = e.empty(kernel, t)
    maps = [_map(count, [_dim(0), _dim(1), *reads]), _map(count, ks),
            _map(count, [_dim(0), _dim(1), *outs])]  # fmt: skip
    iterators = [PARALLEL] * (2 + s) + [REDUCTION] * s
    return e.generic([x, window], [init], maps, iterators, lambda b, a: [window_step(b, a, kind)])[
        0
    ]


def flat_positions(spatial: Shape, pads: Pads, storage_order: int) -> np.ndarray:
    """Each element's position in its (N, C) plane, flattened row-major
    (storage_order 0) or column-major (1), padded with -1 by `pads`."""
    positions = np.arange(math.prod(spatial), dtype=np.int64)
    if storage_order:
        positions = positions.reshape(tuple(spatial)[::-1]).T
    return np.pad(positions.reshape(spatial), pads, constant_values=-1)


def _max_pool_with_indices(
    e: Emitter, x: SSAValue, init: SSAValue, kernel: Sequence[int], strides: Sequence[int],
    dilations: Sequence[int], positions: np.ndarray,
) -> tuple[SSAValue, SSAValue]:  # fmt: skip
    """MaxPool's Y and Indices: one generic over (n, c, o..., k...) carrying
    the best value and its position (from `positions`, -1 in the padding),
    then the plane's offset (n * C + c) * plane size added. A later element
    replaces the best when greater, or when the best is NaN and it is not:
    the first maximum, NaN skipped as in Y; a window of NaN alone gives its
    first element."""
    s = len(kernel)
    count = 2 + 2 * s
    outs = [_dim(2 + i) for i in range(s)]
    ks = [_dim(2 + s + i) for i in range(s)]
    reads = [o * st + k * d for o, k, st, d in zip(outs, ks, strides, dilations)]
    t, out = _elem(x), _shape(init)
    window = e.empty(kernel, t)
    output_map = _map(count, [_dim(0), _dim(1), *outs])
    maps = [_map(count, [_dim(0), _dim(1), *reads]), _map(count, reads), _map(count, ks),
            output_map, output_map]  # fmt: skip
    iterators = [PARALLEL] * (2 + s) + [REDUCTION] * s

    def step(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        value, position, _, best, best_position = a
        take = b.or_(b.cmp("lt", best_position, b.const(0, i64)), b.cmp("gt", value, best))
        if is_float(t):
            take = b.or_(take, b.and_(b.is_nan(best), b.not_(b.is_nan(value))))
        take = b.and_(take, b.cmp("ge", position, b.const(0, i64)))
        return [b.select(take, value, best), b.select(take, position, best_position)]

    y, at = e.generic([x, e.constant(positions), window], [init, e.fill(-1, out, i64)], maps,
                      iterators, step)  # fmt: skip
    plane = int(np.count_nonzero(positions >= 0))

    def offset(b: Body, a: list[SSAValue]) -> SSAValue:
        n, c = (b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(d)), i64)) for d in (0, 1))
        first = b.mul(b.add(b.mul(n, b.const(out[1], i64)), c), b.const(plane, i64))
        return b.add(a[0], first)

    return y, e.parallel([at], out, i64, offset)


def window_step(b: Body, a: list[SSAValue], kind: str) -> SSAValue:
    """The accumulator (last argument) combined with the element read (first):
    max skipping NaN, or sum."""
    if kind == "max":
        return b.max_skipping_nan(a[-1], a[0])
    return b.add(a[-1], a[0])


def _lower_pool(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """pad (NaN, or the lowest integer, for max; 0 for average) + one pooling
    generic (its max skips NaN: docs/semantics.md); averages are divided by
    the window size, or by a constant of per-position counts. 1-D: reshaped
    to N x C x 1 x L and back."""
    x = op.operands[0]
    t, out = _elem(x), _shape(op.results[0])
    x, shape = e.reshape(x, _unit_height(_shape(x))), _unit_height(out)
    attr = _window_attr(op)
    strides, dilations, pads, full = _pool_padding(attr, _shape(x)[2:])
    is_max = isinstance(op, MaxPoolOp)
    kind = "max" if is_max else "sum"
    low = _max_start(t) if is_max else 0  # NaN padding: skipped by the max
    kernel = attr("kernel_shape")
    p = op.attr("p") if isinstance(op, LpPoolOp) else None
    if p is not None:  # the sum of |x|^p, then its p-th root
        x = e.parallel([x], _shape(x), t, lambda b, a: _power(b, b.abs(a[0]), p))
    padded, init = _pad_spatial(e, x, full, low), e.fill(low, shape, t)
    if len(op.results) > 1:  # MaxPool's Indices
        spatial, order = _shape(x)[2:], op.attr("storage_order")
        y, indices = _max_pool_with_indices(e, padded, init, kernel, strides, dilations,
                                            flat_positions(spatial, full, order))  # fmt: skip
        return [e.reshape(y, out), e.reshape(indices, out)]
    y = _pool_generic(e, padded, init, kind, kernel, strides, dilations)
    if p is not None:
        y = e.parallel([y], shape, t, lambda b, a: _power(b, a[0], 1 / p))
    elif not is_max:
        y = _divide_by_counts(e, y, attr, _shape(x)[2:], kernel, strides, dilations, pads, full)
    return [e.reshape(y, out)]


def _power(b: Body, v: SSAValue, exponent: float) -> SSAValue:
    """v ** exponent (v >= 0): a product for 1 and 2, powf otherwise."""
    if exponent == 1:
        return v
    if exponent == 2:
        return b.mul(v, v)
    return b.math(xmath.PowFOp, v, b.const(exponent, v.type))


def _divide_by_counts(
    e: Emitter, y: SSAValue, attr: AttrFn, spatial: Shape, kernel: Sequence[int],
    strides: Sequence[int], dilations: Sequence[int], pads: Pads, full: Pads,
    spatial_axes: Sequence[int] | None = None,
) -> SSAValue:  # fmt: skip
    """Window sums divided by the window size, or by a constant of per-position
    counts when windows see different numbers of elements. The spatial dims of
    `y` are `spatial_axes` (default: all after N and C)."""
    shape, t = _shape(y), _elem(y)
    counts = average_pool_counts(spatial, kernel, strides, dilations, pads, full,
                                 bool(attr("count_include_pad")))  # fmt: skip
    if np.all(counts == counts.flat[0]):
        size = float(counts.flat[0])
        return e.parallel([y], shape, t, lambda b, a: b.div(a[0], b.const(size, t)))
    count_tensor = e.constant(counts.astype(np.float32))
    axes = range(2, len(shape)) if spatial_axes is None else spatial_axes
    maps = [_identity(len(shape)), _dims_map(len(shape), axes)]

    def divide(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.div(a[0], b.convert(a[1], t))

    return e.parallel([y, count_tensor], shape, t, divide, maps=maps)


def _lower_global_pool(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A reduction over the spatial dims (then a division for the average)."""
    x = op.operands[0]
    shape, t = _shape(x), _elem(x)
    axes = range(2, len(shape))
    if isinstance(op, GlobalMaxPoolOp):
        y = e.reduction(x, axes, _max_start(t), t,
                        lambda b, a: b.max_skipping_nan(a[1], a[0]))  # fmt: skip
    else:
        total = e.reduction(x, axes, 0, t, lambda b, a: b.add(a[1], a[0]))
        size = math.prod(shape[2:])
        y = e.parallel([total], shape[:2], t, lambda b, a: b.div(a[0], b.const(size, t)))
    return [e.reshape(y, _shape(op.results[0]))]


def check_batch_only(op: GraphOp) -> str | None:
    """Windows take a symbolic batch (dim 0): the spatial and channel extents
    decide the padding, the window counts and the schedule at compile time."""
    for value in (*op.operands, *op.results):
        names = symbols_of(d for d in _shape(value)[1:])
        if names:
            return f"symbolic sizes ({', '.join(sorted(names))}) past the batch dim not lowered yet"
    return None


class WindowPattern(FamilyPattern):
    """Convolution, transposed convolution and pooling."""

    lowerings = {ConvOp: _lower_conv, ConvTransposeOp: _lower_conv_transpose,
                 MaxPoolOp: _lower_pool, AveragePoolOp: _lower_pool, LpPoolOp: _lower_pool,
                 GlobalAveragePoolOp: _lower_global_pool,
                 GlobalMaxPoolOp: _lower_global_pool}  # fmt: skip
    checks = dict.fromkeys(lowerings, check_batch_only)
    symbolic = frozenset(lowerings)
