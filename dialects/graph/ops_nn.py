"""Neural-network `graph` ops: convolution, pooling, normalisation, GEMM."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import TensorType, f32, i64
from xdsl.ir import Attribute

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.ops_elementwise import float_only
from ember.dialects.graph.shapes import (
    ShapeContext,
    ShapeError,
    UnknownValueError,
    broadcast_shapes,
    dims_compatible,
    require_at_least,
    result,
    same_element_type,
)
from ember.dialects.graph.spec import (
    OpSpec,
    float_attr,
    int_attr,
    ints_attr,
    many,
    one,
    opt,
    string_attr,
)
from ember.dialects.graph.symbolic import Dim
from ember.dialects.graph.types import DYNAMIC, Shape, format_shape

# ------------------------------------------------------------ windowed ops


def window_output_extent(
    extent: Dim, kernel: int, stride: int, dilation: int, pads: tuple[int, int],
    auto_pad: str, ceil_mode: bool,
) -> Dim:  # fmt: skip
    """Output length of one spatial axis of a convolution or pooling window."""
    if extent == DYNAMIC:
        return DYNAMIC
    effective = dilation * (kernel - 1) + 1
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return -(-extent // stride)
    if auto_pad == "VALID":
        pads = (0, 0)
    span = extent + pads[0] + pads[1] - effective
    require_at_least(
        span,
        0,
        f"window of extent {effective} does not fit input extent {extent} with padding {pads}",
    )
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    # The last window must start inside the input or its left padding.
    if (out - 1) * stride >= extent + pads[0]:
        out -= 1
    return out


def _window_attrs(ctx: ShapeContext, spatial: int, kernel: list[int]) -> tuple[list[int], ...]:
    strides = ctx.attr("strides") or [1] * spatial
    dilations = ctx.attr("dilations") if "dilations" in ctx.spec_attr_names() else None
    dilations = dilations or [1] * spatial
    pads = ctx.attr("pads") or [0] * (2 * spatial)
    for what, values, count in (
        ("strides", strides, spatial), ("dilations", dilations, spatial),
        ("pads", pads, 2 * spatial), ("kernel_shape", kernel, spatial),
    ):  # fmt: skip
        if len(values) != count:
            raise ShapeError(f"{what} has {len(values)} values, expected {count}")
        if what != "pads" and any(v < 1 for v in values):
            raise ShapeError(f"{what} must be positive, got {values}")
    if any(p < 0 for p in pads):
        raise ShapeError(f"pads must be non-negative, got {pads}")
    return strides, dilations, pads


def spatial_output(ctx: ShapeContext, input_shape: Shape, kernel: list[int]) -> list[int]:
    spatial = len(input_shape) - 2
    strides, dilations, pads = _window_attrs(ctx, spatial, kernel)
    auto_pad = ctx.attr("auto_pad")
    if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise ShapeError(f"unknown auto_pad '{auto_pad}'")
    ceil_mode = bool(ctx.attr("ceil_mode")) if "ceil_mode" in ctx.spec_attr_names() else False
    return [
        window_output_extent(
            input_shape[2 + i], kernel[i], strides[i], dilations[i],
            (pads[i], pads[i + spatial]), auto_pad, ceil_mode,
        )
        for i in range(spatial)
    ]  # fmt: skip


def _conv_operands(ctx: ShapeContext) -> tuple[Shape, Shape, Attribute, int]:
    """(X's shape, W's shape, the element type, group) of Conv and
    ConvTranspose, after the checks they share."""
    x, w = ctx.shape("X"), ctx.shape("W")
    element_type = same_element_type(ctx, [ctx.type("X"), ctx.type("W"), *ctx.types("B")])
    if len(x) < 3 or len(w) != len(x):
        raise ShapeError(
            f"X ({format_shape(x)}) and W ({format_shape(w)}) must have the same rank >= 3"
        )
    group = ctx.attr("group")
    if group < 1:
        raise ShapeError(f"group must be positive, got {group}")
    return x, w, element_type, group


def _check_bias(ctx: ShapeContext, channels: Dim) -> None:
    bias = ctx.optional_type("B")
    if bias is not None and (
        len(symbolic_shape(bias)) != 1 or not dims_compatible(symbolic_shape(bias)[0], channels)
    ):
        raise ShapeError(
            f"bias must have shape {channels}, got {format_shape(symbolic_shape(bias))}"
        )


def conv(ctx: ShapeContext) -> list[TensorType]:
    x, w, element_type, group = _conv_operands(ctx)
    if not dims_compatible(x[1], w[1] * group if w[1] != DYNAMIC else DYNAMIC):
        raise ShapeError(
            f"input channels ({x[1]}) must equal weight channels ({w[1]}) x group ({group})"
        )
    if w[0] != DYNAMIC and w[0] % group:
        raise ShapeError(f"output channels ({w[0]}) must be divisible by group ({group})")
    kernel = ctx.attr("kernel_shape") or list(w[2:])
    if list(kernel) != list(w[2:]) and DYNAMIC not in w[2:]:
        raise ShapeError(f"kernel_shape {kernel} does not match the weight's {list(w[2:])}")
    _check_bias(ctx, w[0])
    return result(element_type, [x[0], w[0], *spatial_output(ctx, x, list(kernel))])


def transposed_pads(
    spatial: Sequence[int], kernel: Sequence[int], attr: Callable[[str], Any]
) -> tuple[list[int], list[int], list[int], list[tuple[int, int]]]:
    """ConvTranspose's strides, dilations, output padding and (begin, end)
    pads, as ONNX defines them: from `output_shape` or `auto_pad` SAME_* the
    total padding s*(n-1) + output_padding + (k-1)*d + 1 - out is split
    (SAME_UPPER puts the smaller half first), else `pads` (VALID: none)."""
    rank = len(spatial)
    strides = list(attr("strides") or [1] * rank)
    dilations = list(attr("dilations") or [1] * rank)
    extra = list(attr("output_padding") or [0] * rank)
    wanted = attr("output_shape")
    auto_pad = attr("auto_pad")
    if wanted or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        targets = list(wanted)[-rank:] if wanted else [n * st for n, st in zip(spatial, strides)]
        pads = []
        for n, k, st, d, o, out in zip(spatial, kernel, strides, dilations, extra, targets):
            total = st * (n - 1) + o + (k - 1) * d + 1 - out
            half = total // 2
            pads.append((half, total - half) if auto_pad == "SAME_UPPER" else (total - half, half))
    elif auto_pad == "VALID":
        pads = [(0, 0)] * rank
    else:
        flat = list(attr("pads") or [0] * (2 * rank))
        pads = list(zip(flat[:rank], flat[rank:]))
    return strides, dilations, extra, pads


def conv_transpose(ctx: ShapeContext) -> list[TensorType]:
    x, w, element_type, group = _conv_operands(ctx)
    if not dims_compatible(x[1], w[0]):
        raise ShapeError(f"input channels ({x[1]}) must equal the weight's first dim ({w[0]})")
    if w[0] != DYNAMIC and w[0] % group:
        raise ShapeError(f"input channels ({w[0]}) must be divisible by group ({group})")
    filters = w[1] * group if w[1] != DYNAMIC else DYNAMIC
    _check_bias(ctx, filters)
    kernel = list(ctx.attr("kernel_shape") or w[2:])
    if DYNAMIC in (*x[2:], *kernel):
        return result(element_type, [x[0], filters, *[DYNAMIC] * (len(x) - 2)])
    strides, dilations, extra, pads = transposed_pads(x[2:], kernel, ctx.attr)
    if any(o >= max(st, d) for o, st, d in zip(extra, strides, dilations)):
        raise ShapeError(f"output_padding {extra} must be smaller than the stride or dilation")
    spatial = [st * (n - 1) + o + (k - 1) * d + 1 - lo - hi for n, k, st, d, o, (lo, hi)
               in zip(x[2:], kernel, strides, dilations, extra, pads)]  # fmt: skip
    if any(n < 1 for n in spatial):
        raise ShapeError(f"the padding leaves no output ({spatial})")
    return result(element_type, [x[0], filters, *spatial])


def pool(ctx: ShapeContext) -> list[TensorType]:
    x = ctx.shape("X")
    if len(x) < 3:
        raise ShapeError(f"X must have rank >= 3, got {format_shape(x)}")
    kernel = ctx.attr("kernel_shape")
    spatial = spatial_output(ctx, x, kernel)
    pads = ctx.attr("pads") or []
    if any(p >= k for p, k in zip(pads, [*kernel, *kernel])):
        # A window lying wholly in the padding has no element to pool: ONNX
        # Runtime refuses such pads, and so does Ember.
        raise ShapeError(f"pads {list(pads)} must be smaller than kernel_shape {list(kernel)}")
    return result(ctx.element_type("X"), [x[0], x[1], *spatial])


def max_pool(ctx: ShapeContext) -> list[TensorType]:
    """Y, and when asked for the optional Indices, i64 of Y's shape."""
    (y,) = pool(ctx)
    if ctx.attr("storage_order") not in (0, 1):
        raise ShapeError(f"storage_order must be 0 or 1, got {ctx.attr('storage_order')}")
    return [y, *result(i64, symbolic_shape(y))] if ctx.num_results > 1 else [y]


