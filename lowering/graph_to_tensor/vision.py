"""Graph-to-tensor lowering of the vision ops.

- GridSample, separable (`ops_vision`): one parallel generic computes, for
  every grid point, spatial axis and tap, the index and weight of that tap
  from the grid value (`[k, N, *out, taps]` each, axes in the grid's
  component order); an `ember_linalg.gather` reads X at every combination
  of taps (`[N, C, *out, taps...]`, one symbol per axis, its index read
  from the index tensor); one reduction generic sums them weighted by the
  product of the taps' weights. Zeros padding is a zero weight on a tap
  outside, its index clamped, so the gather never reads outside X.
- AffineGrid: the constant base grid of the output size contracted with
  theta in one generic.
- RoiAlign (a fixed `sampling_ratio`): as GridSample, one generic computes
  the two taps of every sample along y and x of every roi (`[2, R, bins,
  samples, 2]`), joined by the rois' batch indices into one index tensor;
  a gather reads X at every combination, and a reduction sums (then
  divides by the samples) or takes the largest of the weighted taps.
- DeformConv: as GridSample, one generic computes the two linear taps of
  every kernel tap's moved position along y and x (zeros padding), a
  gather samples X (seen as [N, offset groups, channels, H, W]) at them, a
  reduction interpolates (times the mask); then a grouped contraction with
  W over channels and kernel taps, and the bias.
- Col2Im: the input seen as [N, C, block, L]; a gather by the constant table
  of which block covers each image position at each block offset
  (`ops_vision.col2im_table`), then a reduction over the block offsets
  weighted by whether one covers it, reshaped to the image.

Sizes are static; Col2Im's image_shape and block_shape and AffineGrid's
size must be constants, and RoiAlign's sampling_ratio above 0 (0 makes the
number of samples depend on the rois' values)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ember.dialects import ember_linalg
from ember.dialects.graph import (
    AffineGridOp,
    Col2ImOp,
    DeformConvOp,
    GraphOp,
    GridSampleOp,
    RoiAlignOp,
)
from ember.dialects.graph.dims import symbolic_type
from ember.dialects.graph.ops_vision import (
    CUBIC_A,
    GRID_TAPS,
    affine_base_grid,
    col2im_table,
    deform_conv_geometry,
)
from ember.dialects.graph.types import numpy_dtype
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
    _shape,
)

# ------------------------------------------------------------ GridSample


def _reflect(b: Body, x: SSAValue, lo: SSAValue, hi: SSAValue) -> SSAValue:
    """x folded back into [lo, hi] by reflecting at the borders (the reference's `reflect`)."""
    t = x.type
    below, above = b.cmpf("olt", x, lo), b.cmpf("ogt", x, hi)
    distance = b.select(below, b.sub(lo, x), b.sub(x, hi))
    span = b.sub(hi, lo)
    turns = b.math(xmath.TruncOp, b.div(distance, span))
    rest = b.sub(distance, b.mul(turns, span))
    halves = b.math(xmath.TruncOp, b.mul(turns, b.const(0.5, t)))
    even = b.cmpf("oeq", turns, b.add(halves, halves))
    from_below = b.select(even, b.add(lo, rest), b.sub(hi, rest))
    from_above = b.select(even, b.sub(hi, rest), b.add(lo, rest))
    return b.select(below, from_below, b.select(above, from_above, x))


def _clamp(b: Body, x: SSAValue, lo: SSAValue, hi: SSAValue) -> SSAValue:
    return b.min_skipping_nan(b.max_skipping_nan(x, lo), hi)


def _cubic_weight(b: Body, distance: SSAValue) -> SSAValue:
    """Keys' kernel (a = -0.75) at |distance| < 2 (the reference's `cubic_weight`)."""
    t = distance.type
    d = b.abs(distance)
    a = CUBIC_A

    def c(v: float) -> SSAValue:
        return b.const(v, t)

    near = b.add(b.mul(b.mul(b.sub(b.mul(c(a + 2), d), c(a + 3)), d), d), c(1))
    far = b.sub(b.mul(b.add(b.mul(b.sub(b.mul(c(a), d), c(5 * a)), d), c(8 * a)), d), c(4 * a))
    return b.select(b.cmpf("ole", d, c(1)), near, far)


def _position(b: Body, dim: int, t: Attribute) -> SSAValue:
    """The generic's position along `dim`, as a float of type `t`."""
    return b.emit(arith.SIToFPOp(b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(dim)), i64)), t))


