"""Data-movement and shape `graph` ops: constants, reshape, slice, gather, pad…

Operands that ONNX passes as tensors (Reshape's shape, Slice's starts…) stay
operands, as in ONNX opset 21; their shape rules use the values when they
are known at compile time and fall back to unknown dims when not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, TensorType, f32, i1, i64
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.shapes import (
    ShapeContext,
    ShapeError,
    SymShape,
    UnknownValueError,
    broadcast_shapes,
    result,
    same_element_type,
)
from ember.dialects.graph.spec import (
    AttrKind,
    AttrSpec,
    OpSpec,
    int_attr,
    ints_attr,
    many,
    one,
    opt,
    string_attr,
    tensor_attr,
)
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.graph.types import (
    DYNAMIC,
    ELIDED_ADVICE,
    ElidedConstantError,
    UnsupportedTypeError,
    array_from_dense,
    dense_from_array,
    element_type_from_numpy,
    format_shape,
)

SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")
"""ScatterElements'/ScatterND's `reduction` values (ONNX opset 18)."""


def _unknown(rank: int) -> list[int]:
    return [DYNAMIC] * rank


def _shape_operand(ctx: ShapeContext, name: str) -> list[int] | None:
    """Values of a 1-D i64 operand that holds a shape, or None if unknown."""
    shape = ctx.shape(name)
    if ctx.element_type(name) != i64 or len(shape) != 1:
        raise ShapeError(f"{name} must be a 1-D tensor of i64, got {ctx.type(name)}")
    return ctx.int_values(name)


def _rank_of_shape_operand(ctx: ShapeContext, name: str) -> int:
    length = ctx.shape(name)[0]
    if length == DYNAMIC:
        raise ShapeError(f"the length of {name} must be static")
    return length


# ---------------------------------------------------------------- constants


def constant(ctx: ShapeContext) -> list[TensorType]:
    raise AssertionError("graph.constant has its own verifier")


def constant_of_shape(ctx: ShapeContext) -> list[TensorType]:
    value = ctx.attr("value")
    element_type = f32 if value is None else element_type_from_numpy(value.dtype)
    if value is not None and value.size != 1:
        raise ShapeError(f"value must hold one element, got {value.size}")
    dims = _shape_operand(ctx, "input")
    if dims is None:
        return result(element_type, _unknown(_rank_of_shape_operand(ctx, "input")))
    if any(d < 0 for d in dims):
        raise ShapeError(f"shape must be non-negative, got {dims}")
    return result(element_type, dims)


def shape_op(ctx: ShapeContext) -> list[TensorType]:
    rank = len(ctx.shape("data"))
    start, end = ctx.attr("start"), ctx.attr("end")
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = rank if end is None else end
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return result(i64, [max(end - start, 0)])


def size_op(ctx: ShapeContext) -> list[TensorType]:
    ctx.type("data")
    return result(i64, [])


# ---------------------------------------------------------------- reshaping


def reshape(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("data")
    element_type = ctx.element_type("data")
    target = _shape_operand(ctx, "shape")
    if target is None:
        return result(element_type, _unknown(_rank_of_shape_operand(ctx, "shape")))
    allow_zero = ctx.attr("allowzero")
    dims = list(target)
    if dims.count(-1) > 1:
        raise ShapeError(f"shape {target} has more than one -1")
    for i, d in enumerate(dims):
        if d == 0 and not allow_zero:
            if i >= len(data):
                raise ShapeError(f"shape {target} copies dim {i}, but data has rank {len(data)}")
            dims[i] = data[i]
        elif d < -1:
            raise ShapeError(f"invalid dim {d} in shape {target}")
    if -1 in dims:
        known = [d for d in dims if d != -1]
        if DYNAMIC in data or DYNAMIC in known:
            dims[dims.index(-1)] = DYNAMIC
        else:
            rest = math.prod(known)
            total = math.prod(data)
            if rest == 0 or total % rest:
                raise ShapeError(
                    f"cannot reshape {format_shape(data)} into {target}: sizes do not divide"
                )
            dims[dims.index(-1)] = total // rest
    if DYNAMIC not in data and DYNAMIC not in dims and math.prod(data) != math.prod(dims):
        raise ShapeError(
            f"cannot reshape {format_shape(data)} ({math.prod(data)} elements) into "
            f"{format_shape(tuple(dims))} ({math.prod(dims)} elements)"
        )
    return result(element_type, dims)


def transpose(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("data")
    perm = ctx.attr("perm")
    perm = list(reversed(range(len(data)))) if perm is None else perm
    if sorted(perm) != list(range(len(data))):
        raise ShapeError(f"perm {perm} is not a permutation of the {len(data)} dims")
    return result(ctx.element_type("data"), [data[p] for p in perm])


def squeeze(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("data")
    if ctx.has("axes"):
        axes = ctx.int_values("axes")
        if axes is None:
            raise UnknownValueError("axes must be known at compile time")
        axes = {ctx.normalize_axis(a, len(data), "squeeze axis") for a in axes}
        for a in axes:
            if data[a] not in (1, DYNAMIC):
                raise ShapeError(f"cannot squeeze dim {a} of size {data[a]}")
    else:
        if DYNAMIC in data:
            # The result's rank depends on sizes known only at run time.
            raise UnknownValueError("squeezing every size-1 dim needs a static shape")
        axes = {i for i, d in enumerate(data) if d == 1}
    return result(ctx.element_type("data"), [d for i, d in enumerate(data) if i not in axes])


def unsqueeze(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("data")
    axes = ctx.int_values("axes")
    if axes is None:
        raise UnknownValueError("axes must be known at compile time")
    rank = len(data) + len(axes)
    normalized = {ctx.normalize_axis(a, rank, "unsqueeze axis") for a in axes}
    if len(normalized) != len(axes):
        raise ShapeError(f"axes {axes} repeat an axis")
    rest = iter(data)
    return result(
        ctx.element_type("data"), [1 if i in normalized else next(rest) for i in range(rank)]
    )


def expand(ctx: ShapeContext) -> list[TensorType]:
    target = _shape_operand(ctx, "shape")
    element_type = ctx.element_type("input")
    if target is None:
        rank = max(_rank_of_shape_operand(ctx, "shape"), len(ctx.shape("input")))
        return result(element_type, _unknown(rank))
    if any(d < 0 for d in target):
        raise ShapeError(f"shape must be non-negative, got {target}")
    return result(element_type, broadcast_shapes([ctx.shape("input"), tuple(target)]))


def tile(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("input")
    repeats = _shape_operand(ctx, "repeats")
    if repeats is None:
        return result(ctx.element_type("input"), _unknown(len(data)))
    if len(repeats) != len(data):
        raise ShapeError(f"repeats has {len(repeats)} values for rank {len(data)}")
    if any(r < 0 for r in repeats):
        raise ShapeError(f"repeats must be non-negative, got {repeats}")
    return result(
        ctx.element_type("input"),
        [DYNAMIC if d == DYNAMIC else d * r for d, r in zip(data, repeats)],
    )


def _block_move(ctx: ShapeContext) -> tuple[int, int, int, int, int]:
    """DepthToSpace's and SpaceToDepth's NCHW input and their checked blocksize."""
    n, c, h, w = _rank4(ctx, "input")
    block = ctx.attr("blocksize")
    if block < 1:
        raise ShapeError(f"blocksize must be positive, got {block}")
    if ctx.attr("mode") not in ("DCR", "CRD"):
        raise ShapeError(f"mode must be DCR or CRD, got '{ctx.attr('mode')}'")
    return n, c, h, w, block


def _scaled(d: int, factor: int) -> int:
    return DYNAMIC if d == DYNAMIC else d * factor


def _divided(d: int, factor: int) -> int:
    return DYNAMIC if d == DYNAMIC else d // factor


def depth_to_space(ctx: ShapeContext) -> list[TensorType]:
    n, c, h, w, block = _block_move(ctx)
    if c != DYNAMIC and c % (block * block):
        raise ShapeError(f"channels ({c}) must be divisible by blocksize^2 ({block * block})")
    depth = _divided(c, block * block)
    return result(ctx.element_type("input"), [n, depth, _scaled(h, block), _scaled(w, block)])


def space_to_depth(ctx: ShapeContext) -> list[TensorType]:
    n, c, h, w, block = _block_move(ctx)
    for name, d in (("height", h), ("width", w)):
        if d != DYNAMIC and d % block:
            raise ShapeError(f"{name} ({d}) must be divisible by blocksize ({block})")
    spatial = [_divided(h, block), _divided(w, block)]
    return result(ctx.element_type("input"), [n, _scaled(c, block * block), *spatial])


def eye_like(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("input")
    if len(shape) != 2:
        raise ShapeError(f"input must have rank 2, got {format_shape(shape)}")
    element_type = ctx.attr("dtype") or ctx.element_type("input")
    return result(element_type, shape)


def reverse_sequence(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("input")
    if len(shape) < 2:
        raise ShapeError(f"input must have rank >= 2, got {format_shape(shape)}")
    axes = {ctx.attr("batch_axis"), ctx.attr("time_axis")}
    if axes != {0, 1}:
        raise ShapeError("batch_axis and time_axis must be 0 and 1, one each")
    lens = ctx.type("sequence_lens")
    batch = shape[ctx.attr("batch_axis")]
    if lens.element_type != i64 or len(lens.get_shape()) != 1:
        raise ShapeError(f"sequence_lens must be a vector of i64, got {lens}")
    if lens.get_shape()[0] not in (batch, DYNAMIC) and batch != DYNAMIC:
        raise ShapeError(f"sequence_lens must have one length per batch entry ({batch})")
    return [ctx.type("input")]


def center_crop_pad(ctx: ShapeContext) -> list[TensorType]:
    """input_data's shape with each of `axes` (default: all) set to `shape`'s value."""
    data = list(ctx.shape("input_data"))
    axes = ctx.attr("axes") or list(range(len(data)))
    normalized = [ctx.normalize_axis(a, len(data)) for a in axes]
    if len(set(normalized)) != len(axes):
        raise ShapeError(f"axes {list(axes)} repeat an axis")
    sizes = ctx.int_values("shape")
    if sizes is None:
        raise UnknownValueError("shape must be known at compile time")
    if len(sizes) != len(axes):
        raise ShapeError(f"shape has {len(sizes)} sizes for {len(axes)} axes")
    for axis, size in zip(normalized, sizes):
        if isinstance(size, int) and size < 0:
            raise ShapeError(f"shape {sizes} must not be negative")
        data[axis] = size
    return result(ctx.element_type("input_data"), data)


def _rank4(ctx: ShapeContext, name: str) -> tuple[int, int, int, int]:
    shape = ctx.shape(name)
    if len(shape) != 4:
        raise ShapeError(f"{name} must have rank 4 (NCHW), got {format_shape(shape)}")
    return shape[0], shape[1], shape[2], shape[3]


# ------------------------------------------------- concatenating and slicing


def concat(ctx: ShapeContext) -> list[TensorType]:
    types = list(ctx.types("inputs"))
    if not types:
        raise ShapeError("expects at least one operand")
    element_type = same_element_type(ctx, types)
    shapes = [symbolic_shape(t) for t in types]
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise ShapeError(f"operands have different ranks: {', '.join(map(format_shape, shapes))}")
    axis = ctx.normalize_axis(ctx.attr("axis"), rank)
    dims = list(shapes[0])
    for i in range(rank):
        column = [s[i] for s in shapes]
        if i == axis:
            dims[i] = DYNAMIC if DYNAMIC in column else sum(column)
            continue
        known = {d for d in column if d != DYNAMIC}
        if len(known) > 1:
            raise ShapeError(
                f"operands differ in dim {i} outside the concat axis: "
                f"{', '.join(map(format_shape, shapes))}"
            )
        dims[i] = known.pop() if known else DYNAMIC
    return result(element_type, dims)


def split_sizes(
    extent: int, split: list[int] | None, num_outputs: int | None, count: int
) -> list[int]:
    """Sizes of Split's outputs along the axis (DYNAMIC when unknown)."""
    if count < 1:
        raise ShapeError("split must have at least one result")
    if split is not None:
        if len(split) != count:
            raise ShapeError(f"split has {len(split)} sizes for {count} results")
        if extent != DYNAMIC and sum(split) != extent:
            raise ShapeError(f"split sizes {split} do not add up to {extent}")
        return split
    parts = num_outputs if num_outputs is not None else count
    if parts != count:
        raise ShapeError(f"num_outputs is {parts} but the op has {count} results")
    if extent == DYNAMIC:
        return [DYNAMIC] * count
    if num_outputs is None:
        if extent % count:
            raise ShapeError(f"dim of size {extent} does not split evenly into {count}")
        return [extent // count] * count
    chunk = -(-extent // parts)
    sizes = [chunk] * (parts - 1) + [extent - chunk * (parts - 1)]
    if sizes[-1] < 0:
        raise ShapeError(f"dim of size {extent} cannot be split into {parts} parts")
    return sizes


def split(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("input")
    axis = ctx.normalize_axis(ctx.attr("axis"), len(data))
    explicit = ctx.int_values("split") if ctx.has("split") else None
    if ctx.has("split") and explicit is None:
        sizes = [DYNAMIC] * ctx.num_results
    else:
        sizes = split_sizes(data[axis], explicit, ctx.attr("num_outputs"), ctx.num_results)
    element_type = ctx.element_type("input")
    return [
        result(element_type, [size if i == axis else d for i, d in enumerate(data)])[0]
        for size in sizes
    ]


def slice_extent(extent: Dim, start: Dim, end: Dim, step: int) -> Dim:
    """ONNX Slice: clamp start/end into range for the step's direction."""
    if step == 0:
        raise ShapeError("slice steps must be non-zero")
    if extent == DYNAMIC:
        return DYNAMIC
    start = start + extent if start < 0 else start
    end = end + extent if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), extent), min(max(end, 0), extent)
        # max(x, 0), not max(0, x): for x = S - 1 it asks only whether x < 0.
        return max(-(-(end - start) // step), 0)
    start, end = min(max(start, 0), extent - 1), min(max(end, -1), extent - 1)
    return max(-(-(start - end) // -step), 0)


def slice_op(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("data")
    element_type = ctx.element_type("data")
    starts, ends = ctx.int_values("starts"), ctx.int_values("ends")
    axes = ctx.int_values("axes") if ctx.has("axes") else None
    steps = ctx.int_values("steps") if ctx.has("steps") else None
    if (ctx.has("axes") and axes is None) or starts is None or ends is None:
        return result(element_type, _unknown(len(data)))
    axes = list(range(len(starts))) if axes is None else axes
    if not len(starts) == len(ends) == len(axes):
        raise ShapeError("starts, ends and axes must have the same length")
    if ctx.has("steps") and steps is None:
        steps_known: list[int | None] = [None] * len(axes)
    else:
        steps_known = list(steps) if steps is not None else [1] * len(axes)
    if len(steps_known) != len(axes):
        raise ShapeError("steps must have as many values as axes")
    dims = list(data)
    seen: set[int] = set()
    for start, end, axis, step in zip(starts, ends, axes, steps_known):
        axis = ctx.normalize_axis(axis, len(data), "slice axis")
        if axis in seen:
            raise ShapeError(f"axis {axis} is sliced twice")
        seen.add(axis)
        dims[axis] = DYNAMIC if step is None else slice_extent(data[axis], start, end, step)
    return result(element_type, dims)


def gather(ctx: ShapeContext) -> list[TensorType]:
    data, indices = ctx.shape("data"), ctx.shape("indices")
    if ctx.element_type("indices") not in (i64, IntegerType(32)):
        raise ShapeError(f"indices must be i64 or i32, got {ctx.type('indices')}")
    if not data:
        raise ShapeError("data must have rank >= 1")
    axis = ctx.normalize_axis(ctx.attr("axis"), len(data))
    return result(ctx.element_type("data"), [*data[:axis], *indices, *data[axis + 1 :]])


def _index_type(ctx: ShapeContext, name: str = "indices") -> None:
    if ctx.element_type(name) not in (i64, IntegerType(32)):
        raise ShapeError(f"{name} must be i64 or i32, got {ctx.type(name)}")


def _fits(inner: Sequence[Dim], outer: Sequence[Dim], what: str) -> None:
    """Each known dim of `inner` must be at most the same dim of `outer`."""
    for axis, (a, b) in enumerate(zip(inner, outer)):
        if DYNAMIC not in (a, b) and a > b:
            raise ShapeError(f"{what} exceeds the data along axis {axis} ({a} > {b})")


def gather_elements(ctx: ShapeContext) -> list[TensorType]:
    data, indices = ctx.shape("data"), ctx.shape("indices")
    _index_type(ctx)
    if not data or len(indices) != len(data):
        raise ShapeError(f"indices must have the rank of data ({len(data)}), got {len(indices)}")
    axis = ctx.normalize_axis(ctx.attr("axis"), len(data))
    _fits([d for a, d in enumerate(indices) if a != axis],
          [d for a, d in enumerate(data) if a != axis], "indices")  # fmt: skip
    return result(ctx.element_type("data"), indices)


def _tuples(ctx: ShapeContext, batch: int) -> tuple[SymShape, SymShape, int]:
    """(data, indices, the tuple depth) of GatherND/ScatterND: the indices'
    last dim, a constant from 1 to the data's rank past the batch dims."""
    data, indices = ctx.shape("data"), ctx.shape("indices")
    _index_type(ctx)
    if not data or not indices:
        raise ShapeError("data and indices must have rank >= 1")
    if not 0 <= batch < min(len(data), len(indices)):
        raise ShapeError(f"batch_dims ({batch}) must be below the ranks of data and indices")
    depth = indices[-1]
    if not isinstance(depth, int) or depth == DYNAMIC:
        raise ShapeError("the last dim of indices (the tuple depth) must be a constant")
    if not 1 <= depth <= len(data) - batch:
        raise ShapeError(f"the tuple depth ({depth}) must be from 1 to {len(data) - batch}")
    for axis in range(batch):
        if DYNAMIC not in (data[axis], indices[axis]) and data[axis] != indices[axis]:
            raise ShapeError(f"data and indices differ in batch dim {axis}")
    return data, indices, depth


def gather_nd(ctx: ShapeContext) -> list[TensorType]:
    batch = ctx.attr("batch_dims")
    data, indices, depth = _tuples(ctx, batch)
    return result(ctx.element_type("data"), [*indices[:-1], *data[batch + depth :]])


def _scatter_reduction(ctx: ShapeContext) -> None:
    if ctx.attr("reduction") not in SCATTER_REDUCTIONS:
        raise ShapeError(f"unknown reduction '{ctx.attr('reduction')}'")
    if ctx.element_type("updates") != ctx.element_type("data"):
        raise ShapeError(f"updates ({ctx.type('updates')}) and data ({ctx.type('data')}) differ")


def scatter_elements(ctx: ShapeContext) -> list[TensorType]:
    data, indices, updates = ctx.shape("data"), ctx.shape("indices"), ctx.shape("updates")
    _index_type(ctx)
    _scatter_reduction(ctx)
    if not data or len(indices) != len(data):
        raise ShapeError(f"indices must have the rank of data ({len(data)}), got {len(indices)}")
    if any(DYNAMIC not in (a, b) and a != b for a, b in zip(indices, updates)) or (
        len(updates) != len(indices)
    ):
        raise ShapeError(f"updates {format_shape(updates)} must have the shape of indices "
                         f"{format_shape(indices)}")  # fmt: skip
    axis = ctx.normalize_axis(ctx.attr("axis"), len(data))
    _fits([d for a, d in enumerate(indices) if a != axis],
          [d for a, d in enumerate(data) if a != axis], "indices")  # fmt: skip
    return result(ctx.element_type("data"), data)


def scatter_nd(ctx: ShapeContext) -> list[TensorType]:
    data, indices, depth = _tuples(ctx, 0)
    _scatter_reduction(ctx)
    updates, expected = ctx.shape("updates"), [*indices[:-1], *data[depth:]]
    if len(updates) != len(expected) or any(
        DYNAMIC not in (a, b) and a != b for a, b in zip(updates, expected)
    ):
        raise ShapeError(f"updates {format_shape(updates)} must have shape "
                         f"{format_shape(expected)}")  # fmt: skip
    return result(ctx.element_type("data"), data)


def trilu(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("input")
    if len(shape) < 2:
        raise ShapeError(f"input must have rank >= 2, got {len(shape)}")
    if ctx.has("k") and (ctx.element_type("k") != i64 or ctx.shape("k") not in ((), (1,))):
        raise ShapeError(f"k must be an i64 scalar, got {ctx.type('k')}")
    return result(ctx.element_type("input"), shape)


def one_hot(ctx: ShapeContext) -> list[TensorType]:
    """indices' shape with `depth` classes inserted at axis; values' type."""
    shape = list(ctx.shape("indices"))
    axis = ctx.normalize_axis(ctx.attr("axis"), len(shape) + 1)
    for name in ("depth", "values"):
        if ctx.element_type(name) == i1:
            raise ShapeError(f"{name} must be numeric, got {ctx.type(name)}")
    if math.prod(ctx.type("depth").get_shape()) != 1:
        raise ShapeError(f"depth must be a single number, got {ctx.type('depth')}")
    if tuple(ctx.type("values").get_shape()) != (2,):
        raise ShapeError(f"values must be [off_value, on_value], got {ctx.type('values')}")
    depth = ctx.value("depth")
    classes = DYNAMIC
    if depth is not None:
        classes = int(np.asarray(depth).reshape(()))
        if classes < 1:
            raise ShapeError(f"depth must be positive, got {classes}")
    shape.insert(axis, classes)
    return result(ctx.element_type("values"), shape)


def pad(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("data")
    if ctx.attr("mode") not in ("constant", "reflect", "edge", "wrap"):
        raise ShapeError(f"unknown pad mode '{ctx.attr('mode')}'")
    pads = _shape_operand(ctx, "pads")
    axes = ctx.int_values("axes") if ctx.has("axes") else list(range(len(data)))
    if pads is None or axes is None:
        return result(ctx.element_type("data"), _unknown(len(data)))
    if len(pads) != 2 * len(axes):
        raise ShapeError(f"pads has {len(pads)} values for {len(axes)} axes")
    dims = list(data)
    mode = ctx.attr("mode")
    for i, axis in enumerate(axes):
        axis = ctx.normalize_axis(axis, len(data), "pad axis")
        widths = (pads[i], pads[i + len(axes)])
        if dims[axis] != DYNAMIC and mode != "constant" and max(widths) > 0:
            _check_pad_source(mode, dims[axis], axis, widths)
        if dims[axis] != DYNAMIC:
            dims[axis] += pads[i] + pads[i + len(axes)]
            if dims[axis] < 0:
                raise ShapeError(f"pads {pads} remove more than dim {axis} holds")
    return result(ctx.element_type("data"), dims)


def _check_pad_source(mode: str, extent: int, axis: int, widths: tuple[int, int]) -> None:
    """Reflect, edge and wrap padding copy elements of the axis: there must be
    some, and a reflection must not run past the far end (as ONNX Runtime)."""
    if extent == 0:
        raise ShapeError(f"{mode} padding of axis {axis} needs elements, but the axis is empty")
    if mode == "reflect" and max(widths) > extent - 1:
        raise ShapeError(
            f"reflect pads {list(widths)} of axis {axis} must be smaller than its extent {extent}"
        )


def range_op(ctx: ShapeContext) -> list[TensorType]:
    types = [ctx.type("start"), ctx.type("limit"), ctx.type("delta")]
    element_type = same_element_type(ctx, types)
    if any(symbolic_shape(t) not in ((), (1,)) for t in types):
        raise ShapeError("start, limit and delta must be scalars")
    values = [ctx.value(n) for n in ("start", "limit", "delta")]
    if any(v is None for v in values):
        return result(element_type, [DYNAMIC])
    start, limit, delta = (np.asarray(v).reshape(()).item() for v in values)
    if delta == 0:
        raise ShapeError("delta must be non-zero")
    if all(isinstance(v, int | SymExpr) for v in (start, limit, delta)):
        # ceil((limit - start) / delta) in integers, so that a symbolic limit
        # (`Range(0, S, 1)`, the position ids of a sequence) gives S.
        return result(element_type, [max(-((start - limit) // delta), 0)])
    return result(element_type, [max(math.ceil((limit - start) / delta), 0)])


# ------------------------------------------------------------- the constant


CONSTANT_SPEC = OpSpec("Constant", [], [one("output")], constant,
                       attributes=(tensor_attr("value", required=True),),
                       summary="A tensor literal (ONNX Constant).")  # fmt: skip


@graph_op([CONSTANT_SPEC])
class ConstantOp(GraphOp, HasFolderInterface):
    """`%c = graph.constant dense<...> : tensor<...>`: a tensor literal.

    Large data prints as one hex string (`dense<"0x...">`), which parses
    back without going through Python numbers. `ConstantLike` with a `fold`
    that returns the value, as `arith.constant` has: xDSL's own machinery
    (`ConstantLike.get_constant_value`, canonicalisation, folding) sees it as
    a constant.
    """

    traits = traits_def(Pure(), ConstantLike())

    def fold(self) -> Sequence[SSAValue | Attribute]:
        return (self.properties["value"],)

    def verify_(self) -> None:
        from xdsl.utils.exceptions import VerifyException

        value = self.properties.get("value")
        if value is None:
            raise VerifyException("graph.constant: attribute 'value' is required")
        if self.result_types[0] != value.get_type():  # type: ignore[attr-defined]
            raise VerifyException(
                f"graph.constant: result type {self.result_types[0]} differs from the "
                f"value's type {value.get_type()}"  # type: ignore[attr-defined]
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        value = self.properties["value"]
        if isinstance(value, DenseIntOrFPElementsAttr) and value.type.element_type.bitwidth > 1:
            print_dense(printer, value)
        else:
            printer.print_attribute(value)
        if self.attributes:
            printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        value = parser.parse_attribute()
        attributes = parser.parse_optional_attr_dict()
        value_type = getattr(value, "type", None)
        if not isinstance(value_type, TensorType):
            parser.raise_error("graph.constant expects a dense tensor literal with its type")
        return cls.build(result_types=[value_type], properties={"value": value},
                         attributes=attributes)  # fmt: skip


def print_dense(printer: Printer, value: DenseIntOrFPElementsAttr) -> None:
    """Prints like xDSL's `dense` but checks splats and hex-encodes in NumPy."""
    try:
        array = array_from_dense(value)
    except UnsupportedTypeError:
        printer.print_attribute(value)
        return
    flat = array.reshape(-1)
    # Compare bit patterns, so -0.0 and NaN payloads are never merged into a splat.
    bits = flat.view(f"u{flat.dtype.itemsize}") if flat.dtype.kind == "f" else flat
    if flat.size >= 1 and np.all(bits == bits[0]):
        splat = DenseIntOrFPElementsAttr(value.type, value.data.__class__(flat[:1].tobytes()))
        printer.print_attribute(splat)
    elif flat.size > 16:
        printer.print_string(f'dense<"0x{value.data.data.hex().upper()}"> : ')
        printer.print_attribute(value.type)
    elif flat.size == 0:
        printer.print_attribute(value)
    else:
        printer.print_string("dense<")
        _print_nested(printer, array, value.type.element_type)
        printer.print_string("> : ")
        printer.print_attribute(value.type)


def _print_nested(printer: Printer, array: np.ndarray, element_type: Any) -> None:
    """`[[1, 2], [3, 4]]`, element by element (xDSL's printer would merge 0.0 and -0.0)."""
    if array.ndim == 0:
        if element_type == i1:
            printer.print_string("true" if array.item() else "false")
        elif isinstance(element_type, IntegerType):
            printer.print_int(int(array.item()))
        else:
            printer.print_float(float(array.item()), element_type)
        return
    printer.print_string("[")
    printer.print_list(list(array), lambda a: _print_nested(printer, np.asarray(a), element_type))
    printer.print_string("]")


def constant_value_of(value: SSAValue) -> np.ndarray | None:
    """The value of an SSA value defined by `graph.constant`, else None."""
    owner = value.owner
    if isinstance(owner, ConstantOp):
        attr = owner.properties.get("value")
        if isinstance(attr, DenseIntOrFPElementsAttr):
            return array_from_dense(attr)
    return None


def constant_data(value: SSAValue) -> np.ndarray:
    """The value of an SSA value defined by `graph.constant`, for a step that
    cannot go on without it (an NPU program's weights): see `dense_constant`."""
    owner = value.owner
    assert isinstance(owner, ConstantOp), "constant_data of a value no graph.constant defines"
    return array_from_dense(dense_constant(owner))


def dense_constant(op: ConstantOp) -> DenseIntOrFPElementsAttr:
    """The data of `op`, for a step that cannot go on without it (a kernel's
    weights): an `ElidedConstantError` naming the constant where the IR holds
    only `dense_resource<__elided__>`."""
    attr = op.properties.get("value")
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return attr
    raise ElidedConstantError(f"{describe_constant(op.results[0])}: its data is elided: "
                              f"{ELIDED_ADVICE}")  # fmt: skip


def describe_constant(value: SSAValue) -> str:
    """`graph.constant %conv1_b : tensor<64xf32>`, as messages name a constant."""
    owner = value.owner
    name = f" %{value.name_hint}" if value.name_hint else ""
    kind = owner.name if isinstance(owner, Operation) else "block argument"
    return f"{kind}{name} : {value.type}"


SPECS = [
    OpSpec("ConstantOfShape", [one("input")], [one("output")], constant_of_shape,
           attributes=(tensor_attr("value"),),
           summary="A tensor of the given shape filled with `value` (default 0.0 f32)."),
    OpSpec("Shape", [one("data")], [one("shape")], shape_op,
           attributes=(int_attr("start", 0), int_attr("end")),
           summary="The dims of data[start:end] as a 1-D i64 tensor."),
    OpSpec("Size", [one("data")], [one("size")], size_op,
           summary="The number of elements, as an i64 scalar."),
    OpSpec("Reshape", [one("data"), one("shape")], [one("reshaped")], reshape,
           attributes=(int_attr("allowzero", 0),),
           summary="Reshape; 0 copies a dim (unless allowzero), -1 is inferred."),
    OpSpec("Transpose", [one("data")], [one("transposed")], transpose,
           attributes=(ints_attr("perm"),), summary="Permutes dims (default: reverses)."),
    OpSpec("Squeeze", [one("data"), opt("axes")], [one("squeezed")], squeeze,
           summary="Removes size-1 dims (the given axes, or all)."),
    OpSpec("Unsqueeze", [one("data"), one("axes")], [one("expanded")], unsqueeze,
           summary="Inserts size-1 dims at axes of the result."),
    OpSpec("Expand", [one("input"), one("shape")], [one("output")], expand,
           summary="Broadcasts input to shape (bidirectionally)."),
    OpSpec("Tile", [one("input"), one("repeats")], [one("output")], tile,
           summary="Repeats the tensor along each dim."),
    OpSpec("DepthToSpace", [one("input")], [one("output")], depth_to_space,
           attributes=(int_attr("blocksize", required=True), string_attr("mode", "DCR")),
           summary="Moves blocks of channels into spatial blocks (NCHW)."),
    OpSpec("CenterCropPad", [one("input_data"), one("shape")], [one("output_data")],
           center_crop_pad, attributes=(ints_attr("axes"),),
           summary="Crops or zero-pads each of axes to the given size, keeping the center."),
    OpSpec("SpaceToDepth", [one("input")], [one("output")], space_to_depth,
           attributes=(int_attr("blocksize", required=True), string_attr("mode", "DCR")),
           summary="Moves spatial blocks into channels (NCHW): DepthToSpace's inverse."),
    OpSpec("EyeLike", [one("input")], [one("output")], eye_like,
           attributes=(int_attr("k", 0), AttrSpec("dtype", AttrKind.TYPE)),
           summary="Ones on the k-th diagonal of a matrix of the input's shape, zeros elsewhere."),
    OpSpec("ReverseSequence", [one("input"), one("sequence_lens")], [one("Y")], reverse_sequence,
           attributes=(int_attr("batch_axis", 1), int_attr("time_axis", 0)),
           summary="Reverses the first sequence_lens[b] steps along time_axis of each batch "
                   "entry b."),
    OpSpec("Concat", [many("inputs")], [one("concat_result")], concat,
           attributes=(int_attr("axis", required=True),), summary="Joins along axis."),
    OpSpec("Split", [one("input"), opt("split")], [many("outputs")], split,
           attributes=(int_attr("axis", 0), int_attr("num_outputs")),
           summary="Splits along axis into the given sizes or equal parts."),
    OpSpec("Slice", [one("data"), one("starts"), one("ends"), opt("axes"), opt("steps")],
           [one("output")], slice_op, summary="Strided slice along the given axes."),
    OpSpec("Gather", [one("data"), one("indices")], [one("output")], gather,
           attributes=(int_attr("axis", 0),), summary="Takes entries along axis by index."),
    OpSpec("GatherElements", [one("data"), one("indices")], [one("output")], gather_elements,
           attributes=(int_attr("axis", 0),),
           summary="Takes one entry per index, along axis, at the index's own position."),
    OpSpec("GatherND", [one("data"), one("indices")], [one("output")], gather_nd,
           attributes=(int_attr("batch_dims", 0),),
           summary="Takes slices of data addressed by index tuples (indices' last axis)."),
    OpSpec("ScatterElements", [one("data"), one("indices"), one("updates")], [one("output")],
           scatter_elements, attributes=(int_attr("axis", 0), string_attr("reduction", "none")),
           summary="data with each update written (or combined) at its index along axis."),
    OpSpec("ScatterND", [one("data"), one("indices"), one("updates")], [one("output")],
           scatter_nd, attributes=(string_attr("reduction", "none"),),
           summary="data with slices written (or combined) where index tuples address."),
    OpSpec("Trilu", [one("input"), opt("k")], [one("output")], trilu,
           attributes=(int_attr("upper", 1),),
           summary="Keeps the upper (or lower) triangle of the last two dims, from diagonal k."),
    OpSpec("OneHot", [one("indices"), one("depth"), one("values")], [one("output")], one_hot,
           attributes=(int_attr("axis", -1),),
           summary="on_value where the position along axis is the index (negative ones count "
                   "from depth), off_value elsewhere."),
    OpSpec("Pad", [one("data"), one("pads"), opt("constant_value"), opt("axes")],
           [one("output")], pad, attributes=(string_attr("mode", "constant"),),
           summary="Pads with a constant, or by reflecting, repeating or wrapping edges."),
    OpSpec("Range", [one("start"), one("limit"), one("delta")], [one("output")], range_op,
           summary="start, start+delta, ... up to limit (exclusive)."),
]  # fmt: skip


# ----------------------------------------------------------- the op classes
# One class per row of SPECS, in table order; `graph_op` builds each from its
# row (tests/dialects/test_graph_op_classes.py holds the two together).


@graph_op(SPECS)
class ConstantOfShapeOp(GraphOp):
    def element(self) -> np.ndarray:
        """The one element every position holds: `value`, by default a float32 zero."""
        value = self.attr("value")
        return np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(1)

    def splat(self) -> DenseIntOrFPElementsAttr:
        """The result as a splat constant (one element stored, whatever the
        shape): what folding and lowering a static ConstantOfShape make."""
        result_type = self.result_types[0]
        assert isinstance(result_type, TensorType)
        return DenseIntOrFPElementsAttr(result_type, dense_from_array(self.element()).data)


@graph_op(SPECS)
class ShapeOp(GraphOp): ...


@graph_op(SPECS)
class SizeOp(GraphOp): ...


@graph_op(SPECS)
class ReshapeOp(GraphOp): ...


@graph_op(SPECS)
class TransposeOp(GraphOp): ...


@graph_op(SPECS)
class SqueezeOp(GraphOp): ...


@graph_op(SPECS)
class UnsqueezeOp(GraphOp): ...


@graph_op(SPECS)
class ExpandOp(GraphOp): ...


@graph_op(SPECS)
class TileOp(GraphOp): ...


@graph_op(SPECS)
class DepthToSpaceOp(GraphOp): ...


@graph_op(SPECS)
class CenterCropPadOp(GraphOp): ...


@graph_op(SPECS)
class SpaceToDepthOp(GraphOp): ...


@graph_op(SPECS)
class EyeLikeOp(GraphOp): ...


@graph_op(SPECS)
class ReverseSequenceOp(GraphOp): ...


@graph_op(SPECS)
class ConcatOp(GraphOp): ...


@graph_op(SPECS)
class SplitOp(GraphOp): ...


@graph_op(SPECS)
class SliceOp(GraphOp): ...


@graph_op(SPECS)
class GatherOp(GraphOp): ...


@graph_op(SPECS)
class GatherElementsOp(GraphOp): ...


@graph_op(SPECS)
class GatherNDOp(GraphOp): ...


@graph_op(SPECS)
class ScatterElementsOp(GraphOp): ...


@graph_op(SPECS)
class ScatterNDOp(GraphOp): ...


@graph_op(SPECS)
class TriluOp(GraphOp): ...


@graph_op(SPECS)
class OneHotOp(GraphOp): ...


@graph_op(SPECS)
class PadOp(GraphOp): ...


@graph_op(SPECS)
class RangeOp(GraphOp): ...