def unpooled_shape(
    shape: Sequence[Dim], kernel: Sequence[int], strides: Sequence[int] | None,
    pads: Sequence[int] | None,
) -> list[Dim]:  # fmt: skip
    """MaxUnpool's default output shape: each spatial dim (in - 1) * stride +
    kernel - pads; MaxPool's indices address a tensor of this shape."""
    spatial = len(shape) - 2
    strides = strides or [1] * spatial
    pads = pads or [0] * (2 * spatial)
    out = [DYNAMIC if d == DYNAMIC else (d - 1) * s + k - pads[i] - pads[i + spatial]
           for i, (d, s, k) in enumerate(zip(shape[2:], strides, kernel))]  # fmt: skip
    return [shape[0], shape[1], *out]


def max_unpool(ctx: ShapeContext) -> list[TensorType]:
    """output_shape's value (at least the default shape), else the default
    shape (`unpooled_shape`)."""
    x = ctx.shape("X")
    if len(x) < 3:
        raise ShapeError(f"X must have rank >= 3, got {format_shape(x)}")
    indices = ctx.shape("I")
    if (
        ctx.element_type("I") != i64
        or len(indices) != len(x)
        or not all(dims_compatible(a, b) for a, b in zip(indices, x))
    ):
        raise ShapeError(f"I must be i64 indices of X's shape, got {ctx.type('I')}")
    default = unpooled_shape(x, ctx.attr("kernel_shape"), ctx.attr("strides"), ctx.attr("pads"))
    if not ctx.has("output_shape"):
        return result(ctx.element_type("X"), default)
    shape = ctx.int_values("output_shape")
    if shape is None:
        raise UnknownValueError("output_shape must be known at compile time")
    if len(shape) != len(x) or any(
        isinstance(s, int) and isinstance(d, int) and s < d for s, d in zip(shape, default)
    ):
        raise ShapeError(f"output_shape {shape} must have rank {len(x)} and hold {default}")
    return result(ctx.element_type("X"), shape)


