"""Graph-to-tensor lowering of Ember's layout ops (`dialects/graph/ops_layout.py`).

- `graph.layout_transform` follows `transform_plan`: `tensor.reshape` to
  split the blocked axes, a transposing copy generic into the target's order,
  `tensor.reshape` to merge them (a transform that only splits or merges is
  a reshape alone).
- Laid-out convolutions are `tensor.pad` of the spatial dims + `linalg.fill`
  0 + one `linalg.generic` whose maps index the layouts directly (+ a bias
  generic). The output's innermost dim (the k output channels of a block, or
  all F channels in NHWC) is its last iteration dim, so the default CPU loop
  order runs it innermost, over contiguous outputs and weights. NHWC runs
  the reductions inside each output pixel, so that loop spans all F
  channels; NCHWc runs the output plane inside the reductions, so the k
  weights of one (input channel, tap) stay in registers across the plane
  (`CONV_INDEXING` gives the orders). A grouped NHWC convolution is
  `grouped_conv.grouped_conv`, with the group a dim of its own. NHWC is
  the fast layout today: LLVM
  vectorises its long channel loop. An 8-iteration block loop is fully
  unrolled before LLVM's loop vectoriser runs, which then vectorises the
  loop around it with stride-8 interleaved accesses, so NCHWc only pays off
  once the loop level emits vector code for the block itself.
- Laid-out pooling pads with the lowest value (max) or 0 (average) and runs
  one reduction generic over the output and window dims; averages are
  divided as for NCHW pools (`windows._divide_by_counts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from ember.dialects.graph import (
    AveragePoolNCHWcOp,
    AveragePoolNHWCOp,
    ConvNCHWcOp,
    ConvNHWCOp,
    GraphOp,
    LayoutTransformOp,
    MaxPoolNCHWcOp,
    MaxPoolNHWCOp,
)
from ember.dialects.graph.layouts import parse_layout, transform_plan
from ember.dialects.graph.ops_layout import signature
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Emitter,
    FamilyPattern,
    _dim,
    _elem,
    _map,
    _max_start,
    _shape,
    _transpose,
)
from ember.lowering.graph_to_tensor.grouped_conv import GroupedGeometry, grouped_conv, is_pointwise
from ember.lowering.graph_to_tensor.windows import (
    Pads,
    _divide_by_counts,
    _pool_padding,
    check_batch_only,
    window_params,
    window_step,
)

# -------------------------------------------------------- layout transform


def _lower_layout_transform(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    plan = transform_plan(op.attr("source"), op.attr("target"), _shape(x))
    split = e.reshape(x, plan.split)
    if plan.perm != tuple(range(len(plan.perm))):
        split = _transpose(e, split, plan.perm)
    return [e.reshape(split, plan.result)]


# ------------------------------------------------------------------ windows


def _spatial_axes(layout: str) -> list[int]:
    """Where H and W are in a 2-D layout (of an activation or a weight)."""
    return [i for i, (axis, block) in enumerate(parse_layout(layout).dims)
            if axis in "HW" and not block]  # fmt: skip


def _layouts(op: GraphOp) -> tuple[str, str]:
    """The layouts of the op's data operand and its weight (if any)."""
    (layouts, _), _ = signature(op.SPEC.onnx_type, [_shape(v) for v in op.operands])
    return layouts[0], layouts[1] if len(layouts) > 1 else ""


def _pad_axes(e: Emitter, x: SSAValue, axes: Sequence[int], pads: Pads, value: float) -> SSAValue:
    low, high = [0] * len(_shape(x)), [0] * len(_shape(x))
    for axis, (before, after) in zip(axes, pads):
        low[axis], high[axis] = before, after
    return e.pad(x, low, high, value)


@dataclass(frozen=True)
class ConvIndexing:
    """A laid-out convolution as a generic: iteration dims by name, in loop
    order (the output's innermost dim last), and per operand the names or
    expressions that index each of its dims. `d` maps the dim names and the
    strides and dilations (sh, sw, dh, dw) to affine expressions."""

    order: tuple[str, ...]
    reductions: frozenset[str]
    input: Callable[[dict[str, AffineExpr]], list[AffineExpr]]
    weight: Callable[[dict[str, AffineExpr]], list[AffineExpr]]
    output: tuple[str, ...]
    bias: tuple[str, ...]


def _windows(d: dict[str, AffineExpr]) -> list[AffineExpr]:
    """The input rows and columns a window reads (strided, dilated)."""
    return [d["oh"] * d["sh"] + d["kh"] * d["dh"], d["ow"] * d["sw"] + d["kw"] * d["dw"]]


CONV_INDEXING: dict[type[GraphOp], ConvIndexing] = {
    # out[n, fo, oh, ow, fi] += x[n, co, oh*s+kh*d, ow*s+kw*d, ci] * w[fo, co, kh, kw, ci, fi]
    ConvNCHWcOp: ConvIndexing(
        ("n", "fo", "co", "kh", "kw", "ci", "oh", "ow", "fi"), frozenset({"co", "kh", "kw", "ci"}),
        lambda d: [d["n"], d["co"], *_windows(d), d["ci"]],
        lambda d: [d["fo"], d["co"], d["kh"], d["kw"], d["ci"], d["fi"]],
        ("n", "fo", "oh", "ow", "fi"), ("fo", "fi"),
    ),
    # out[n, oh, ow, f] += x[n, oh*s+kh*d, ow*s+kw*d, c] * w[kh, kw, c, f] (one group:
    # grouped ones are `grouped_conv`)
    ConvNHWCOp: ConvIndexing(
        ("n", "oh", "ow", "kh", "kw", "c", "f"), frozenset({"kh", "kw", "c"}),
        lambda d: [d["n"], *_windows(d), d["c"]],
        lambda d: [d["kh"], d["kw"], d["c"], d["f"]],
        ("n", "oh", "ow", "f"), ("f",),
    ),
}  # fmt: skip


