"""`graph.resize`: ONNX Resize (opset 19), and the sampling it means.

Resize is separable: along each resized axis, output position `o` is a
weighted sum of a few input positions along that axis, the same for every
other coordinate. `axis_samples` computes those positions and weights for
one axis (ONNX's coordinate transformations, nearest modes, linear and cubic
filters, antialiasing, exclude_outside, and the crop-and-resize
extrapolation mask); `resize_plan` gives the output shape and the samples of
every axis that changes, in axis order. The NumPy reference kernel and the
tensor-level lowering both apply these tables, so the op's arithmetic is
written once, here, next to its shape rule.

Output sizes follow ONNX's reference and onnxruntime: `floor(size * scale)`
for `scales` (the ROI of `tf_crop_and_resize` does not enter), `sizes` as
given or fitted by `keep_aspect_ratio_policy`. The coordinate
transformations use the real-valued output length `size * scale`, as ONNX's
reference does (it differs from the integer length only when `scales` is
given and `size * scale` is not whole).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType, f32, i64

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result
from ember.dialects.graph.spec import (
    OpSpec,
    float_attr,
    int_attr,
    ints_attr,
    one,
    opt,
    string_attr,
)
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.graph.types import DYNAMIC

MODES = ("nearest", "linear", "cubic")
TRANSFORMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
              "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn")  # fmt: skip
"""Coordinate transformations (`tf_half_pixel_for_nn` is opsets 11-13's)."""
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
ASPECT_POLICIES = ("stretch", "not_larger", "not_smaller")


@dataclass(frozen=True)
class Sampling:
    """The attributes that decide how one axis is sampled."""

    mode: str = "nearest"
    transform: str = "half_pixel"
    nearest_mode: str = "round_prefer_floor"
    cubic_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False

    @staticmethod
    def of(attrs: dict) -> Sampling:
        """From an op's (or ONNX node's) attributes, ONNX defaults for the missing."""
        return Sampling(
            attrs.get("mode", "nearest"),
            attrs.get("coordinate_transformation_mode", "half_pixel"),
            attrs.get("nearest_mode", "round_prefer_floor"),
            float(attrs.get("cubic_coeff_a", -0.75)),
            bool(attrs.get("exclude_outside", 0)),
            bool(attrs.get("antialias", 0)),
        )


@dataclass(frozen=True)
class AxisSamples:
    """Output position `o` along `axis` is `sum_t weights[o, t] * x[indices[o, t]]`,
    or the extrapolation value where `outside[o]` (crop-and-resize only)."""

    axis: int
    indices: np.ndarray  # int64 [out, taps], within [0, size)
    weights: np.ndarray  # float64 [out, taps]
    outside: np.ndarray | None  # bool [out], None when no position is outside

    def picks(self) -> np.ndarray | None:
        """The one index per output position when every row takes one input
        with weight 1 (nearest), else None."""
        hot = self.weights == 1.0
        if not (np.all(hot.sum(axis=1) == 1) and np.all(self.weights[~hot] == 0.0)):
            return None
        return self.indices[hot]


def _source_coordinates(
    transform: str, size: int, out: int, scale: float, roi: tuple[float, float]
) -> np.ndarray:
    """x_original of every output position along an axis."""
    y = np.arange(out, dtype=np.float64)
    length = scale * size  # real-valued, as ONNX's reference has it
    if transform == "align_corners":
        return np.zeros(out) if length == 1 else y * (size - 1) / (length - 1)
    if transform == "asymmetric":
        return y / scale
    if transform == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale
    if transform == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            x = np.full(out, (end - start) * (size - 1) / 2)
        else:
            x = y * (end - start) * (size - 1) / (length - 1)
        return x + start * (size - 1)
    if transform == "pytorch_half_pixel":
        return np.full(out, -0.5) if length == 1 else (y + 0.5) / scale - 0.5
    if transform == "half_pixel":
        return (y + 0.5) / scale - 0.5
    assert transform == "half_pixel_symmetric"
    offset = size / 2 * (1 - out / length)
    return offset + (y + 0.5) / scale - 0.5


def _cubic(distance: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient `a`."""
    d = np.abs(distance)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _filter(sampling: Sampling, scale: float, ratio: np.ndarray) -> tuple[int, np.ndarray]:
    """(offset of the first tap from the left neighbour, weights [out, taps]).
    `ratio` in (0, 1] is each source coordinate's distance from its left
    neighbour (1 at a whole coordinate, so the neighbour on the left is preferred)."""
    r = ratio[:, None]
    if sampling.mode == "nearest":
        whole = r == 1.0
        above = {
            "round_prefer_floor": r > 0.5,
            "round_prefer_ceil": r >= 0.5,
            "floor": np.zeros_like(whole),
            "ceil": np.ones_like(whole),
        }[sampling.nearest_mode] | whole
        return 0, np.concatenate([~above, above], axis=1).astype(np.float64)
    reach = 1 if sampling.mode == "linear" else 2  # the filter's half-width
    stretch = min(scale, 1.0) if sampling.antialias else 1.0
    first = math.floor(-reach / stretch) + 1
    taps = np.arange(first, 2 - first)[None, :]
    distance = (taps - r) * stretch
    if sampling.mode == "linear":
        weights = np.clip(1 - np.abs(distance), 0, 1)
    else:
        weights = _cubic(distance, sampling.cubic_a)
    if sampling.antialias:
        weights = weights / weights.sum(axis=1, keepdims=True)
    return first, weights


def axis_samples(axis: int, size: int, out: int, scale: float, sampling: Sampling,
                 roi: tuple[float, float] = (0.0, 1.0)) -> AxisSamples:  # fmt: skip
    """The samples of one resized axis of `size` positions into `out`."""
    x = _source_coordinates(sampling.transform, size, out, scale, roi)
    left = np.ceil(x).astype(np.int64) - 1
    first, weights = _filter(sampling, scale, x - left)
    indices = left[:, None] + first + np.arange(weights.shape[1])[None, :]
    if sampling.exclude_outside:
        weights = np.where((indices < 0) | (indices >= size), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    outside = None
    if sampling.transform == "tf_crop_and_resize":
        mask = (x < 0) | (x > size - 1)
        outside = mask if mask.any() else None
    return AxisSamples(axis, np.clip(indices, 0, size - 1), weights, outside)


# ---------------------------------------------------------------- sizes


def _absent(value: np.ndarray | None) -> bool:
    return value is None or value.size == 0


@dataclass(frozen=True)
class ResizeTargets:
    """Per axis of the input: the output size and the scale the coordinate
    transformation uses, and the crop window (start, end) in [0, 1]."""

    sizes: list[Dim]
    scales: list[float]
    roi: list[tuple[float, float]]


def resize_targets(
    shape: Sequence[Dim],
    axes: Sequence[int] | None,
    roi: np.ndarray | None,
    scales: np.ndarray | None,
    sizes: np.ndarray | None,
    policy: str = "stretch",
) -> ResizeTargets:
    """Output sizes and scales of a Resize of an input of `shape`, from its
    `roi`, `scales` or `sizes` values (empty or None: absent); pass `roi`
    only for `tf_crop_and_resize`, the one transformation that reads it."""
    rank = len(shape)
    axes = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    if sorted(set(axes)) != sorted(axes) or any(not 0 <= a < rank for a in axes):
        raise ShapeError(f"axes {list(axes)} must be distinct axes of a rank-{rank} input")
    if _absent(scales) == _absent(sizes):
        raise ShapeError("exactly one of scales and sizes must be given")
    given = scales if not _absent(scales) else sizes
    assert given is not None
    if given.size != len(axes):
        name = "scales" if given is scales else "sizes"
        raise ShapeError(f"{name} has {given.size} values for {len(axes)} axes")
    window = [(0.0, 1.0)] * rank
    if not _absent(roi):
        assert roi is not None
        if roi.size != 2 * len(axes):
            raise ShapeError(f"roi has {roi.size} values for {len(axes)} axes")
        flat = [float(v) for v in roi.reshape(-1)]
        for i, a in enumerate(axes):
            window[a] = (flat[i], flat[len(axes) + i])
    out: list[Dim] = list(shape)
    factors = [1.0] * rank
    if given is scales:
        for a, s in zip(axes, (float(v) for v in scales.reshape(-1))):
            if s <= 0:
                raise ShapeError(f"scales must be positive, got {s}")
            factors[a] = s
            if s != 1.0:
                out[a] = math.floor(_static(shape[a], a) * s)
        return ResizeTargets(out, factors, window)
    wanted = [v if isinstance(v, SymExpr) else int(v) for v in given.reshape(-1)]
    if any(isinstance(w, int) and w < 0 for w in wanted):
        raise ShapeError(f"sizes must not be negative, got {wanted}")
    # a size equal to the input's (a symbol a Shape gave, say) leaves its axis
    ratios = {a: 1.0 if w == shape[a] else _static(w, a) / _static(shape[a], a)
              for a, w in zip(axes, wanted)}  # fmt: skip
    if policy != "stretch":
        common = (min if policy == "not_larger" else max)(ratios.values())
        ratios = dict.fromkeys(axes, common)
        wanted = [int(common * _static(shape[a], a) + 0.5) for a in axes]
    for a, w in zip(axes, wanted):
        out[a], factors[a] = w, ratios[a]
    return ResizeTargets(out, factors, window)


def _static(size: Dim, axis: int) -> int:
    if isinstance(size, SymExpr) or size == DYNAMIC:
        raise ShapeError(f"axis {axis} is resized, so its size must be known at compile time, "
                         f"got {size}")  # fmt: skip
    return int(size)


def resize_plan(shape: Sequence[int], targets: ResizeTargets,
                sampling: Sampling) -> list[AxisSamples]:  # fmt: skip
    """The samples of each axis the resize changes, in axis order (an axis
    whose size, scale and window stay is left out)."""
    plan = []
    for axis, (size, out, scale, roi) in enumerate(
        zip(shape, targets.sizes, targets.scales, targets.roi)
    ):
        if out == size and math.isclose(scale, 1.0) and np.allclose(roi, (0.0, 1.0)):
            continue
        assert isinstance(out, int)
        plan.append(axis_samples(axis, int(size), out, scale, sampling, roi))
    return plan


# ---------------------------------------------------------------- the op


def _values(ctx: ShapeContext, name: str) -> np.ndarray | None:
    if not ctx.has(name):
        return None
    value = ctx.value(name)
    if value is None and 0 in ctx.shape(name):
        return np.zeros(0)
    return value


def resize(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("X")
    sampling = Sampling.of({n: ctx.attr(n) for n in ctx.spec_attr_names()})
    for value, allowed, what in (
        (sampling.mode, MODES, "mode"),
        (sampling.transform, TRANSFORMS, "coordinate_transformation_mode"),
        (sampling.nearest_mode, NEAREST_MODES, "nearest_mode"),
        (ctx.attr("keep_aspect_ratio_policy"), ASPECT_POLICIES, "keep_aspect_ratio_policy"),
    ):
        if value not in allowed:
            raise ShapeError(f"unknown {what} '{value}' (one of {', '.join(allowed)})")
    if sampling.mode != "nearest" and ctx.element_type("X") not in (f32,):
        raise ShapeError(f"{sampling.mode} resize needs f32 data, got {ctx.element_type('X')}")
    for name, element_type in (("scales", f32), ("sizes", i64)):
        if ctx.has(name) and ctx.element_type(name) != element_type:
            raise ShapeError(f"{name} must be {element_type}, got {ctx.type(name)}")
    roi, scales, sizes = (_values(ctx, n) for n in ("roi", "scales", "sizes"))
    if (
        (ctx.has("scales") and scales is None)
        or (ctx.has("sizes") and sizes is None)
        or (ctx.has("roi") and roi is None)
    ):
        # values computed at run time: the resized axes are unknown
        axes = ctx.attr("axes") or range(len(shape))
        return result(ctx.element_type("X"),
                      [DYNAMIC if i in axes or i - len(shape) in axes else d
                       for i, d in enumerate(shape)])  # fmt: skip
    if sampling.transform == "tf_crop_and_resize" and _absent(roi):
        raise ShapeError("tf_crop_and_resize needs roi")
    crop = roi if sampling.transform == "tf_crop_and_resize" else None
    targets = resize_targets(shape, ctx.attr("axes"), crop, scales, sizes,
                             ctx.attr("keep_aspect_ratio_policy"))  # fmt: skip
    return result(ctx.element_type("X"), targets.sizes)


SPECS = [
    OpSpec("Resize", [one("X"), opt("roi"), opt("scales"), opt("sizes")], [one("Y")], resize,
           attributes=(int_attr("antialias", 0), ints_attr("axes"),
                       string_attr("coordinate_transformation_mode", "half_pixel"),
                       float_attr("cubic_coeff_a", -0.75), int_attr("exclude_outside", 0),
                       float_attr("extrapolation_value", 0.0),
                       string_attr("keep_aspect_ratio_policy", "stretch"),
                       string_attr("mode", "nearest"),
                       string_attr("nearest_mode", "round_prefer_floor")),
           summary="Resamples along the axes: nearest, linear or cubic, by scales or to sizes."),
]  # fmt: skip


@graph_op(SPECS)
class ResizeOp(GraphOp): ...
