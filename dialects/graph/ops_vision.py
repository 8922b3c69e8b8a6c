"""Vision `graph` ops: ONNX GridSample (opset 20), AffineGrid, Col2Im,
RoiAlign and DeformConv.

- GridSample samples X [N, C, *D] (2 or 3 spatial axes) at the normalised
  positions of grid [N, *out, k] (component 0 addresses the last axis, as
  x does the width), `nearest`, `linear` or `cubic` (Keys, a = -0.75), with
  `zeros`, `border` or `reflection` padding. Sampling is separable: each
  spatial axis contributes a few taps (1, 2 or 4), each an index and a
  weight, and the result is the sum over every combination of taps of the
  product of their weights times the element they address (`GRID_TAPS`
  taps per axis; the kernel's `grid_taps` and the lowering's `_tap` compute
  them by the same rules, ONNX's reference's).
- AffineGrid maps the normalised positions of an output of `size` by theta
  [N, k, k + 1]: the grid of `affine_base_grid`, contracted with theta.
- Col2Im sums sliding blocks [N, C * prod(block), L] back into an image
  [N, C, *image_shape] (the inverse layout of im2col); `col2im_table` gives,
  for every image position and block offset, the block that covers it.
- RoiAlign pools each region of interest [x1, y1, x2, y2] (scaled by
  `spatial_scale`) of image `batch_indices[r]` into output_height x
  output_width bins, averaging (or taking the largest of) bilinear samples
  on a grid of `sampling_ratio` x `sampling_ratio` points per bin (0: as
  many as the bin is wide, at least one, which depends on the rois'
  values). The bilinear weights are separable as GridSample's: two taps
  per axis and sample, a sample outside [-1, size] weighing nothing.
- DeformConv (2-D) is a convolution whose taps read X at their own
  positions moved by `offset` (one (dy, dx) per offset group, kernel tap and
  output point), sampled bilinearly as GridSample's linear zeros-padded
  taps, times `mask` when given.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result, same_element_type
from ember.dialects.graph.spec import (
    OpSpec,
    float_attr,
    int_attr,
    ints_attr,
    one,
    opt,
    string_attr,
)
from ember.dialects.graph.symbolic import Dim
from ember.dialects.graph.types import DYNAMIC, is_float

GRID_MODES = ("nearest", "linear", "cubic")
PADDING_MODES = ("zeros", "border", "reflection")
GRID_TAPS = {"nearest": 1, "linear": 2, "cubic": 4}
"""Taps per spatial axis: the nearest element, the two around the position,
or the four around it (the first tap one before its floor)."""
CUBIC_A = -0.75


def grid_sample(ctx: ShapeContext) -> list[TensorType]:
    x, grid = ctx.shape("X"), ctx.shape("grid")
    element_type = same_element_type(ctx, [ctx.type("X"), ctx.type("grid")])
    if not is_float(element_type):
        raise ShapeError(f"X and grid must be float tensors, got {element_type}")
    if len(x) not in (4, 5):
        raise ShapeError(f"X must be [N, C, H, W] or [N, C, D, H, W], got rank {len(x)}")
    spatial = len(x) - 2
    if len(grid) != len(x) or grid[-1] not in (spatial, DYNAMIC):
        raise ShapeError(f"grid must be [N, *output, {spatial}], got {list(grid)}")
    if DYNAMIC not in (x[0], grid[0]) and x[0] != grid[0]:
        raise ShapeError(f"X and grid have batches {x[0]} and {grid[0]}")
    for name, allowed in (("mode", GRID_MODES), ("padding_mode", PADDING_MODES)):
        if ctx.attr(name) not in allowed:
            raise ShapeError(f"unknown {name} '{ctx.attr(name)}' (one of {', '.join(allowed)})")
    return result(element_type, [x[0], x[1], *grid[1:-1]])


# ------------------------------------------------------------ AffineGrid


def affine_base_grid(sizes: list[int], align_corners: bool) -> np.ndarray:
    """[*sizes, k + 1]: the normalised position of every output point, its
    coordinates last axis first (x, y[, z]), then 1."""
    axes = []
    for size in sizes:
        i = np.arange(size, dtype=np.float64)
        if align_corners:
            axes.append(-1 + 2 * i / (size - 1) if size > 1 else np.zeros(1))
        else:
            axes.append(-1 + (2 * i + 1) / size)
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([*reversed(mesh), np.ones(sizes)], axis=-1)


def affine_grid(ctx: ShapeContext) -> list[TensorType]:
    theta = ctx.shape("theta")
    if not is_float(ctx.element_type("theta")):
        raise ShapeError(f"theta must be a float tensor, got {ctx.type('theta')}")
    if len(theta) != 3 or theta[1] not in (2, 3, DYNAMIC):
        raise ShapeError(f"theta must be [N, 2, 3] or [N, 3, 4], got {list(theta)}")
    size = ctx.int_values("size")
    if ctx.shape("size") not in ((4,), (5,)):
        raise ShapeError(f"size must hold 4 or 5 values, got {ctx.type('size')}")
    spatial = ctx.shape("size")[0] - 2
    if theta[1] != DYNAMIC and (theta[1], theta[2]) != (spatial, spatial + 1):
        raise ShapeError(f"theta {list(theta)} does not fit a size of {spatial + 2} values")
    dims: list[Dim] = [DYNAMIC] * spatial if size is None else list(size[2:])
    return result(ctx.element_type("theta"), [theta[0], *dims, spatial])


# ---------------------------------------------------------------- Col2Im


def col2im_geometry(ctx_attrs: dict, image: list[int], block: list[int]) -> tuple[list[int], ...]:
    """(strides, dilations, pads [begin..., end...], blocks per axis)."""
    k = len(image)
    strides = ctx_attrs.get("strides") or [1] * k
    dilations = ctx_attrs.get("dilations") or [1] * k
    pads = ctx_attrs.get("pads") or [0] * (2 * k)
    counts = [(image[i] + pads[i] + pads[i + k] - dilations[i] * (block[i] - 1) - 1)
              // strides[i] + 1 for i in range(k)]  # fmt: skip
    return strides, dilations, pads, counts


def col2im_table(attrs: dict, image: list[int], block: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(index, covered), each [prod(image), prod(block)]: the block (column
    of the input's last axis) whose offset `b` lands on image position `p`,
    and whether one does (positions between strides or in the padding have
    none)."""
    strides, dilations, pads, counts = col2im_geometry(attrs, image, block)
    k = len(image)
    positions = np.indices(image).reshape(k, -1, 1)  # [k, P, 1]
    offsets = np.indices(block).reshape(k, 1, -1)  # [k, 1, B]
    start = positions + np.array(pads[:k]).reshape(k, 1, 1) - offsets * np.array(
        dilations).reshape(k, 1, 1)  # fmt: skip
    stride = np.array(strides).reshape(k, 1, 1)
    slot = start // stride
    covered = np.all((start % stride == 0) & (slot >= 0)
                     & (slot < np.array(counts).reshape(k, 1, 1)), axis=0)  # fmt: skip
    index = np.ravel_multi_index(tuple(np.clip(slot, 0, np.array(counts).reshape(k, 1, 1) - 1)),
                                 counts)  # fmt: skip
    return index.astype(np.int64), covered


