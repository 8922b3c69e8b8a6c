"""Reduction kernels (opset-18 form: ``axes`` is an optional int64 input) and ArgMax/ArgMin.

Reductions accumulate in float64 (floats) or 64-bit integers and cast back to the input
dtype. Reducing an empty set gives the ONNX identity (0, 1, -inf / lowest, +inf / highest).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

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
)

Axes = tuple[int, ...]
Reduction = Callable[[np.ndarray, Axes], np.ndarray]


def _extreme(x: np.ndarray, high: bool) -> Any:
    if is_floating(x.dtype):
        return np.inf if high else -np.inf
    if x.dtype == np.bool_:
        return high
    info = np.iinfo(x.dtype)
    return info.max if high else info.min


def _skipping_nan(ufunc: np.ufunc, x: np.ndarray, axes: Axes, high: bool) -> np.ndarray:
    """fmax/fmin over `axes`: NaN elements are skipped, the result is NaN only
    when all are NaN; an empty reduction gives the ONNX identity."""
    empty = any(x.shape[a] == 0 for a in axes)
    start = np.nan if is_floating(x.dtype) and not empty else _extreme(x, high)
    return ufunc.reduce(x, axis=axes, keepdims=True, initial=start)


def _first_extreme(x: np.ndarray, axis: int, is_max: bool, last: bool) -> np.ndarray:
    """The index onnxruntime's ArgMax/ArgMin give: the first element is the best
    so far, a later one replaces it when strictly better (or equal, with
    `last`); comparisons with NaN are false, so a NaN wins only as the first
    element."""
    if x.shape[axis] == 0:
        raise ValueError("ArgMax/ArgMin of an empty axis")
    best = (np.fmax if is_max else np.fmin).reduce(x, axis=axis, keepdims=True)
    hits = x == best
    if last:
        index = x.shape[axis] - 1 - np.argmax(np.flip(hits, axis), axis=axis)
    else:
        index = np.argmax(hits, axis=axis)
    first = np.take(x, [0], axis=axis).squeeze(axis)
    if is_floating(x.dtype):
        index = np.where(np.isnan(first), 0, index)  # all NaN: also index 0
    return index


def _log_sum_exp(x: np.ndarray, axes: Axes) -> np.ndarray:
    m = x.max(axes, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    return m + np.log(np.exp(x - m).sum(axes, keepdims=True))


# op_type -> f(x, axes) reducing with keepdims=True; x is already widened.
_REDUCE: dict[str, Reduction] = {
    "ReduceMean": lambda x, ax: x.mean(ax, keepdims=True),
    "ReduceSum": lambda x, ax: x.sum(ax, keepdims=True),
    "ReduceMax": lambda x, ax: _skipping_nan(np.fmax, x, ax, high=False),
    "ReduceMin": lambda x, ax: _skipping_nan(np.fmin, x, ax, high=True),
    "ReduceProd": lambda x, ax: x.prod(ax, keepdims=True),
    "ReduceL1": lambda x, ax: np.abs(x).sum(ax, keepdims=True),
    "ReduceL2": lambda x, ax: np.sqrt((x * x).sum(ax, keepdims=True)),
    "ReduceSumSquare": lambda x, ax: (x * x).sum(ax, keepdims=True),
    "ReduceLogSumExp": _log_sum_exp,
    "ReduceLogSum": lambda x, ax: np.log(x.sum(ax, keepdims=True)),
}


def _widen(x: np.ndarray) -> np.ndarray:
    kind = x.dtype.kind
    return x.astype({"f": np.float64, "i": np.int64, "u": np.uint64}.get(kind, x.dtype))


def _reduce_kernel(fn: Reduction) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        x, axes = np.asarray(inputs[0]), ints(arg(inputs, 1))
        if not axes:
            # noop_with_empty_axes reduces over no axis: composite reductions still apply
            # their elementwise steps (ReduceSumSquare gives x**2, ReduceL1 gives |x|).
            axes = [] if attrs.get("noop_with_empty_axes", 0) else list(range(x.ndim))
        norm = tuple(sorted({norm_axis(a, x.ndim) for a in axes}))
        with np.errstate(all="ignore"):
            y = np.asarray(fn(_widen(x), norm))
        if not attrs.get("keepdims", 1):
            y = y.reshape([n for i, n in enumerate(y.shape) if i not in norm])
        return [y.astype(x.dtype)]

    return kernel


for _op, _fn in _REDUCE.items():
    register_all([_op], _reduce_kernel(_fn))


def _arg_kernel(is_max: bool) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axis = norm_axis(int(attrs.get("axis", 0)), x.ndim)
        idx = _first_extreme(x, axis, is_max, bool(attrs.get("select_last_index", 0)))
        if attrs.get("keepdims", 1):
            idx = np.expand_dims(idx, axis)
        return [np.asarray(idx, dtype=np.int64)]

    return kernel


register_all(["ArgMax"], _arg_kernel(is_max=True))
register_all(["ArgMin"], _arg_kernel(is_max=False))


def _cumulative(ufunc: np.ufunc) -> Kernel:
    """Running sums or products along ``axis``; ``exclusive`` shifts in the
    neutral element, ``reverse`` runs from the end."""

    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        axis = norm_axis(int(np.asarray(inputs[1]).reshape(-1)[0]), x.ndim)
        y = np.flip(x, axis) if attrs.get("reverse", 0) else x
        if attrs.get("exclusive", 0):
            neutral = np.full_like(np.take(y, [0], axis), ufunc.identity)
            y = np.concatenate([neutral, np.take(y, range(y.shape[axis] - 1), axis)], axis)
        y = ufunc.accumulate(y, axis=axis, dtype=x.dtype)
        return [np.flip(y, axis) if attrs.get("reverse", 0) else y]

    return kernel


register_all(["CumSum"], _cumulative(np.add))
register_all(["CumProd"], _cumulative(np.multiply))


def rank_along(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """Each element's place in the order along ``axis`` (0 = first): larger
    (or smaller) values first, equal values in index order."""
    keys = np.moveaxis(x, axis, -1)
    count = keys.shape[-1]
    if largest:  # descending, ties by index: the ascending stable order of the reversed keys
        order = count - 1 - np.flip(np.argsort(np.flip(keys, -1), axis=-1, kind="stable"), -1)
    else:
        order = np.argsort(keys, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(count), order.shape), axis=-1)
    return np.moveaxis(ranks, -1, axis)


@register("TopK")
def top_k(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    k = int(np.asarray(inputs[1]).reshape(-1)[0])
    axis = norm_axis(int(attrs.get("axis", -1)), x.ndim)
    order = np.argsort(rank_along(x, axis, bool(attrs.get("largest", 1))), axis=axis)
    indices = np.take(order, range(k), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)]
