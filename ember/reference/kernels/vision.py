"""Vision kernels: GridSample, AffineGrid, Col2Im, RoiAlign and DeformConv."""

from __future__ import annotations

import itertools
import math

import numpy as np

from ember.dialects.graph.ops_vision import (
    CUBIC_A,
    GRID_TAPS,
    affine_base_grid,
    col2im_geometry,
    deform_conv_geometry,
)

from ._registry import Attrs, Inputs, arg, ints, register


def reflect(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """x folded back into [lo, hi] by reflecting at the borders (as often as it takes)."""
    span = hi - lo
    below, above = x < lo, x > hi
    distance = np.where(below, lo - x, x - hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        turns = np.trunc(distance / span)
    rest = distance - turns * span
    even = turns % 2 == 0
    from_below = np.where(even, lo + rest, hi - rest)
    from_above = np.where(even, hi - rest, lo + rest)
    return np.where(below, from_below, np.where(above, from_above, x))


def cubic_weight(distance: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution kernel (a = -0.75) at |distance| < 2."""
    d, a = np.abs(distance), CUBIC_A
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, far)


def grid_taps(g: np.ndarray, size: int, attrs: Attrs) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each [taps, *g.shape], of one spatial axis of `size`
    sampled at normalised positions `g`: indices within the axis, weights 0
    for taps that fall outside with zeros padding."""
    mode, padding, align = attrs["mode"], attrs["padding_mode"], bool(attrs["align_corners"])
    g = g.astype(np.float64)
    x = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    return sample_taps(x, size, mode, padding, align)


def sample_taps(x: np.ndarray, size: int, mode: str, padding: str,
                align: bool) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`grid_taps` at positions `x` in elements (not normalised)."""
    if mode == "nearest":
        x = np.rint(x)
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if padding == "border":
        x = np.where((x < lo) | (x > hi), np.clip(x, 0, size - 1), x)
    elif padding == "reflection":
        x = reflect(x, lo, hi)
    base = np.floor(x)
    fraction = x - base
    taps = GRID_TAPS[mode]
    first = -1 if mode == "cubic" else 0
    indices, weights = [], []
    for t in range(taps):
        i = base + first + t
        if mode == "nearest":
            w = np.ones_like(x)
        elif mode == "linear":
            w = 1 - np.abs(fraction - t)
        else:
            w = cubic_weight(fraction - (t - 1))
        if padding == "zeros":
            w = np.where((i >= 0) & (i <= size - 1), w, 0.0)
        elif padding == "reflection":
            i = np.trunc(reflect(i, lo, hi))
        indices.append(np.clip(i, 0, size - 1).astype(np.int64))
        weights.append(w)
    return np.stack(indices), np.stack(weights)


@register("GridSample")
def grid_sample(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, grid = inputs[0], inputs[1]
    assert x is not None and grid is not None
    spatial = x.ndim - 2
    # axis a is addressed by grid component spatial - 1 - a (x is the last axis)
    taps = [grid_taps(grid[..., spatial - 1 - a], x.shape[2 + a], attrs) for a in range(spatial)]
    n = np.arange(x.shape[0]).reshape(-1, *[1] * spatial)
    out = np.zeros((x.shape[0], *grid.shape[1:-1], x.shape[1]))
    for combination in itertools.product(*(range(len(i)) for i, _ in taps)):
        index = tuple(taps[a][0][t] for a, t in enumerate(combination))
        weight = math.prod(taps[a][1][t] for a, t in enumerate(combination))
        picked = np.moveaxis(x, 1, -1)[(n, *index)]  # [N, *out, C]
        out += weight[..., None] * picked
    return [np.moveaxis(out, -1, 1).astype(x.dtype)]


@register("AffineGrid")
def affine_grid(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    theta, size = inputs[0], ints(inputs[1])
    assert theta is not None and size is not None
    base = affine_base_grid(size[2:], bool(attrs["align_corners"]))
    grid = np.einsum("...j,nij->n...i", base, theta.astype(np.float64))
    return [grid.astype(theta.dtype)]


@register("Col2Im")
def col2im(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, image, block = inputs[0], ints(inputs[1]), ints(inputs[2])
    assert x is not None and image is not None and block is not None
    strides, dilations, pads, counts = col2im_geometry(dict(attrs), image, block)
    k = len(image)
    blocks = math.prod(block)
    cols = x.reshape(x.shape[0], -1, blocks, *counts)
    padded = np.zeros((*cols.shape[:2], *(image[i] + pads[i] + pads[i + k] for i in range(k))),
                      dtype=np.float64)  # fmt: skip
    for b, offset in enumerate(itertools.product(*(range(s) for s in block))):
        window = tuple(slice(offset[i] * dilations[i],
                             offset[i] * dilations[i] + (counts[i] - 1) * strides[i] + 1, strides[i])
                       for i in range(k))  # fmt: skip
        padded[(..., *window)] += cols[:, :, b]
    crop = tuple(slice(pads[i], pads[i] + image[i]) for i in range(k))
    return [padded[(..., *crop)].astype(x.dtype)]


def roi_axis_taps(start: np.ndarray, end: np.ndarray, size: int, bins: int, grid: np.ndarray,
                  attrs: Attrs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(indices, weights), each [rois, bins, samples, 2]: where the two
    bilinear taps of each sample along one axis read, and their weights
    (0 for a sample outside [-1, size]); and which samples [rois, bins,
    samples] the roi has (`grid` is the samples per bin of each roi; one
    with fewer than the most has no samples past its own)."""
    scale = float(attrs["spatial_scale"])
    half_pixel = attrs["coordinate_transformation_mode"] == "half_pixel"
    offset = 0.5 if half_pixel else 0.0
    start, end = start * scale - offset, end * scale - offset
    extent = end - start if half_pixel else np.maximum(end - start, 1.0)
    step = (extent / bins)[:, None, None]
    samples = int(grid.max())
    g = grid[:, None, None]
    position = (start[:, None, None] + np.arange(bins)[None, :, None] * step
                + (np.arange(samples)[None, None, :] + 0.5) * step / g)  # fmt: skip
    exists = np.broadcast_to(np.arange(samples)[None, None, :] < g, position.shape)
    inside = (position >= -1) & (position <= size) & exists
    clamped = np.clip(position, 0, size - 1)
    low = np.floor(clamped)
    fraction = clamped - low
    indices = np.stack([low, np.minimum(low + 1, size - 1)], axis=-1).astype(np.int64)
    weights = np.stack([1 - fraction, fraction], axis=-1) * inside[..., None]
    return indices, weights, exists


@register("RoiAlign")
def roi_align(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, rois, batch = inputs[0], inputs[1], inputs[2]
    assert x is not None and rois is not None and batch is not None
    height, width = int(attrs["output_height"]), int(attrs["output_width"])
    r = rois.astype(np.float64)
    ratio = int(attrs["sampling_ratio"])
    half_pixel = attrs["coordinate_transformation_mode"] == "half_pixel"
    extents = (r[:, 2:] - r[:, :2]) * float(attrs["spatial_scale"])
    if not half_pixel:
        extents = np.maximum(extents, 1.0)
    if ratio > 0:
        grids = np.full((len(r), 2), ratio)
    else:  # as many samples as the bin is wide: [x, y] per roi
        grids = np.ceil(extents / np.array([width, height])).astype(int)
    ys, wy, y_exists = roi_axis_taps(r[:, 1], r[:, 3], x.shape[2], height, grids[:, 1], attrs)
    xs, wx, x_exists = roi_axis_taps(r[:, 0], r[:, 2], x.shape[3], width, grids[:, 0], attrs)
    # [rois, C, H', W', sy, sx, ty, tx]
    image = np.moveaxis(x[batch.astype(np.int64)], 1, -1).astype(np.float64)  # [rois, H, W, C]
    rows = np.arange(len(r))[:, None, None, None, None, None, None]
    picked = image[rows, ys[:, :, None, :, None, :, None], xs[:, None, :, None, :, None, :]]
    weighted = (wy[:, :, None, :, None, :, None] * wx[:, None, :, None, :, None, :])[
        ..., None
    ] * picked
    if attrs["mode"] == "avg":
        count = np.maximum(grids[:, 0] * grids[:, 1], 1).reshape(-1, 1, 1, 1)
        pooled = weighted.sum(axis=(3, 4, 5, 6)) / count
    else:
        exists = y_exists[:, :, None, :, None] & x_exists[:, None, :, None, :]
        exists = exists[..., None, None, None]  # [rois, H', W', sy, sx, 1, 1, 1]
        pooled = np.where(exists, weighted, -np.inf).max(axis=(3, 4, 5, 6))
    return [np.moveaxis(pooled, -1, 1).astype(x.dtype)]


@register("DeformConv")
def deform_conv(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, w, offset, bias, mask = (arg(inputs, i) for i in range(5))
    assert x is not None and w is not None and offset is not None
    n, c, height, width = x.shape
    out_channels, per_group, kh, kw = w.shape
    group, offset_group = int(attrs["group"]), int(attrs["offset_group"])
    (sh, sw), (dh, dw), pads = deform_conv_geometry(dict(attrs))
    oh, ow = offset.shape[2:]
    moves = offset.reshape(n, offset_group, kh, kw, 2, oh, ow).astype(np.float64)
    # tap positions [n, offset group, kh, kw, oh, ow], in elements
    y = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(oh) * sh - pads[0])[:, None]
    x_pos = (np.arange(kw) * dw)[:, None, None] + (np.arange(ow) * sw - pads[1])
    y, x_pos = y + moves[:, :, :, :, 0], x_pos + moves[:, :, :, :, 1]
    rows, row_weights = sample_taps(y, height, "linear", "zeros", True)
    cols, col_weights = sample_taps(x_pos, width, "linear", "zeros", True)
    image = x.reshape(n, offset_group, c // offset_group, height, width).astype(np.float64)
    batch = np.arange(n).reshape(-1, 1, 1, 1, 1, 1)
    groups = np.arange(offset_group).reshape(1, -1, 1, 1, 1, 1)
    sampled = np.zeros((n, offset_group, kh, kw, oh, ow, c // offset_group))
    for ty, tx in itertools.product(range(2), range(2)):
        picked = image[batch, groups, :, rows[ty], cols[tx]]  # [n, og, kh, kw, oh, ow, cg]
        sampled += (row_weights[ty] * col_weights[tx])[..., None] * picked
    if mask is not None:
        sampled *= mask.reshape(n, offset_group, kh, kw, oh, ow)[..., None]
    columns = np.moveaxis(sampled, -1, 2).reshape(n, group, per_group, kh, kw, oh, ow)
    weights = w.reshape(group, out_channels // group, per_group, kh, kw).astype(np.float64)
    out = np.einsum("ngcijhw,gocij->ngohw", columns, weights).reshape(n, out_channels, oh, ow)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return [out.astype(x.dtype)]
