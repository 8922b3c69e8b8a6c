"""Tensor-manipulation kernels: constants, shape queries, reshaping, indexing, padding."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from onnx import helper

from ember.dialects.graph.ops_random import dropout_uniforms

from ._registry import Attrs, Inputs, arg, ints, norm_axis, register

# Constant's scalar/list attributes -> dtype of the tensor they denote.
_CONSTANT_ATTRS: dict[str, Any] = {
    "value_float": np.float32,
    "value_floats": np.float32,
    "value_int": np.int64,
    "value_ints": np.int64,
    "value_string": object,
    "value_strings": object,
}


@register("Constant")
def constant(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    if attrs.get("value") is not None:
        return [np.array(attrs["value"])]
    for name, dtype in _CONSTANT_ATTRS.items():
        if attrs.get(name) is not None:
            return [np.array(attrs[name], dtype=dtype)]
    raise NotImplementedError("Constant: sparse_value (or no value attribute) is not supported")


@register("ConstantOfShape")
def constant_of_shape(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    value = attrs.get("value")
    v = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    return [np.full(ints(inputs[0]) or [], v[0], dtype=v.dtype)]


@register("Shape")
def shape(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    # Python slicing implements ONNX's start/end rules: negative += rank, then clamp.
    dims = np.shape(inputs[0])[int(attrs.get("start", 0)) : attrs.get("end")]
    return [np.array(dims, dtype=np.int64)]


@register("Size")
def size(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return [np.array(np.size(inputs[0]), dtype=np.int64)]


@register("Reshape")
def reshape(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, dims = np.asarray(inputs[0]), ints(inputs[1]) or []
    if not attrs.get("allowzero", 0):
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return [x.reshape(dims)]


@register("Transpose")
def transpose(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return [np.transpose(np.asarray(inputs[0]), ints(attrs.get("perm")) or None)]


@register("DepthToSpace")
def depth_to_space(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    n, c, h, w = x.shape
    b = int(attrs["blocksize"])
    if attrs.get("mode", "DCR") == "DCR":
        blocks = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        blocks = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return [blocks.reshape(n, c // (b * b), h * b, w * b)]


@register("Concat")
def concat(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    xs = [np.asarray(x) for x in inputs if x is not None]
    return [np.concatenate(xs, axis=norm_axis(int(attrs["axis"]), xs[0].ndim))]


@register("Split")
def split(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Split by the ``split`` input, else into ``num_outputs`` (or ``__num_results__``) parts.

    Without ``split``, parts have size ceil(dim / n) and the last one takes the remainder.
    """
    x = np.asarray(inputs[0])
    axis = norm_axis(int(attrs.get("axis", 0)), x.ndim)
    dim, sizes = x.shape[axis], ints(arg(inputs, 1))
    if sizes is None:
        n = attrs.get("num_outputs") or attrs.get("__num_results__")
        if not n:
            raise ValueError("Split: need the split input, num_outputs or __num_results__")
        chunk = -(-dim // int(n))
        sizes = [chunk] * (int(n) - 1) + [dim - chunk * (int(n) - 1)]
    if sum(sizes) != dim or min(sizes) < 0:
        raise ValueError(f"Split: sizes {sizes} do not split a dimension of {dim}")
    return list(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


@register("Slice")
def slice_(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    starts, ends = ints(inputs[1]) or [], ints(inputs[2]) or []
    axes = ints(arg(inputs, 3)) or list(range(len(starts)))
    steps = ints(arg(inputs, 4)) or [1] * len(starts)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        axis = norm_axis(axis, x.ndim)
        dim = x.shape[axis]
        if step == 0:
            raise ValueError("Slice: step must not be 0")
        start, end = start + dim if start < 0 else start, end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        index[axis] = slice(start, None if end < 0 else end, step)
    return [x[tuple(index)]]


@register("Gather")
def gather(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, idx = np.asarray(inputs[0]), np.asarray(inputs[1]).astype(np.int64)
    axis = norm_axis(int(attrs.get("axis", 0)), x.ndim)
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    return [np.take(x, idx, axis=axis)]


def _in_range(idx: np.ndarray, extent: np.ndarray | int, op: str) -> np.ndarray:
    """Indices with negatives counted from the end; a ValueError (ONNX: an
    invalid model) for any still outside [0, extent)."""
    wrapped = np.where(idx < 0, idx + extent, idx)
    if np.any((wrapped < 0) | (wrapped >= extent)):
        raise ValueError(f"{op}: an index is out of range")
    return wrapped


@register("GatherElements")
def gather_elements(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, idx = np.asarray(inputs[0]), np.asarray(inputs[1]).astype(np.int64)
    axis = norm_axis(int(attrs.get("axis", 0)), x.ndim)
    idx = _in_range(idx, x.shape[axis], "GatherElements")
    part = x[tuple(slice(None) if a == axis else slice(0, n) for a, n in enumerate(idx.shape))]
    return [np.take_along_axis(part, idx, axis=axis)]


def _tuples(x: np.ndarray, idx: np.ndarray, batch: int, op: str) -> np.ndarray:
    """GatherND/ScatterND indices as [batch points, tuples, depth], in range."""
    depth = idx.shape[-1]
    extents = np.asarray(x.shape[batch : batch + depth])
    groups = math.prod(x.shape[:batch])
    return _in_range(idx.astype(np.int64), extents, op).reshape(groups, -1, depth)


@register("GatherND")
def gather_nd(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, idx = np.asarray(inputs[0]), np.asarray(inputs[1])
    batch = int(attrs.get("batch_dims", 0))
    tuples = _tuples(x, idx, batch, "GatherND")
    grouped = x.reshape(tuples.shape[0], *x.shape[batch:])
    picked = [group[tuple(t.T)] for group, t in zip(grouped, tuples)]
    out_shape = (*idx.shape[:-1], *x.shape[batch + idx.shape[-1] :])
    return [np.stack(picked).reshape(out_shape) if picked else np.zeros(out_shape, x.dtype)]


_SCATTER = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
"""ONNX Scatter* reductions as ufuncs, applied with `ufunc.at` (repeats combine)."""


def _scatter(out: np.ndarray, at: tuple[np.ndarray, ...], updates: np.ndarray, how: str) -> None:
    if how == "none":
        out[at] = updates
    elif how in _SCATTER:
        _SCATTER[how].at(out, at, updates)
    else:
        raise ValueError(f"unknown reduction '{how}'")


@register("ScatterElements")
def scatter_elements(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, idx, updates = (np.asarray(v) for v in inputs[:3])
    axis = norm_axis(int(attrs.get("axis", 0)), x.ndim)
    at = list(np.indices(idx.shape, sparse=True))
    at[axis] = _in_range(idx.astype(np.int64), x.shape[axis], "ScatterElements")
    out = x.copy()
    _scatter(out, tuple(np.broadcast_arrays(*at)), updates, attrs.get("reduction", "none"))
    return [out]


@register("ScatterND")
def scatter_nd(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, idx, updates = (np.asarray(v) for v in inputs[:3])
    (tuples,) = _tuples(x, idx, 0, "ScatterND")
    out = x.copy()
    rows = updates.reshape(len(tuples), *x.shape[idx.shape[-1] :])
    _scatter(out, tuple(tuples.T), rows, attrs.get("reduction", "none"))
    return [out]


@register("Trilu")
def trilu(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, k = np.asarray(inputs[0]), arg(inputs, 1)
    diagonal = 0 if k is None else int(np.asarray(k).reshape(()))
    keep = np.triu if int(attrs.get("upper", 1)) else np.tril
    return [keep(x, diagonal)]


@register("Squeeze")
def squeeze(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, axes = np.asarray(inputs[0]), ints(arg(inputs, 1))
    if not axes:  # absent (or empty): drop every dimension of size 1
        return [np.squeeze(x)]
    return [np.squeeze(x, axis=tuple(norm_axis(a, x.ndim) for a in axes))]


@register("Unsqueeze")
def unsqueeze(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    # numpy normalises negative axes against the output rank, as ONNX does.
    return [np.expand_dims(np.asarray(inputs[0]), tuple(ints(inputs[1]) or []))]


@register("Expand")
def expand(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    out = np.broadcast_shapes(x.shape, tuple(ints(inputs[1]) or []))
    return [np.broadcast_to(x, out).copy()]


@register("Tile")
def tile(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return [np.tile(np.asarray(inputs[0]), ints(inputs[1]) or [])]


@register("Pad")
def pad(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Modes constant/reflect/edge/wrap; negative pads crop (applied before padding)."""
    x, pads = np.asarray(inputs[0]), ints(inputs[1]) or []
    value, axes = arg(inputs, 2), ints(arg(inputs, 3))
    axes = [norm_axis(a, x.ndim) for a in axes] if axes is not None else list(range(x.ndim))
    width = [(0, 0)] * x.ndim
    for i, axis in enumerate(axes):
        width[axis] = (pads[i], pads[len(axes) + i])
    crop = zip(x.shape, width, strict=True)
    x = x[tuple(slice(max(-b, 0), n - max(-e, 0)) for n, (b, e) in crop)]
    width = [(max(b, 0), max(e, 0)) for b, e in width]
    mode = attrs.get("mode", "constant")
    if mode == "constant":
        fill = 0 if value is None or np.size(value) == 0 else np.asarray(value).reshape(-1)[0]
        return [np.pad(x, width, constant_values=np.asarray(fill).astype(x.dtype))]
    if mode not in ("reflect", "edge", "wrap"):
        raise ValueError(f"Pad: unknown mode {mode!r}")
    return [np.pad(x, width, mode=mode)]


@register("Range")
def range_(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    # One-element tensors are read as scalars, as onnxruntime and ONNX's
    # reference do (AffineGrid's function takes the limits from a Split).
    start, limit, delta = (np.asarray(v).reshape(-1)[0] for v in inputs[:3])
    if start.dtype.kind in "iu":
        s, lim, d = int(start), int(limit), int(delta)
        n = max(-((s - lim) // d), 0)  # ceil((limit - start) / delta)
        return [(s + np.arange(n, dtype=np.int64) * d).astype(start.dtype)]
    s, lim, d = float(start), float(limit), float(delta)
    n = max(math.ceil((lim - s) / d), 0)
    return [(s + np.arange(n, dtype=np.float64) * d).astype(start.dtype)]


@register("Identity")
def identity(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return [np.array(inputs[0], copy=True)]


@register("Dropout")
def dropout(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """data and a mask all true, unless training_mode is true: then each
    element is kept where its uniform (`dropout_uniforms` from ``seed``) is
    >= ratio (default 0.5), scaled by 1 / (1 - ratio), and the others are 0.
    The mask comes when ``__num_results__`` is 2."""
    data = np.asarray(inputs[0])
    ratio, training = arg(inputs, 1), arg(inputs, 2)
    keep = np.ones(data.shape, dtype=bool)
    y = np.array(data, copy=True)
    if training is not None and bool(np.asarray(training).reshape(-1)[0]):
        p = np.asarray(0.5 if ratio is None else ratio).reshape(-1)[0]
        keep = dropout_uniforms(int(attrs.get("seed", 0)), data.shape) >= np.float32(p)
        scale = 1 / (1 - np.asarray(p, dtype=np.float32))
        y = np.where(keep, data * scale.astype(data.dtype), 0).astype(data.dtype)
    return [y, keep][: attrs.get("__num_results__", 1)]


@register("OneHot")
def one_hot(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """values[1] where the position along ``axis`` is the index (truncated to an
    integer; a negative one counts from depth), values[0] elsewhere; an index
    outside [-depth, depth) gives no on value."""
    indices, depth, values = (np.asarray(v) for v in inputs[:3])
    classes = int(depth.reshape(()))
    axis = norm_axis(int(attrs.get("axis", -1)), indices.ndim + 1)
    index = np.trunc(indices).astype(np.int64)
    index = np.where(index < 0, index + classes, index)
    positions = np.arange(classes).reshape([-1] + [1] * (indices.ndim - axis))
    on = np.expand_dims(index, axis) == positions
    return [np.where(on, values[1], values[0]).astype(values.dtype)]


@register("SpaceToDepth")
def space_to_depth(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Each b x b spatial block becomes b * b channels: in DCR order (block
    position outermost) or CRD (channel outermost)."""
    x = np.asarray(inputs[0])
    n, c, h, w = x.shape
    b = int(attrs["blocksize"])
    blocks = x.reshape(n, c, h // b, b, w // b, b)
    perm = (0, 3, 5, 1, 2, 4) if attrs.get("mode", "DCR") == "DCR" else (0, 1, 3, 5, 2, 4)
    return [blocks.transpose(perm).reshape(n, c * b * b, h // b, w // b)]


@register("EyeLike")
def eye_like(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    dtype = (
        x.dtype if attrs.get("dtype") is None else helper.tensor_dtype_to_np_dtype(attrs["dtype"])
    )
    return [np.eye(x.shape[0], x.shape[1], int(attrs.get("k", 0)), dtype=dtype)]


@register("ReverseSequence")
def reverse_sequence(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, lens = np.asarray(inputs[0]), np.asarray(inputs[1])
    batch_axis, time_axis = int(attrs.get("batch_axis", 1)), int(attrs.get("time_axis", 0))
    y = x.copy()
    for b, length in enumerate(lens):
        index: list[Any] = [slice(None)] * x.ndim
        index[batch_axis] = b
        index[time_axis] = slice(0, int(length))
        y[tuple(index)] = np.flip(x[tuple(index)], axis=time_axis - int(batch_axis < time_axis))
    return [y]


def center_crop_pad_extents(size: int, target: int) -> tuple[int, int, int]:
    """(crop start, pad before, pad after) that take an axis of `size` to `target`,
    centered (the extra element of an odd difference goes at the end)."""
    if size >= target:
        return (size - target) // 2, 0, 0
    before = (target - size) // 2
    return 0, before, target - size - before


@register("CenterCropPad")
def center_crop_pad(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, shape = np.asarray(inputs[0]), ints(inputs[1]) or []
    axes = [norm_axis(a, x.ndim) for a in (ints(attrs.get("axes")) or range(x.ndim))]
    crop: list[Any] = [slice(None)] * x.ndim
    pads = [(0, 0)] * x.ndim
    for axis, target in zip(axes, shape):
        start, before, after = center_crop_pad_extents(x.shape[axis], target)
        crop[axis] = slice(start, start + min(target, x.shape[axis]))
        pads[axis] = (before, after)
    return [np.pad(x[tuple(crop)], pads)]