def col2im(ctx: ShapeContext) -> list[TensorType]:
    x = ctx.shape("input")
    if len(x) != 3:
        raise ShapeError(f"input must be [N, C * prod(block_shape), L], got {list(x)}")
    image, block = ctx.int_values("image_shape"), ctx.int_values("block_shape")
    k = ctx.shape("image_shape")[0] if ctx.shape("image_shape") else DYNAMIC
    if image is None or block is None:
        return result(ctx.element_type("input"), [x[0], DYNAMIC, *([DYNAMIC] * int(k))])
    if len(image) != len(block):
        raise ShapeError(f"image_shape {image} and block_shape {block} differ in rank")
    attrs = {n: ctx.attr(n) for n in ("strides", "dilations", "pads")}
    for name, length in (("strides", len(image)), ("dilations", len(image)),
                         ("pads", 2 * len(image))):  # fmt: skip
        if attrs[name] is not None and len(attrs[name]) != length:
            raise ShapeError(f"{name} must have {length} values, got {attrs[name]}")
    *_, counts = col2im_geometry(attrs, [int(i) for i in image], [int(b) for b in block])
    blocks = math.prod(int(b) for b in block)
    if x[1] != DYNAMIC and x[1] % blocks:
        raise ShapeError(f"input's {x[1]} rows are not a multiple of the block's {blocks}")
    if x[2] != DYNAMIC and x[2] != math.prod(counts):
        raise ShapeError(f"input has {x[2]} blocks, the image holds {math.prod(counts)}")
    channels = DYNAMIC if x[1] == DYNAMIC else x[1] // blocks
    return result(ctx.element_type("input"), [x[0], channels, *image])


