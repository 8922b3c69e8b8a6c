"""Neural-network kernels: convolution, pooling, normalisation, Gemm/MatMul, Softmax,
Flatten, Resize.

Convolution is an im2col over ``sliding_window_view`` followed by one batched matmul over
groups, so it runs at BLAS speed in the input dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ember.dialects.graph.ops_nn import transposed_pads, unpooled_shape
from ember.dialects.graph.ops_resize import Sampling, resize_plan, resize_targets

from ._registry import (
    Attrs,
    Inputs,
    Kernel,
    arg,
    ints,
    is_floating,
    norm_axis,
    register,
    register_all,
    wide,
)

Pads = list[tuple[int, int]]


def _window_params(
    x: np.ndarray, kernel: Sequence[int], attrs: Attrs
) -> tuple[list[int], list[int], list[int], Pads]:
    """Strides, dilations, dilated kernel extents and (begin, end) pads of a windowed op."""
    nd = x.ndim - 2
    strides = ints(attrs.get("strides")) or [1] * nd
    dilations = ints(attrs.get("dilations")) or [1] * nd
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads: Pads = []
        for n, e, s in zip(x.shape[2:], extent, strides, strict=True):
            total = max(0, (-(-n // s) - 1) * s + e - n)
            small = total // 2
            upper = auto_pad == "SAME_UPPER"
            pads.append((small, total - small) if upper else (total - small, small))
    elif auto_pad == "VALID":
        pads = [(0, 0)] * nd
    else:
        flat = ints(attrs.get("pads")) or [0] * (2 * nd)
        pads = list(zip(flat[:nd], flat[nd:], strict=True))
    return strides, dilations, extent, pads


def _windows(
    xp: np.ndarray, extent: Sequence[int], strides: Sequence[int], dilations: Sequence[int]
) -> np.ndarray:
    """View of shape (N, C, *out, *kernel) over the (already padded) input ``xp``."""
    nd = len(extent)
    win = sliding_window_view(xp, tuple(extent), axis=tuple(range(2, 2 + nd)))
    index = (
        (slice(None), slice(None))
        + tuple(slice(None, None, s) for s in strides)
        + tuple(slice(None, None, d) for d in dilations)
    )
    return win[index]


@register("Conv")
def conv(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, w, bias = np.asarray(inputs[0]), np.asarray(inputs[1]), arg(inputs, 2)
    nd, group = x.ndim - 2, int(attrs.get("group", 1))
    kernel = list(w.shape[2:])
    strides, dilations, extent, pads = _window_params(x, kernel, attrs)
    xp = np.pad(x, [(0, 0), (0, 0), *pads])
    win = _windows(xp, extent, strides, dilations)  # (N, C, *out, *k)
    n, c, m = x.shape[0], x.shape[1], w.shape[0]
    out = win.shape[2 : 2 + nd]
    win = win.reshape(n, group, c // group, *out, *kernel)
    order = (1, 0, *range(3, 3 + nd), 2, *range(3 + nd, 3 + 2 * nd))
    cols = win.transpose(order).reshape(group, n * math.prod(out), -1)  # im2col copy
    wt = w.reshape(group, m // group, -1).transpose(0, 2, 1)
    y = np.matmul(cols, wt.astype(x.dtype))  # (G, N*P, M/G)
    y = y.reshape(group, n, *out, m // group)
    y = y.transpose(1, 0, 2 + nd, *range(2, 2 + nd)).reshape(n, m, *out)
    if bias is not None:
        y = y + np.asarray(bias).reshape(-1, *[1] * nd)
    return [np.ascontiguousarray(y, dtype=x.dtype)]


@register("ConvTranspose")
def conv_transpose(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Each input element times the kernel, added into the output at
    stride * position + dilation * offset (a scatter of Conv's gather), then
    the pads cropped off the full result."""
    x, w, bias = np.asarray(inputs[0]), np.asarray(inputs[1]), arg(inputs, 2)
    nd, group = x.ndim - 2, int(attrs.get("group", 1))
    n, channels, *spatial = x.shape
    kernel = list(w.shape[2:])
    strides, dilations, extra, pads = transposed_pads(spatial, kernel, attrs.get)
    full = [s * (i - 1) + o + (k - 1) * d + 1 + max(0, -lo) + max(0, -hi)
            for i, k, s, d, o, (lo, hi) in zip(spatial, kernel, strides, dilations, extra, pads)]  # fmt: skip
    per_group = w.shape[1]
    out = np.zeros((n, group * per_group, *full), dtype=np.float64)
    xs = x.reshape(n, group, channels // group, *spatial).astype(np.float64)
    ws = w.reshape(group, channels // group, per_group, *kernel).astype(np.float64)
    for offset in np.ndindex(*kernel):
        # (N, G, Cout/G, *spatial): every input position's share at this offset
        part = np.einsum("ngc...,gcf->ngf...", xs, ws[(slice(None), slice(None), slice(None),
                                                       *offset)])  # fmt: skip
        at = tuple(slice(max(0, -lo) + k * d, max(0, -lo) + k * d + s * (i - 1) + 1, s)
                   for k, d, s, i, (lo, _) in zip(offset, dilations, strides, spatial, pads))  # fmt: skip
        out[(slice(None), slice(None), *at)] += part.reshape(n, group * per_group, *spatial)
    crop = tuple(slice(max(lo, 0), f - max(hi, 0)) for (lo, hi), f in zip(pads, full))
    y = out[(slice(None), slice(None), *crop)]
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64).reshape(-1, *[1] * nd)
    return [np.ascontiguousarray(y, dtype=x.dtype)]


def _pool_padding(x: np.ndarray, attrs: Attrs) -> tuple[list[int], list[int], list[int], Pads]:
    """Strides, dilations, dilated kernel extents and the (begin, end) padding
    that makes every output window fit (ONNX's output size and ceil_mode)."""
    kernel = ints(attrs["kernel_shape"]) or []
    strides, dilations, extent, pads = _window_params(x, kernel, attrs)
    ceil_mode = bool(attrs.get("ceil_mode", 0)) and attrs.get("auto_pad", "NOTSET") == "NOTSET"
    full: Pads = []  # padding that makes every output window fit
    for n, e, s, (pb, pe) in zip(x.shape[2:], extent, strides, pads, strict=True):
        span = n + pb + pe - e
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= n + pb:
            out -= 1  # the last window must start inside the input or the left padding
        full.append((pb, max(pe, (out - 1) * s + e - n - pb)))
    return strides, dilations, extent, full


def _pool(x: np.ndarray, attrs: Attrs, kind: str) -> np.ndarray:
    """Max, average or sum pooling with ONNX output-size, ceil_mode and padding rules."""
    kernel = ints(attrs["kernel_shape"]) or []
    strides, dilations, extent, pads = _window_params(x, kernel, attrs)
    _, _, _, full = _pool_padding(x, attrs)
    spatial = [(0, 0), (0, 0)]
    if kind == "max":
        # NaN padding and fmax: NaN elements are skipped (docs/semantics.md).
        low = np.nan if is_floating(x.dtype) else np.iinfo(x.dtype).min
        xp = np.pad(x, spatial + full, constant_values=low)
        windows = _windows(xp, extent, strides, dilations)
        return np.fmax.reduce(windows, axis=tuple(range(-len(kernel), 0)))
    xp = np.pad(wide(x), spatial + full)
    axes = tuple(range(-len(kernel), 0))
    total = _windows(xp, extent, strides, dilations).sum(axis=axes)
    if kind == "sum":
        return total.astype(x.dtype)
    # Count of the elements a window averages: input (+ explicit pads) but never ceil overhang.
    include = bool(attrs.get("count_include_pad", 0))
    mask = np.ones((1, 1, *x.shape[2:]))
    mask = np.pad(mask, spatial + [(pb, pe) for pb, pe in pads], constant_values=float(include))
    mask = np.pad(mask, spatial + [(0, f[1] - p[1]) for f, p in zip(full, pads, strict=True)])
    count = _windows(mask, extent, strides, dilations).sum(axis=axes)
    return (total / count).astype(x.dtype)


@register("MaxPool")
def max_pool(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Y, and with ``__num_results__`` 2 the Indices (`max_pool_indices`)."""
    x = np.asarray(inputs[0])
    y = _pool(x, attrs, "max")
    if attrs.get("__num_results__", 1) < 2:
        return [y]
    return [y, max_pool_indices(x, attrs)]


def max_pool_indices(x: np.ndarray, attrs: Attrs) -> np.ndarray:
    """Where each window's maximum lies in ``x``, as a flat index: (n * C + c)
    times the spatial size, plus the spatial position flattened row-major
    (storage_order 0) or column-major (1). The first maximum of a window
    counts; NaN elements are skipped as in Y, and a window of NaN alone
    points at its first element."""
    kernel = ints(attrs["kernel_shape"]) or []
    strides, dilations, extent, full = _pool_padding(x, attrs)
    n, c, *spatial = x.shape
    positions = np.arange(math.prod(spatial)).reshape(spatial)
    if attrs.get("storage_order", 0):
        positions = positions.reshape(spatial[::-1]).T
    planes = np.arange(n * c).reshape(n, c, *[1] * len(spatial))
    positions = positions + planes * math.prod(spatial)
    # Padding holds -1 (never a maximum's position); its values are NaN or the
    # lowest integer, which the ordering below puts last.
    at = np.pad(positions, [(0, 0), (0, 0), *full], constant_values=-1)
    low = np.nan if is_floating(x.dtype) else np.iinfo(x.dtype).min
    values = np.pad(x, [(0, 0), (0, 0), *full], constant_values=low)
    value_windows = _windows(values, extent, strides, dilations)
    at_windows = _windows(at, extent, strides, dilations)
    out = value_windows.shape[: 2 + len(kernel)]
    value_windows = value_windows.reshape(*out, -1)
    at_windows = at_windows.reshape(*out, -1)
    # Rank each element: padding last, then NaN, then by value, greatest first
    # (~v orders integers downwards without overflow); the sort is stable, so
    # the first of equal elements comes first.
    padding = at_windows < 0
    if is_floating(x.dtype):
        nan, downwards = np.isnan(value_windows), -wide(value_windows)
    else:
        nan, downwards = np.zeros_like(padding), ~value_windows
    order = np.lexsort((downwards, nan, padding), axis=-1)
    return np.take_along_axis(at_windows, order[..., :1], axis=-1)[..., 0].astype(np.int64)


@register("AveragePool")
def average_pool(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return [_pool(np.asarray(inputs[0]), attrs, "avg")]


@register("LpPool")
def lp_pool(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """(sum over each window of |x|^p) ^ (1/p); padding counts 0."""
    x = np.asarray(inputs[0])
    p = int(attrs.get("p", 2))
    total = _pool(np.abs(wide(x)) ** p, attrs, "sum")
    return [(total ** (1.0 / p)).astype(x.dtype)]


def _global_pool(kind: str) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axes = tuple(range(2, x.ndim))
        if kind == "avg":
            y = wide(x).mean(axes, keepdims=True)
        else:  # NaN elements are skipped, as in MaxPool
            y = np.fmax.reduce(x, axis=axes, keepdims=True)
        return [y.astype(x.dtype)]

    return kernel


register_all(["GlobalAveragePool"], _global_pool("avg"))
register_all(["GlobalMaxPool"], _global_pool("max"))


def _channel(v: np.ndarray | None, ndim: int) -> np.ndarray:
    """A per-channel (axis 1) parameter reshaped to broadcast against an ``ndim`` tensor."""
    return wide(np.asarray(v)).reshape((-1,) + (1,) * max(ndim - 2, 0))


@register("BatchNormalization")
def batch_normalization(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Normalises with input_mean and input_var; in training mode with the
    mean and (biased) variance of the batch over every dim but the channels
    (1) instead, and also gives running_mean and running_var (as many as
    ``__num_results__`` asks): input_mean * momentum + batch mean * (1 -
    momentum), and likewise for the variance (opset 15)."""
    x = np.asarray(inputs[0])
    scale, bias, mean, var = (_channel(v, x.ndim) for v in inputs[1:5])
    statistics: list[np.ndarray] = []
    if attrs.get("training_mode", 0):
        axes = (0, *range(2, x.ndim))
        batch_mean, batch_var = wide(x).mean(axes), wide(x).var(axes)
        momentum = attrs.get("momentum", 0.9)
        for given, batch in ((inputs[3], batch_mean), (inputs[4], batch_var)):
            given = np.asarray(given)
            running = wide(given) * momentum + batch * (1 - momentum)
            statistics.append(running.astype(given.dtype))
        mean, var = batch_mean.reshape(mean.shape), batch_var.reshape(var.shape)
    y = (wide(x) - mean) / np.sqrt(var + attrs.get("epsilon", 1e-5)) * scale + bias
    return [y.astype(x.dtype), *statistics][: attrs.get("__num_results__", 1)]


@register("InstanceNormalization")
def instance_normalization(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    scale, bias = _channel(inputs[1], x.ndim), _channel(inputs[2], x.ndim)
    xw, axes = wide(x), tuple(range(2, x.ndim))
    mean, var = xw.mean(axes, keepdims=True), xw.var(axes, keepdims=True)
    y = (xw - mean) / np.sqrt(var + attrs.get("epsilon", 1e-5)) * scale + bias
    return [y.astype(x.dtype)]


@register("LayerNormalization")
def layer_normalization(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Normalises over axes [axis, rank) (statistics kept in float64); Y, and the
    mean and 1 / stddev of each slice (float32 when stash_type is 1)."""
    x, scale, bias = np.asarray(inputs[0]), np.asarray(inputs[1]), arg(inputs, 2)
    axes = tuple(range(norm_axis(int(attrs.get("axis", -1)), x.ndim), x.ndim))
    xw = wide(x)
    mean, var = xw.mean(axes, keepdims=True), xw.var(axes, keepdims=True)
    inverse = 1 / np.sqrt(var + attrs.get("epsilon", 1e-5))
    y = (xw - mean) * inverse * wide(scale)
    if bias is not None:
        y = y + wide(np.asarray(bias))
    stash = np.float32 if attrs.get("stash_type", 1) == 1 else x.dtype
    return [y.astype(x.dtype), mean.astype(stash), inverse.astype(stash)]


@register("LRN")
def lrn(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """square_sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    x = np.asarray(inputs[0])
    size = int(attrs["size"])
    lo = (size - 1) // 2
    sq = np.pad(wide(x) ** 2, [(0, 0), (lo, size - 1 - lo)] + [(0, 0)] * (x.ndim - 2))
    square_sum = sliding_window_view(sq, size, axis=1).sum(-1)
    alpha, beta, bias = attrs.get("alpha", 1e-4), attrs.get("beta", 0.75), attrs.get("bias", 1.0)
    y = wide(x) / (bias + alpha / size * square_sum) ** beta
    return [y.astype(x.dtype)]


@register("Gemm")
def gemm(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    a, b, c = np.asarray(inputs[0]), np.asarray(inputs[1]), arg(inputs, 2)
    a = a.T if attrs.get("transA", 0) else a
    b = b.T if attrs.get("transB", 0) else b
    y = attrs.get("alpha", 1.0) * np.matmul(a, b)
    if c is not None:
        y = y + attrs.get("beta", 1.0) * np.asarray(c)
    return [np.asarray(y).astype(a.dtype)]


@register("MatMul")
def matmul(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
    return [np.asarray(np.matmul(a, b)).astype(a.dtype)]


def _softmax(log: bool) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axis = norm_axis(int(attrs.get("axis", -1)), x.ndim)
        shifted = wide(x) - wide(x).max(axis, keepdims=True)
        total = np.exp(shifted).sum(axis, keepdims=True)
        y = shifted - np.log(total) if log else np.exp(shifted) / total
        return [y.astype(x.dtype)]

    return kernel


register_all(["Softmax"], _softmax(log=False))
register_all(["LogSoftmax"], _softmax(log=True))


@register("Flatten")
def flatten(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    axis = int(attrs.get("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    if not 0 <= axis <= x.ndim:
        raise ValueError(f"Flatten: axis {axis} out of range for rank {x.ndim}")
    return [x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))]


@register("Resize")
def resize(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Applies the sampling tables of `ops_resize` one axis at a time, in float64."""
    x = np.asarray(inputs[0])
    roi, scales, sizes = (None if v is None else np.asarray(v) for v in
                          (arg(inputs, 1), arg(inputs, 2), arg(inputs, 3)))  # fmt: skip
    sampling = Sampling.of(dict(attrs))
    crop = roi if sampling.transform == "tf_crop_and_resize" else None
    targets = resize_targets(x.shape, ints(attrs.get("axes")), crop, scales, sizes,
                             attrs.get("keep_aspect_ratio_policy", "stretch"))  # fmt: skip
    y = wide(x)
    for samples in resize_plan(x.shape, targets, sampling):
        axis = samples.axis
        picks = samples.picks()
        if picks is not None:
            y = np.take(y, picks, axis=axis)
        else:
            taken = np.take(y, samples.indices, axis=axis)  # [..., out, taps, ...]
            weights = samples.weights.reshape(samples.weights.shape + (1,) * (x.ndim - axis - 1))
            y = (taken * weights).sum(axis=axis + 1)
        if samples.outside is not None:
            mask = samples.outside.reshape((-1,) + (1,) * (x.ndim - axis - 1))
            y = np.where(mask, float(attrs.get("extrapolation_value", 0.0)), y)
    return [y.astype(x.dtype)]


@register("Hardmax")
def hardmax(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """1 at the first largest element along ``axis``, 0 elsewhere."""
    x = np.asarray(inputs[0])
    axis = norm_axis(int(attrs.get("axis", -1)), x.ndim)
    first = np.expand_dims(np.argmax(x, axis=axis), axis)
    y = np.zeros_like(x)
    np.put_along_axis(y, first, 1, axis=axis)
    return [y]


@register("LpNormalization")
def lp_normalization(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """x / ||x||_p along ``axis`` (p = 1 or 2); 0 where the norm is 0."""
    x = np.asarray(inputs[0])
    axis = norm_axis(int(attrs.get("axis", -1)), x.ndim)
    norm = np.linalg.norm(wide(x), ord=int(attrs.get("p", 2)), axis=axis, keepdims=True)
    with np.errstate(all="ignore"):
        return [np.where(norm == 0, 0.0, wide(x) / norm).astype(x.dtype)]


@register("Einsum")
def einsum(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    xs = [np.asarray(x) for x in inputs]
    equation = str(attrs["equation"]).replace(" ", "")
    return [np.asarray(np.einsum(equation, *[wide(x) for x in xs])).astype(xs[0].dtype)]


@register("GroupNormalization")
def group_normalization(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Each sample's channels in num_groups groups, each normalised over its
    channels and spatial positions; then scale and bias per channel."""
    x, scale, bias = (np.asarray(v) for v in inputs[:3])
    n, c = x.shape[:2]
    groups = int(attrs["num_groups"])
    grouped = wide(x).reshape(n, groups, -1)
    mean = grouped.mean(axis=2, keepdims=True)
    var = ((grouped - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((grouped - mean) / np.sqrt(var + float(attrs.get("epsilon", 1e-5)))).reshape(x.shape)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    return [(y * scale.reshape(per_channel) + bias.reshape(per_channel)).astype(x.dtype)]


@register("MeanVarianceNormalization")
def mean_variance_normalization(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """(X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9) over ``axes``: ONNX's function body."""
    x = np.asarray(inputs[0])
    axes = tuple(norm_axis(a, x.ndim) for a in ints(attrs.get("axes", [0, 2, 3])) or [])
    w = wide(x)
    mean = w.mean(axis=axes, keepdims=True)
    std = np.sqrt((w * w).mean(axis=axes, keepdims=True) - mean * mean)
    return [((w - mean) / (std + 1e-9)).astype(x.dtype)]


@register("Det")
def det(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    return [np.asarray(np.linalg.det(wide(x))).astype(x.dtype)]


@register("MaxUnpool")
def max_unpool(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Zeros of the default shape (`unpooled_shape`), each X value at its flat
    index in I (as MaxPool gives them); zero-padded at the end of each axis
    up to output_shape when that is given."""
    x, indices = np.asarray(inputs[0]), np.asarray(inputs[1])
    default = [
        int(d)
        for d in unpooled_shape(
            x.shape,
            ints(attrs["kernel_shape"]) or [],
            ints(attrs.get("strides")),
            ints(attrs.get("pads")),
        )
    ]
    y = np.zeros(math.prod(default), dtype=x.dtype)
    y[indices.reshape(-1)] = x.reshape(-1)
    y = y.reshape(default)
    output_shape = ints(arg(inputs, 2))
    if output_shape is not None:
        y = np.pad(y, [(0, o - d) for o, d in zip(output_shape, default)])
    return [y]