def global_pool(ctx: ShapeContext) -> list[TensorType]:
    x = ctx.shape("X")
    if len(x) < 3:
        raise ShapeError(f"X must have rank >= 3, got {format_shape(x)}")
    return result(ctx.element_type("X"), [x[0], x[1]] + [1] * (len(x) - 2))


# ----------------------------------------------------------- normalisation


def _per_channel(ctx: ShapeContext, names: tuple[str, ...]) -> list[TensorType]:
    x = ctx.shape(ctx.spec.operands[0].name)
    if len(x) < 2:
        raise ShapeError(f"X must have rank >= 2, got {format_shape(x)}")
    for name in names:
        shape = ctx.shape(name)
        if len(shape) != 1 or not dims_compatible(shape[0], x[1]):
            raise ShapeError(f"{name} must have shape {x[1]} (channels), got {format_shape(shape)}")
    return float_only(ctx)


def batch_norm(ctx: ShapeContext) -> list[TensorType]:
    """Y; in training mode also the running_mean and running_var, of
    input_mean's and input_var's types."""
    (y,) = _per_channel(ctx, ("scale", "B", "input_mean", "input_var"))
    if ctx.num_results == 1:
        return [y]
    if not ctx.attr("training_mode"):
        raise ShapeError("running_mean and running_var are outputs of training mode "
                         "(training_mode=1) only")  # fmt: skip
    return [y, ctx.type("input_mean"), ctx.type("input_var")][: ctx.num_results]