# -------------------------------------------------------------- RoiAlign

ROI_MODES = ("avg", "max")
ROI_TRANSFORMS = ("half_pixel", "output_half_pixel")


def roi_align(ctx: ShapeContext) -> list[TensorType]:
    x, rois, batch = ctx.shape("X"), ctx.shape("rois"), ctx.shape("batch_indices")
    element_type = same_element_type(ctx, [ctx.type("X"), ctx.type("rois")])
    if not is_float(element_type):
        raise ShapeError(f"X and rois must be float tensors, got {element_type}")
    if len(x) != 4:
        raise ShapeError(f"X must be [N, C, H, W], got {list(x)}")
    if len(rois) != 2 or rois[1] not in (4, DYNAMIC):
        raise ShapeError(f"rois must be [num_rois, 4], got {list(rois)}")
    if len(batch) != 1 or DYNAMIC not in (batch[0], rois[0]) and batch[0] != rois[0]:
        raise ShapeError(f"batch_indices must be [num_rois], got {list(batch)}")
    for name, allowed in (("mode", ROI_MODES), ("coordinate_transformation_mode", ROI_TRANSFORMS)):
        if ctx.attr(name) not in allowed:
            raise ShapeError(f"unknown {name} '{ctx.attr(name)}' (one of {', '.join(allowed)})")
    height, width = ctx.attr("output_height"), ctx.attr("output_width")
    if height < 1 or width < 1 or ctx.attr("sampling_ratio") < 0:
        raise ShapeError(f"output {height} x {width} and sampling_ratio "
                         f"{ctx.attr('sampling_ratio')} must be positive")  # fmt: skip
    return result(element_type, [rois[0], x[1], height, width])


# ------------------------------------------------------------ DeformConv


def deform_conv_geometry(attrs: dict) -> tuple[list[int], ...]:
    """(strides, dilations, pads [top, left, bottom, right]) with ONNX's defaults."""
    strides = attrs.get("strides") or [1, 1]
    dilations = attrs.get("dilations") or [1, 1]
    pads = attrs.get("pads") or [0, 0, 0, 0]
    return strides, dilations, pads