def _lower_conv(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x, w = op.operand_group("X")[0], op.operand_group("W")[0]
    out, t = _shape(op.results[0]), _elem(x)
    data_layout, weight_layout = _layouts(op)
    axes = _spatial_axes(data_layout)
    kernel = [_shape(w)[i] for i in _spatial_axes(weight_layout)]
    strides, dilations, pads = window_params(op.attr, [_shape(x)[a] for a in axes], kernel)
    padded = _pad_axes(e, x, axes, pads, 0)
    bias = op.operand_group("B")
    groups = op.attribute_values().get("group", 1)
    if groups > 1:  # only NHWC convolutions have groups
        return [_grouped_nhwc(e, x, w, padded, bias, groups, strides, dilations, pads, out)]
    init = e.fill(0, out, t)
    indexing = CONV_INDEXING[type(op)]
    count = len(indexing.order)
    d: dict[str, AffineExpr] = {name: _dim(i) for i, name in enumerate(indexing.order)}
    constants = {"sh": strides[0], "sw": strides[1], "dh": dilations[0], "dw": dilations[1]}
    d |= {name: AffineExpr.constant(value) for name, value in constants.items()}
    maps = [_map(count, indexing.input(d)), _map(count, indexing.weight(d)),
            _map(count, [d[name] for name in indexing.output])]  # fmt: skip
    iterators = [REDUCTION if name in indexing.reductions else PARALLEL for name in indexing.order]
    y = e.generic([padded, w], [init], maps, iterators,
                  lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))])[0]  # fmt: skip
    if bias:
        rank = len(out)
        bias_map = _map(rank, [_dim(indexing.output.index(name)) for name in indexing.bias])
        identity = _map(rank, [_dim(i) for i in range(rank)])
        y = e.parallel([y, bias[0]], out, t, lambda b, a: b.add(a[0], a[1]),
                       maps=[identity, bias_map])  # fmt: skip
    return [y]


def _grouped_nhwc(
    e: Emitter, x: SSAValue, w: SSAValue, padded: SSAValue, bias: Sequence[SSAValue],
    groups: int, strides: Sequence[int], dilations: Sequence[int], pads: Pads,
    out: Sequence[int],
) -> SSAValue:  # fmt: skip
    """A grouped NHWC convolution (`grouped_conv`) of `x`, `padded` by
    `pads`, by `w` (HWIO) plus the bias."""
    batch, *spatial, channels = _shape(x)
    *kernel, _, filters = _shape(w)
    sizes = [size + low + high for size, (low, high) in zip(spatial, pads)]
    geometry = GroupedGeometry(batch, groups, channels // groups, filters // groups, sizes,
                               kernel, out[1:-1], strides, dilations)  # fmt: skip
    if is_pointwise(kernel, strides, pads):
        geometry = geometry.flattened()
    return grouped_conv(e, "NHWC", padded, w, bias[0] if bias else None, geometry, out)


def _lower_pool(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Pads (with ceil_mode's extra high padding) and reduces each window in one
    generic over (output dims, kh, kw); averages are then divided."""
    x = op.operands[0]
    t, out = _elem(x), _shape(op.results[0])
    axes = _spatial_axes(_layouts(op)[0])
    strides, dilations, pads, full = _pool_padding(op.attr, tuple(_shape(x)[a] for a in axes))
    is_max = isinstance(op, MaxPoolNCHWcOp | MaxPoolNHWCOp)
    low = _max_start(t) if is_max else 0  # NaN padding: skipped by the max
    padded, init = _pad_axes(e, x, axes, full, low), e.fill(low, out, t)
    rank, kernel = len(out), op.attr("kernel_shape")
    count = rank + len(axes)
    reads: list[AffineExpr] = [_dim(i) for i in range(rank)]
    for window, axis in enumerate(axes):
        reads[axis] = _dim(axis) * strides[window] + _dim(rank + window) * dilations[window]
    maps = [_map(count, reads), _map(count, [_dim(rank + i) for i in range(len(axes))]),
            _map(count, [_dim(i) for i in range(rank)])]  # fmt: skip
    iterators = [PARALLEL] * rank + [REDUCTION] * len(axes)
    kind = "max" if is_max else "sum"
    window_shape = e.empty(kernel, t)
    y = e.generic([padded, window_shape], [init], maps, iterators,
                  lambda b, a: [window_step(b, a, kind)])[0]  # fmt: skip
    if not is_max:
        y = _divide_by_counts(e, y, op.attr, tuple(_shape(x)[a] for a in axes), kernel, strides,
                              dilations, pads, full, spatial_axes=axes)  # fmt: skip
    return [y]


class LayoutPattern(FamilyPattern):
    """Layout transforms and laid-out convolution and pooling."""

    lowerings = {
        LayoutTransformOp: _lower_layout_transform,
        ConvNCHWcOp: _lower_conv,
        ConvNHWCOp: _lower_conv,
        MaxPoolNCHWcOp: _lower_pool,
        MaxPoolNHWCOp: _lower_pool,
        AveragePoolNCHWcOp: _lower_pool,
        AveragePoolNHWCOp: _lower_pool,
    }
    checks = dict.fromkeys(lowerings, check_batch_only)
    symbolic = frozenset(lowerings)