def _tap(op: GraphOp, b: Body, g: SSAValue, size: SSAValue) -> list[SSAValue]:
    """(index, weight) of the tap `linalg.index(last)` of one axis of `size`
    elements at grid value g (the reference's `grid_taps`)."""
    t = g.type
    one, half = b.const(1.0, t), b.const(0.5, t)
    shifted = b.add(g, one)
    if op.attr("align_corners"):
        x = b.mul(b.mul(shifted, half), b.sub(size, one))
    else:
        x = b.mul(b.sub(b.mul(shifted, size), one), half)
    tap = _position(b, len(_shape(op.results[0])), t)  # [k, N, *out, tap]: tap is dim k + 2
    return _sample_tap(b, x, size, tap, op.attr("mode"), op.attr("padding_mode"),
                       bool(op.attr("align_corners")))  # fmt: skip


def _sample_tap(b: Body, x: SSAValue, size: SSAValue, tap: SSAValue, mode: str, padding: str,
                align: bool) -> list[SSAValue]:  # fmt: skip
    """(index, weight) of tap `tap` of one axis of `size` elements sampled at
    position x (in elements; the reference's `sample_taps`)."""
    t = x.type
    one, half, zero = b.const(1.0, t), b.const(0.5, t), b.const(0.0, t)
    last = b.sub(size, one)
    lo, hi = (zero, last) if align else (b.neg(half), b.sub(size, half))
    if mode == "nearest":
        x = b.math(xmath.RoundEvenOp, x)
    if padding == "border":
        outside = b.or_(b.cmpf("olt", x, lo), b.cmpf("ogt", x, hi))
        x = b.select(outside, _clamp(b, x, zero, last), x)
    elif padding == "reflection":
        x = _reflect(b, x, lo, hi)
    base = b.math(xmath.FloorOp, x)
    fraction = b.sub(x, base)
    first = -1.0 if mode == "cubic" else 0.0
    i = b.add(base, tap) if first == 0 else b.add(base, b.add(tap, b.const(first, t)))
    if mode == "nearest":
        w = one
    elif mode == "linear":
        w = b.sub(one, b.abs(b.sub(fraction, tap)))
    else:
        w = _cubic_weight(b, b.sub(fraction, b.sub(tap, one)))
    if padding == "zeros":
        inside = b.and_(b.cmpf("oge", i, zero), b.cmpf("ole", i, last))
        w = b.select(inside, w, zero)
    elif padding == "reflection":
        i = b.math(xmath.TruncOp, _reflect(b, i, lo, hi))
    index = b.emit(arith.FPToSIOp(_clamp(b, i, zero, last), i64))
    return [index, w]