def deform_conv(ctx: ShapeContext) -> list[TensorType]:
    x, w, offset = ctx.shape("X"), ctx.shape("W"), ctx.shape("offset")
    element_type = same_element_type(ctx, [ctx.type("X"), ctx.type("W"), ctx.type("offset")])
    if not is_float(element_type):
        raise ShapeError(f"X, W and offset must be float tensors, got {element_type}")
    if len(x) != 4 or len(w) != 4 or len(offset) != 4:
        raise ShapeError(f"X, W and offset must be 4-D (2-D images), got ranks "
                         f"{len(x)}, {len(w)}, {len(offset)}")  # fmt: skip
    if DYNAMIC in (*x[1:], *w):
        raise ShapeError("the channels, image and kernel sizes must be static")
    group, offset_group = ctx.attr("group"), ctx.attr("offset_group")
    kernel = ctx.attr("kernel_shape") or list(w[2:])
    if list(kernel) != list(w[2:]):
        raise ShapeError(f"kernel_shape {kernel} differs from W's {list(w[2:])}")
    if x[1] != w[1] * group or w[0] % group or x[1] % offset_group:
        raise ShapeError(f"X's {x[1]} channels, W {list(w)}, group {group} and offset_group "
                         f"{offset_group} do not fit")  # fmt: skip
    attrs = {n: ctx.attr(n) for n in ("strides", "dilations", "pads")}
    strides, dilations, pads = deform_conv_geometry(attrs)
    out = [(x[2 + i] + pads[i] + pads[i + 2] - dilations[i] * (kernel[i] - 1) - 1) // strides[i]
           + 1 for i in range(2)]  # fmt: skip
    taps = offset_group * kernel[0] * kernel[1]
    if offset[1] not in (2 * taps, DYNAMIC) or [*offset[2:]] != out:
        raise ShapeError(f"offset must be [N, {2 * taps}, {out[0]}, {out[1]}], got {list(offset)}")
    if ctx.has("B") and ctx.shape("B") != (w[0],):
        raise ShapeError(f"B must be [{w[0]}], got {ctx.type('B')}")
    if ctx.has("mask") and list(ctx.shape("mask")[1:]) != [taps, *out]:
        raise ShapeError(f"mask must be [N, {taps}, {out[0]}, {out[1]}], got {ctx.type('mask')}")
    return result(element_type, [x[0], w[0], *out])


SPECS = [
    OpSpec("GridSample", [one("X"), one("grid")], [one("Y")], grid_sample,
           attributes=(int_attr("align_corners", 0), string_attr("mode", "linear"),
                       string_attr("padding_mode", "zeros")),
           summary="Samples X at the normalised positions of grid."),
    OpSpec("AffineGrid", [one("theta"), one("size")], [one("grid")], affine_grid,
           attributes=(int_attr("align_corners", 0),),
           summary="The sampling grid of affine transforms theta for an output of size."),
    OpSpec("Col2Im", [one("input"), one("image_shape"), one("block_shape")], [one("output")],
           col2im, attributes=(ints_attr("dilations"), ints_attr("pads"), ints_attr("strides")),
           summary="Sums sliding blocks back into an image (the inverse of im2col)."),
    OpSpec("RoiAlign", [one("X"), one("rois"), one("batch_indices")], [one("Y")], roi_align,
           attributes=(string_attr("coordinate_transformation_mode", "half_pixel"),
                       string_attr("mode", "avg"), int_attr("output_height", 1),
                       int_attr("output_width", 1), int_attr("sampling_ratio", 0),
                       float_attr("spatial_scale", 1.0)),
           summary="Pools regions of interest into fixed-size bins by bilinear samples."),
    OpSpec("DeformConv", [one("X"), one("W"), one("offset"), opt("B"), opt("mask")], [one("Y")],
           deform_conv,
           attributes=(ints_attr("dilations"), int_attr("group", 1), ints_attr("kernel_shape"),
                       int_attr("offset_group", 1), ints_attr("pads"), ints_attr("strides")),
           summary="A 2-D convolution whose taps read at positions moved by offset."),
]  # fmt: skip


@graph_op(SPECS)
class GridSampleOp(GraphOp): ...


@graph_op(SPECS)
class AffineGridOp(GraphOp): ...


@graph_op(SPECS)
class Col2ImOp(GraphOp): ...


@graph_op(SPECS)
class RoiAlignOp(GraphOp): ...


@graph_op(SPECS)
class DeformConvOp(GraphOp): ...