def instance_norm(ctx: ShapeContext) -> list[TensorType]:
    return _per_channel(ctx, ("scale", "B"))


def group_norm(ctx: ShapeContext) -> list[TensorType]:
    """scale and bias per channel (opset 21); the channels split into num_groups."""
    channels, groups = ctx.shape("X")[1] if ctx.rank("X") >= 2 else DYNAMIC, ctx.attr("num_groups")
    if groups < 1 or (channels != DYNAMIC and channels % groups):
        raise ShapeError(f"num_groups ({groups}) must divide the channels ({channels})")
    return _per_channel(ctx, ("scale", "bias"))


def mean_variance_norm(ctx: ShapeContext) -> list[TensorType]:
    rank = ctx.rank("X")
    axes = [ctx.normalize_axis(a, rank, "axes") for a in ctx.attr("axes")]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"axes {list(ctx.attr('axes'))} repeat an axis")
    return float_only(ctx)


def determinant(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("X")
    if len(shape) < 2 or not dims_compatible(shape[-1], shape[-2]):
        raise ShapeError(f"X must be square matrices (..., M, M), got {format_shape(shape)}")
    float_only(ctx)
    return result(ctx.element_type("X"), shape[:-2])


def layer_norm(ctx: ShapeContext) -> list[TensorType]:
    """LayerNormalization and RMSNormalization: X normalised over dims [axis,
    rank), its parameters (the operands after X) broadcast to those dims."""
    x = ctx.shape("X")
    axis = ctx.normalize_axis(ctx.attr("axis"), len(x))
    normalized = x[axis:]
    for name in (operand.name for operand in ctx.spec.operands[1:]):
        if not ctx.has(name):
            continue
        try:
            broadcast = broadcast_shapes([normalized, ctx.shape(name)])
        except ShapeError:
            broadcast = None
        if broadcast is None or len(broadcast) != len(normalized):
            raise ShapeError(
                f"{name} ({format_shape(ctx.shape(name))}) must broadcast to the normalized "
                f"dims {format_shape(normalized)}"
            )
    return float_only(ctx)


def layer_norm_with_statistics(ctx: ShapeContext) -> list[TensorType]:
    """Y, and the Mean and InvStdDev of each normalised slice: X's shape with
    dims [axis, rank) of size 1, in f32 when stash_type is 1."""
    (y,) = layer_norm(ctx)
    x = ctx.shape("X")
    axis = ctx.normalize_axis(ctx.attr("axis"), len(x))
    statistics = [*x[:axis], *[1] * (len(x) - axis)]
    stash = f32 if ctx.attr("stash_type") == 1 else ctx.element_type("X")
    return [y, *result(stash, statistics), *result(stash, statistics)]


def lrn(ctx: ShapeContext) -> list[TensorType]:
    if ctx.attr("size") < 1:
        raise ShapeError(f"size must be positive, got {ctx.attr('size')}")
    if len(ctx.shape("X")) < 3:
        raise ShapeError("X must have rank >= 3")
    return float_only(ctx)


# ------------------------------------------------------------ linear algebra


def gemm(ctx: ShapeContext) -> list[TensorType]:
    a, b = ctx.shape("A"), ctx.shape("B")
    element_type = same_element_type(ctx, [ctx.type("A"), ctx.type("B"), *ctx.types("C")])
    if len(a) != 2 or len(b) != 2:
        raise ShapeError(f"A and B must be matrices, got {format_shape(a)} and {format_shape(b)}")
    m, k = (a[1], a[0]) if ctx.attr("transA") else (a[0], a[1])
    k2, n = (b[1], b[0]) if ctx.attr("transB") else (b[0], b[1])
    if not dims_compatible(k, k2):
        raise ShapeError(f"inner dimensions differ: {k} (A) vs {k2} (B)")
    c = ctx.optional_type("C")
    if c is not None:
        try:
            broadcast = broadcast_shapes([symbolic_shape(c), (m, n)])
        except ShapeError:
            broadcast = None
        if broadcast is None or any(not dims_compatible(x, y) for x, y in zip(broadcast, (m, n))):
            raise ShapeError(f"C ({format_shape(symbolic_shape(c))}) must broadcast to {m}x{n}")
    return result(element_type, (m, n))


def matmul(ctx: ShapeContext) -> list[TensorType]:
    a, b = ctx.shape("A"), ctx.shape("B")
    element_type = same_element_type(ctx, [ctx.type("A"), ctx.type("B")])
    if not a or not b:
        raise ShapeError("operands must have rank >= 1")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if not dims_compatible(a2[-1], b2[-2]):
        raise ShapeError(f"inner dimensions differ: {format_shape(a)} @ {format_shape(b)}")
    batch = broadcast_shapes([a2[:-2], b2[:-2]], "batch dimensions")
    shape = [*batch, a2[-2], b2[-1]]
    if len(a) == 1:
        shape.pop(-2)
    if len(b) == 1:
        shape.pop(-1)
    return result(element_type, shape)


def softmax(ctx: ShapeContext) -> list[TensorType]:
    ctx.normalize_axis(ctx.attr("axis"), len(ctx.shape("input")))
    return float_only(ctx)


def einsum_terms(equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """Each operand's subscripts and the result's, one letter per dim, with
    `...` spelled out as capital letters the equation does not use. Without `->`, the result is the ellipsis dims, then the letters that
    appear once, in alphabetical order (NumPy's rule)."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        raise ShapeError(f"equation {equation!r} has {len(terms)} operand(s), the op has "
                         f"{len(ranks)}")  # fmt: skip
    used = set(equation) - set(".,->")
    fresh = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used)
    if any(not c.isalpha() for c in used):
        raise ShapeError(f"equation {equation!r} has subscripts other than letters")
    widest = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t),
                 default=0)  # fmt: skip
    ellipsis = "".join(next(fresh) for _ in range(widest))
    spelled = []
    for term, rank in zip(terms, ranks):
        count = rank - len(term.replace("...", ""))
        if count < 0 or ("..." not in term and count):
            raise ShapeError(f"subscripts {term!r} do not fit an operand of rank {rank}")
        spelled.append(term.replace("...", ellipsis[widest - count :]))
    if not arrow:
        letters = "".join(spelled)
        output = "..." + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                        and c not in ellipsis))  # fmt: skip
    return spelled, output.replace("...", ellipsis)


def einsum(ctx: ShapeContext) -> list[TensorType]:
    types = ctx.types("Inputs")
    shapes = [symbolic_shape(t) for t in types]
    element_type = same_element_type(ctx, list(types))
    terms, output = einsum_terms(ctx.attr("equation"), [len(s) for s in shapes])
    sizes: dict[str, Dim] = {}
    for term, shape in zip(terms, shapes):
        for letter, size in zip(term, shape):
            known = sizes.get(letter, 1)
            if size != 1 and known != 1 and size != known:
                raise ShapeError(f"subscript {letter!r} has sizes {known} and {size}")
            sizes[letter] = size if known == 1 else known
    if any(c not in sizes for c in output) or len(set(output)) != len(output):
        raise ShapeError(f"result subscripts {output!r} must be distinct operand subscripts")
    return result(element_type, [sizes[c] for c in output])


def lp_normalization(ctx: ShapeContext) -> list[TensorType]:
    if ctx.attr("p") not in (1, 2):
        raise ShapeError(f"p must be 1 or 2, got {ctx.attr('p')}")
    return softmax(ctx)


def flatten(ctx: ShapeContext) -> list[TensorType]:
    x = ctx.shape("input")
    axis = ctx.attr("axis")
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis <= len(x):
        raise ShapeError(f"axis {ctx.attr('axis')} is out of range for rank {len(x)}")

    def product(dims: Shape) -> int:
        return DYNAMIC if DYNAMIC in dims else math.prod(dims)

    return result(ctx.element_type("input"), (product(x[:axis]), product(x[axis:])))


_WINDOW_ATTRS = (string_attr("auto_pad", "NOTSET"), ints_attr("pads"), ints_attr("strides"))

SPECS = [
    OpSpec("Conv", [one("X"), one("W"), opt("B")], [one("Y")], conv,
           attributes=(*_WINDOW_ATTRS, ints_attr("dilations"), int_attr("group", 1),
                       ints_attr("kernel_shape")),
           summary="N-d convolution (NCHW), with groups, strides, dilations and padding."),
    OpSpec("ConvTranspose", [one("X"), one("W"), opt("B")], [one("Y")], conv_transpose,
           attributes=(*_WINDOW_ATTRS, ints_attr("dilations"), int_attr("group", 1),
                       ints_attr("kernel_shape"), ints_attr("output_padding"),
                       ints_attr("output_shape")),
           summary="N-d transposed convolution (NCHW), the gradient of Conv with respect to X."),
    OpSpec("MaxPool", [one("X")], [one("Y"), opt("Indices")], max_pool,
           attributes=(*_WINDOW_ATTRS, ints_attr("dilations"), int_attr("ceil_mode", 0),
                       ints_attr("kernel_shape", required=True), int_attr("storage_order", 0)),
           summary="Max pooling over windows; Indices: where each maximum lies in X, "
                   "flattened (storage_order 1: spatial dims column-major)."),
    OpSpec("AveragePool", [one("X")], [one("Y")], pool,
           attributes=(*_WINDOW_ATTRS, ints_attr("dilations"), int_attr("ceil_mode", 0),
                       int_attr("count_include_pad", 0),
                       ints_attr("kernel_shape", required=True)),
           summary="Average pooling over windows."),
    OpSpec("LpPool", [one("X")], [one("Y")], pool,
           attributes=(*_WINDOW_ATTRS, ints_attr("dilations"), int_attr("ceil_mode", 0),
                       ints_attr("kernel_shape", required=True), int_attr("p", 2)),
           summary="The p-norm of each window, (sum of abs(x)^p)^(1/p); padding counts 0."),
    OpSpec("MaxUnpool", [one("X"), one("I"), opt("output_shape")], [one("output")], max_unpool,
           attributes=(ints_attr("kernel_shape", required=True), ints_attr("pads"),
                       ints_attr("strides")),
           summary="Zeros with each value of X put at its (flat) index in I: MaxPool undone."),
    OpSpec("GlobalAveragePool", [one("X")], [one("Y")], global_pool,
           summary="Mean over all spatial dims, kept as size 1."),
    OpSpec("GlobalMaxPool", [one("X")], [one("Y")], global_pool,
           summary="Max over all spatial dims, kept as size 1."),
    OpSpec("BatchNormalization",
           [one("X"), one("scale"), one("B"), one("input_mean"), one("input_var")],
           [one("Y"), opt("running_mean"), opt("running_var")], batch_norm,
           attributes=(float_attr("epsilon", 1e-5), float_attr("momentum", 0.9),
                       int_attr("training_mode", 0)),
           summary="Batch normalisation per channel (dim 1) with input_mean and input_var; "
                   "in training mode with the batch's statistics instead, which the running "
                   "statistics take in with weight 1 - momentum."),
    OpSpec("InstanceNormalization", [one("input"), one("scale"), one("B")], [one("output")],
           instance_norm, attributes=(float_attr("epsilon", 1e-5),),
           summary="Normalises each (N, C) plane over its spatial dims."),
    OpSpec("GroupNormalization", [one("X"), one("scale"), one("bias")], [one("Y")], group_norm,
           attributes=(float_attr("epsilon", 1e-5), int_attr("num_groups", required=True),
                       int_attr("stash_type", 1)),
           summary="Normalises each group of channels of each sample; then scale and bias "
                   "per channel."),
    OpSpec("MeanVarianceNormalization", [one("X")], [one("Y")], mean_variance_norm,
           attributes=(ints_attr("axes", [0, 2, 3]),),
           summary="(X - mean) / (standard deviation + 1e-9), both over axes."),
    OpSpec("Det", [one("X")], [one("Y")], determinant,
           summary="The determinant of each square matrix of the last two dims."),
    OpSpec("LayerNormalization", [one("X"), one("Scale"), opt("B")],
           [one("Y"), one("Mean"), one("InvStdDev")], layer_norm_with_statistics,
           attributes=(int_attr("axis", -1), float_attr("epsilon", 1e-5),
                       int_attr("stash_type", 1)),
           summary="Normalises over dims [axis, rank); also gives the mean and 1 / stddev."),
    OpSpec("LRN", [one("X")], [one("Y")], lrn,
           attributes=(float_attr("alpha", 1e-4), float_attr("beta", 0.75),
                       float_attr("bias", 1.0), int_attr("size", required=True)),
           summary="Local response normalisation across channels."),
    OpSpec("Gemm", [one("A"), one("B"), opt("C")], [one("Y")], gemm,
           attributes=(float_attr("alpha", 1.0), float_attr("beta", 1.0),
                       int_attr("transA", 0), int_attr("transB", 0)),
           summary="alpha * op(A) @ op(B) + beta * C."),
    OpSpec("MatMul", [one("A"), one("B")], [one("Y")], matmul,
           summary="NumPy matmul: batched, broadcasting, 1-D operands promoted."),
    OpSpec("Einsum", [many("Inputs")], [one("Output")], einsum,
           attributes=(string_attr("equation"),),
           summary="Einstein summation: products over shared subscripts, summed over those "
                   "the result lacks."),
    OpSpec("Softmax", [one("input")], [one("output")], softmax,
           attributes=(int_attr("axis", -1),), summary="Softmax along one axis."),
    OpSpec("LogSoftmax", [one("input")], [one("output")], softmax,
           attributes=(int_attr("axis", -1),), summary="Log of softmax along one axis."),
    OpSpec("Hardmax", [one("input")], [one("output")], softmax,
           attributes=(int_attr("axis", -1),),
           summary="1 at the first largest element along the axis, 0 elsewhere."),
    OpSpec("LpNormalization", [one("input")], [one("output")], lp_normalization,
           attributes=(int_attr("axis", -1), int_attr("p", 2)),
           summary="x divided by its L1 or L2 norm along the axis."),
    OpSpec("Flatten", [one("input")], [one("output")], flatten,
           attributes=(int_attr("axis", 1),), summary="Collapses to 2-D at axis."),
]  # fmt: skip


# ----------------------------------------------------------- the op classes
# One class per row of SPECS, in table order; `graph_op` builds each from its
# row (tests/dialects/test_graph_op_classes.py holds the two together).


@graph_op(SPECS)
class ConvOp(GraphOp): ...


@graph_op(SPECS)
class ConvTransposeOp(GraphOp): ...


@graph_op(SPECS)
class MaxPoolOp(GraphOp): ...


@graph_op(SPECS)
class AveragePoolOp(GraphOp): ...


@graph_op(SPECS)
class LpPoolOp(GraphOp): ...


@graph_op(SPECS)
class MaxUnpoolOp(GraphOp): ...


@graph_op(SPECS)
class GlobalAveragePoolOp(GraphOp): ...


@graph_op(SPECS)
class GlobalMaxPoolOp(GraphOp): ...


@graph_op(SPECS)
class BatchNormalizationOp(GraphOp): ...


@graph_op(SPECS)
class InstanceNormalizationOp(GraphOp): ...


@graph_op(SPECS)
class GroupNormalizationOp(GraphOp): ...


@graph_op(SPECS)
class MeanVarianceNormalizationOp(GraphOp): ...


@graph_op(SPECS)
class DetOp(GraphOp): ...


@graph_op(SPECS)
class LayerNormalizationOp(GraphOp): ...


@graph_op(SPECS)
class LRNOp(GraphOp): ...


@graph_op(SPECS)
class GemmOp(GraphOp): ...


@graph_op(SPECS)
class MatMulOp(GraphOp): ...


@graph_op(SPECS)
class EinsumOp(GraphOp): ...


@graph_op(SPECS)
class SoftmaxOp(GraphOp): ...


@graph_op(SPECS)
class LogSoftmaxOp(GraphOp): ...


@graph_op(SPECS)
class HardmaxOp(GraphOp): ...


@graph_op(SPECS)
class LpNormalizationOp(GraphOp): ...


@graph_op(SPECS)
class FlattenOp(GraphOp): ...