def _lower_grid_sample(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x, grid = op.operand_group("X")[0], op.operand_group("grid")[0]
    n, c, *sizes = (int(d) for d in _shape(x))
    out = [int(d) for d in _shape(grid)[1:-1]]
    k, taps, t = len(sizes), GRID_TAPS[op.attr("mode")], _elem(grid)
    # Taps, by grid component (component j addresses axis k - 1 - j).
    tap_shape = [k, n, *out, taps]
    loops = len(tap_shape)
    component_sizes = e.constant(np.array(sizes[::-1], dtype=numpy_dtype(t)))
    indices, weights = e.generic(
        [grid, component_sizes], [e.empty(tap_shape, i64), e.empty(tap_shape, t)],
        [_dims_map(loops, [*range(1, loops - 1), 0]), _dims_map(loops, [0]),
         _dims_map(loops, range(loops)), _dims_map(loops, range(loops))],
        [PARALLEL] * loops, lambda b, a: _tap(op, b, a[0], a[1]),
    )  # fmt: skip
    # Every combination of taps: space [N, C, *out, tap of each axis].
    space = 2 + 2 * k

    def tap_of(axis: int) -> list[AffineExpr | int]:
        return [k - 1 - axis, _dim(0), *(_dim(2 + j) for j in range(k)), _dim(2 + k + axis)]

    data_map = AffineMap(space, k, (_dim(0), _dim(1), *(AffineExpr.symbol(a) for a in range(k))))
    picked = e.value(ember_linalg.GatherOp.on_tensors(
        x, indices, symbolic_type(_elem(x), [n, c, *out, *[taps] * k]),
        ([_map(space, tap_of(a)) for a in range(k)], data_map)))  # fmt: skip

    def weighted(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        term = a[0]
        for w in a[1:-1]:
            term = b.mul(term, w)
        return [b.add(a[-1], term)]

    return e.generic(
        [picked, *[weights] * k], [e.fill(0.0, [n, c, *out], _elem(x))],
        [_dims_map(space, range(space)), *(_map(space, tap_of(a)) for a in range(k)),
         _dims_map(space, range(2 + k))],
        [PARALLEL] * (2 + k) + [REDUCTION] * k, weighted,
    )  # fmt: skip


# -------------------------------------------------------------- RoiAlign


def _roi_tap(op: GraphOp, b: Body, a: list[SSAValue]) -> list[SSAValue]:
    """(index, weight) of tap `linalg.index(4)` of sample `linalg.index(3)` of
    bin `linalg.index(2)` along one axis of a roi from `start` to `end` (the
    reference's `roi_axis_taps`)."""
    start, end, size, bins = a[:4]
    t = start.type
    half_pixel = op.attr("coordinate_transformation_mode") == "half_pixel"
    scale, offset = b.const(op.attr("spatial_scale"), t), b.const(0.5 if half_pixel else 0.0, t)
    first = b.sub(b.mul(start, scale), offset)
    extent = b.sub(b.sub(b.mul(end, scale), offset), first)
    one, zero = b.const(1.0, t), b.const(0.0, t)
    if not half_pixel:
        extent = b.max(extent, one)
    step = b.div(extent, bins)
    sample = b.add(_position(b, 3, t), b.const(0.5, t))
    grid = b.const(op.attr("sampling_ratio"), t)
    position = b.add(b.add(first, b.mul(_position(b, 2, t), step)),
                     b.div(b.mul(sample, step), grid))  # fmt: skip
    inside = b.and_(b.cmpf("oge", position, b.neg(one)), b.cmpf("ole", position, size))
    last = b.sub(size, one)
    clamped = _clamp(b, position, zero, last)
    low = b.math(xmath.FloorOp, clamped)
    tap = _position(b, 4, t)
    index = b.emit(arith.FPToSIOp(b.min_skipping_nan(b.add(low, tap), last), i64))
    weight = b.sub(one, b.abs(b.sub(b.sub(clamped, low), tap)))
    return [index, b.select(inside, weight, zero)]


def _lower_roi_align(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x, rois, batch = (op.operand_group(n)[0] for n in ("X", "rois", "batch_indices"))
    _, c, height, width = (int(d) for d in _shape(x))
    count, t = int(_shape(rois)[0]), _elem(x)
    bins = [op.attr("output_height"), op.attr("output_width")]
    samples = op.attr("sampling_ratio")
    # Taps along y (component 0) and x (1): [2, R, max(bins), samples, 2].
    tap_shape = [2, count, max(bins), samples, 2]
    loops = len(tap_shape)
    dtype = numpy_dtype(t)

    def column(first: int) -> AffineMap:  # y reads columns 1 and 3, x 0 and 2
        return _map(loops, [_dim(1), _dim(0) * -1 + first])

    indices, weights = e.generic(
        [rois, rois, e.constant(np.array([height, width], dtype)), e.constant(np.array(bins, dtype))],
        [e.empty(tap_shape, i64), e.empty(tap_shape, t)],
        [column(1), column(3), _dims_map(loops, [0]), _dims_map(loops, [0]),
         _dims_map(loops, range(loops)), _dims_map(loops, range(loops))],
        [PARALLEL] * loops, lambda b, a: _roi_tap(op, b, a),
    )  # fmt: skip
    batch_shape = [1, *tap_shape[1:]]
    images = e.parallel([batch], batch_shape, i64, lambda b, a: b.convert(a[0], i64),
                        maps=[_dims_map(loops, [1])])  # fmt: skip
    joined = e.value(tensor.ConcatOp([images, indices], 0, TensorType(i64, [3, *tap_shape[1:]])))
    # Every sample's taps: space [R, C, H', W', sy, sx, ty, tx].
    space = 8
    y_taps = [_dim(0), _dim(2), _dim(4), _dim(6)]
    x_taps = [_dim(0), _dim(3), _dim(5), _dim(7)]
    data_map = AffineMap(space, 3, (AffineExpr.symbol(0), _dim(1), AffineExpr.symbol(1),
                                    AffineExpr.symbol(2)))  # fmt: skip
    index_maps = [_map(space, [0, _dim(0), 0, 0, 0]), _map(space, [1, *y_taps]),
                  _map(space, [2, *x_taps])]  # fmt: skip
    picked = e.value(ember_linalg.GatherOp.on_tensors(
        x, joined, symbolic_type(t, [count, c, *bins, samples, samples, 2, 2]),
        (index_maps, data_map)))  # fmt: skip
    average = op.attr("mode") == "avg"
    out = [count, c, *bins]

    def pool(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        term = b.mul(b.mul(a[1], a[2]), a[0])
        return [b.add(a[3], term) if average else b.max(a[3], term)]

    y_weights, x_weights = (e.extract(weights, [axis, 0, 0, 0, 0], [1, count, n, samples, 2])
                            for axis, n in enumerate(bins))  # fmt: skip
    pooled = e.generic(
        [picked, y_weights, x_weights], [e.fill(0.0 if average else float("-inf"), out, t)],
        [_dims_map(space, range(space)), _map(space, [0, *y_taps]), _map(space, [0, *x_taps]),
         _dims_map(space, range(4))],
        [PARALLEL] * 4 + [REDUCTION] * 4, pool,
    )[0]  # fmt: skip
    if not average:
        return [pooled]
    return [e.parallel([pooled], out, t,
                       lambda b, a: b.div(a[0], b.const(samples * samples, t)))]  # fmt: skip


def _check_roi_align(op: GraphOp) -> str | None:
    if op.attr("sampling_ratio") > 0:
        return None
    return "sampling_ratio 0 (samples per bin that depend on the rois' values)"


# ------------------------------------------------------------ DeformConv


def _deform_tap(b: Body, a: list[SSAValue]) -> list[SSAValue]:
    """(index, weight) of tap `linalg.index(7)` along y (component
    `linalg.index(0)` 0) or x (1) of kernel tap (`linalg.index(3)`,
    `linalg.index(4)`) at output point (`linalg.index(5)`, `linalg.index(6)`)."""
    move, stride, pad, dilation, size = a[:5]
    t = move.type
    along_y = b.cmp("eq", b.emit(linalg.IndexOp(0)), b.emit(arith.ConstantOp.from_int_and_width(
        0, IndexType())))  # fmt: skip
    point = b.select(along_y, _position(b, 5, t), _position(b, 6, t))
    kernel_tap = b.select(along_y, _position(b, 3, t), _position(b, 4, t))
    x = b.add(b.add(b.sub(b.mul(point, stride), pad), b.mul(kernel_tap, dilation)), move)
    return _sample_tap(b, x, size, _position(b, 7, t), "linear", "zeros", True)


def _lower_deform_conv(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x, w, offset = (op.operand_group(n)[0] for n in ("X", "W", "offset"))
    n, c, height, width = (int(d) for d in _shape(x))
    out_channels, per_group, kh, kw = (int(d) for d in _shape(w))
    oh, ow = (int(d) for d in _shape(op.results[0])[2:])
    group, offset_group = op.attr("group"), op.attr("offset_group")
    strides, dilations, pads = deform_conv_geometry({a: op.attr(a) for a in
                                                     ("strides", "dilations", "pads")})  # fmt: skip
    t, dtype = _elem(x), numpy_dtype(_elem(x))
    # Taps along y (component 0) and x (1): [2, N, offset groups, kh, kw, oh, ow, 2].
    tap_shape = [2, n, offset_group, kh, kw, oh, ow, 2]
    loops = len(tap_shape)
    move = _map(loops, [_dim(1), _dim(2) * (kh * kw * 2) + _dim(3) * (kw * 2) + _dim(4) * 2
                        + _dim(0), _dim(5), _dim(6)])  # fmt: skip
    tables = [e.constant(np.array(v, dtype)) for v in
              (strides, pads[:2], dilations, [height, width])]  # fmt: skip
    indices, weights = e.generic(
        [offset, *tables], [e.empty(tap_shape, i64), e.empty(tap_shape, t)],
        [move, *[_dims_map(loops, [0])] * 4, _dims_map(loops, range(loops)),
         _dims_map(loops, range(loops))],
        [PARALLEL] * loops, _deform_tap,
    )  # fmt: skip
    # Sample: space [N, offset groups, channels per offset group, kh, kw, oh, ow, ty, tx].
    space, per_offset_group = 9, c // offset_group
    images = e.reshape(x, [n, offset_group, per_offset_group, height, width])
    taps = [_dim(0), _dim(1), _dim(3), _dim(4), _dim(5), _dim(6)]
    y_taps, x_taps = [0, *taps, _dim(7)], [1, *taps, _dim(8)]
    data_map = AffineMap(space, 2, (_dim(0), _dim(1), _dim(2), AffineExpr.symbol(0),
                                    AffineExpr.symbol(1)))  # fmt: skip
    sampled_shape = [n, offset_group, per_offset_group, kh, kw, oh, ow]
    picked = e.value(ember_linalg.GatherOp.on_tensors(
        images, indices, symbolic_type(t, [*sampled_shape, 2, 2]),
        ([_map(space, y_taps), _map(space, x_taps)], data_map)))  # fmt: skip
    inputs = [picked, weights, weights]
    maps = [_dims_map(space, range(space)), _map(space, y_taps), _map(space, x_taps)]
    masks = op.operand_group("mask")
    if masks:
        inputs.append(e.reshape(masks[0], [n, offset_group, kh, kw, oh, ow]))
        maps.append(_dims_map(space, [0, 1, 3, 4, 5, 6]))

    def interpolate(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        term = b.mul(b.mul(a[1], a[2]), a[0])
        if masks:
            term = b.mul(term, a[3])
        return [b.add(a[-1], term)]

    sampled = e.generic(inputs, [e.fill(0.0, sampled_shape, t)],
                        [*maps, _dims_map(space, range(7))],
                        [PARALLEL] * 7 + [REDUCTION] * 2, interpolate)[0]  # fmt: skip
    # The convolution: [N, group, out per group, oh, ow] by channels per group and kernel taps.
    columns = e.reshape(sampled, [n, group, per_group, kh, kw, oh, ow])
    kernel = e.reshape(w, [group, out_channels // group, per_group, kh, kw])
    conv_loops = 8  # n, g, o, oh, ow, then c, i, j (reduced)
    out = [n, group, out_channels // group, oh, ow]
    conv = e.generic(
        [columns, kernel], [e.fill(0.0, out, t)],
        [_dims_map(conv_loops, [0, 1, 5, 6, 7, 3, 4]), _dims_map(conv_loops, [1, 2, 5, 6, 7]),
         _dims_map(conv_loops, range(5))],
        [PARALLEL] * 5 + [REDUCTION] * 3, lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))],
    )[0]  # fmt: skip
    y = e.reshape(conv, [n, out_channels, oh, ow])
    biases = op.operand_group("B")
    if not biases:
        return [y]
    return [e.parallel([y, biases[0]], [n, out_channels, oh, ow], t,
                       lambda b, a: b.add(a[0], a[1]),
                       maps=[_dims_map(4, range(4)), _dims_map(4, [1])])]  # fmt: skip


# ------------------------------------------------------------ AffineGrid


def _lower_affine_grid(e: Emitter, op: GraphOp) -> list[SSAValue]:
    theta = op.operand_group("theta")[0]
    sizes = _int_constant(op.operand_group("size")[0])[2:]
    k, t = len(sizes), _elem(theta)
    base = e.constant(affine_base_grid(sizes, bool(op.attr("align_corners")))
                      .astype(numpy_dtype(t)))  # fmt: skip
    out = [int(d) for d in _shape(op.results[0])]
    loops = len(out) + 1  # n, *sizes, i, then j (reduced)
    i, j = k + 1, k + 2
    return e.generic(
        [base, theta], [e.fill(0.0, out, t)],
        [_dims_map(loops, [*range(1, k + 1), j]), _dims_map(loops, [0, i, j]),
         _dims_map(loops, range(len(out)))],
        [PARALLEL] * len(out) + [REDUCTION], lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))],
    )  # fmt: skip


def _check_affine_grid(op: GraphOp) -> str | None:
    return None if _constant_operands(op, "size") else NeedsConstants("size must be a constant")


# ---------------------------------------------------------------- Col2Im


def _lower_col2im(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operand_group("input")[0]
    image = _int_constant(op.operand_group("image_shape")[0])
    block = _int_constant(op.operand_group("block_shape")[0])
    n, rows, count = (int(d) for d in _shape(x))
    blocks = math.prod(block)
    c, positions, t = rows // blocks, math.prod(image), _elem(x)
    attrs = {a: op.attr(a) for a in ("strides", "dilations", "pads")}
    index, covered = col2im_table(attrs, image, block)
    cols = e.reshape(x, [n, c, blocks, count])
    data_map = AffineMap(4, 1, (_dim(0), _dim(1), _dim(3), AffineExpr.symbol(0)))
    picked = e.value(ember_linalg.GatherOp.on_tensors(
        cols, e.constant(index), symbolic_type(t, [n, c, positions, blocks]),
        ([_dims_map(4, [2, 3])], data_map)))  # fmt: skip
    summed = e.generic(
        [picked, e.constant(covered.astype(numpy_dtype(t)))], [e.fill(0.0, [n, c, positions], t)],
        [_dims_map(4, range(4)), _dims_map(4, [2, 3]), _dims_map(4, range(3))],
        [PARALLEL] * 3 + [REDUCTION], lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))],
    )[0]  # fmt: skip
    return [e.reshape(summed, [n, c, *image])]


def _check_col2im(op: GraphOp) -> str | None:
    if _constant_operands(op, "image_shape", "block_shape"):
        return None
    return NeedsConstants("image_shape and block_shape must be constants")


def _col2im_unread(op: GraphOp) -> frozenset[str]:
    return frozenset({"image_shape", "block_shape"})


def _affine_grid_unread(op: GraphOp) -> frozenset[str]:
    return frozenset({"size"})


class VisionPattern(FamilyPattern):
    """GridSample, AffineGrid, Col2Im, RoiAlign and DeformConv."""

    lowerings = {GridSampleOp: _lower_grid_sample, AffineGridOp: _lower_affine_grid,
                 Col2ImOp: _lower_col2im, RoiAlignOp: _lower_roi_align,
                 DeformConvOp: _lower_deform_conv}  # fmt: skip
    checks = {AffineGridOp: _check_affine_grid, Col2ImOp: _check_col2im,
              RoiAlignOp: _check_roi_align}  # fmt: skip
    unread = {AffineGridOp: _affine_grid_unread, Col2ImOp: _col2im_unread}
