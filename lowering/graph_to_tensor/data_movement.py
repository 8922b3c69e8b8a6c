"""Graph-to-tensor lowering of the data movement family."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue

from ember.dialects import ember_linalg
from ember.dialects.graph import (
    CenterCropPadOp,
    ConcatOp,
    DepthToSpaceOp,
    ExpandOp,
    FlattenOp,
    GatherOp,
    GraphOp,
    PadOp,
    ReshapeOp,
    SliceOp,
    SpaceToDepthOp,
    SplitOp,
    SqueezeOp,
    TileOp,
    TransposeOp,
    TriluOp,
    UnsqueezeOp,
    constant_value_of,
)
from ember.dialects.graph.symbolic import Dim, SymExpr, UndecidedComparison
from ember.lowering.graph_to_tensor.common import (
    MAX_GATHER_INDICES,
    Body,
    Emitter,
    FamilyPattern,
    NeedsConstants,
    _constant_operands,
    _copy,
    _dim,
    _elem,
    _int_constant,
    _map,
    _normalize_axis,
    _shape,
    _transpose,
    regrouping,
)
from ember.reference.kernels.tensor import center_crop_pad_extents

# ---------------------------------------------------------- data movement


def _lower_reshape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    return [e.reshape(op.operands[0], _shape(op.results[0]))]


def _lower_transpose(e: Emitter, op: GraphOp) -> list[SSAValue]:
    rank = len(_shape(op.operands[0]))
    perm = op.attr("perm") or list(reversed(range(rank)))
    return [_transpose(e, op.operands[0], perm)]


def _lower_expand(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operand_group("input")[0]
    return [e.parallel([x], _shape(op.results[0]), _elem(x), _copy)]


def _lower_tile(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Reshape to (1, s0, 1, s1, ...), broadcast-copy to (r0, s0, r1, s1, ...),
    reshape to (r0 s0, r1 s1, ...)."""
    x = op.operand_group("input")[0]
    shape, out = _shape(x), _shape(op.results[0])
    if 0 in out:
        return [e.empty(out, _elem(x))]
    repeats = [o // s for o, s in zip(out, shape)]
    spread = e.reshape(x, [d for s in shape for d in (1, s)])
    tiled = [d for r, s in zip(repeats, shape) for d in (r, s)]
    return [e.reshape(e.parallel([spread], tiled, _elem(x), _copy), out)]


def _lower_depth_to_space(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Reshape to 6-D, transpose (DCR or CRD order), reshape."""
    x = op.operands[0]
    n, c, h, w = _shape(x)
    block = op.attr("blocksize")
    depth = c // (block * block)
    if op.attr("mode") == "DCR":
        split, perm = [n, block, block, depth, h, w], (0, 3, 4, 1, 5, 2)
    else:
        split, perm = [n, depth, block, block, h, w], (0, 1, 4, 2, 5, 3)
    moved = _transpose(e, e.reshape(x, split), perm)
    return [e.reshape(moved, _shape(op.results[0]))]


def _lower_space_to_depth(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Reshape to 6-D (each spatial dim split into blocks), transpose the block
    positions in front of the channels (DCR) or behind them (CRD), reshape."""
    x = op.operands[0]
    n, c, h, w = _shape(x)
    block = op.attr("blocksize")
    perm = (0, 3, 5, 1, 2, 4) if op.attr("mode") == "DCR" else (0, 1, 3, 5, 2, 4)
    moved = _transpose(e, e.reshape(x, [n, c, h // block, block, w // block, block]), perm)
    return [e.reshape(moved, _shape(op.results[0]))]


def _lower_center_crop_pad(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """`tensor.extract_slice` of the centre of each axis that shrinks, then
    `tensor.pad` with zeros around each axis that grows."""
    x = op.operands[0]
    shape, target = _shape(x), _shape(op.results[0])
    extents = [center_crop_pad_extents(n, t) for n, t in zip(shape, target)]
    cropped = e.extract(x, [start for start, _, _ in extents],
                        [min(n, t) for n, t in zip(shape, target)])  # fmt: skip
    return [e.pad(cropped, [b for _, b, _ in extents], [a for _, _, a in extents], 0)]


def _lower_concat(e: Emitter, op: GraphOp) -> list[SSAValue]:
    out = _shape(op.results[0])
    axis = _normalize_axis(op.attr("axis"), len(out))
    result_type = op.result_types[0]
    assert isinstance(result_type, TensorType)
    return [e.value(tensor.ConcatOp(list(op.operands), axis, result_type))]


def _lower_split(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operand_group("input")[0]
    axis = _normalize_axis(op.attr("axis"), len(_shape(x)))
    parts, offset = [], 0
    for result in op.results:
        offsets: list[Dim] = [0] * len(_shape(x))
        offsets[axis] = offset
        parts.append(e.extract(x, offsets, _shape(result)))
        offset = offset + _shape(result)[axis]  # symbolic along a symbolic axis
    return parts


def _slice_starts_and_steps(op: GraphOp) -> list[tuple[int, int]]:
    """(first index, step) per dim, with ONNX's clamping of starts."""
    shape = _shape(op.operand_group("data")[0])
    starts = _int_constant(op.operand_group("starts")[0])
    axes_group, steps_group = op.operand_group("axes"), op.operand_group("steps")
    axes = _int_constant(axes_group[0]) if axes_group else list(range(len(starts)))
    steps = _int_constant(steps_group[0]) if steps_group else [1] * len(starts)
    params = [(0, 1)] * len(shape)
    for start, axis, step in zip(starts, axes, steps):
        axis = _normalize_axis(axis, len(shape))
        extent = shape[axis]
        start = start + extent if start < 0 else start
        start = min(max(start, 0), extent if step > 0 else extent - 1)
        params[axis] = (start, step)
    return params


def _lower_slice(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """`tensor.extract_slice` for the dims with positive steps; then, if some
    step is negative, a copy generic that reads those dims at start + step * d
    (`(d0 * -1) + 9` reverses a dim of 10)."""
    x = op.operand_group("data")[0]
    shape, out = _shape(x), _shape(op.results[0])
    params = _slice_starts_and_steps(op)
    offsets = [start if step > 0 else 0 for start, step in params]
    sizes = [size if step > 0 else extent for (_, step), size, extent in zip(params, out, shape)]
    part = e.extract(x, offsets, sizes, [max(step, 1) for _, step in params])
    if all(step > 0 for _, step in params):
        return [part]
    read = _map(len(out), [_dim(i) * step + start if step < 0 else _dim(i)
                           for i, (start, step) in enumerate(params)])  # fmt: skip
    return [e.parallel([part], out, _elem(x), _copy, maps=[read])]


def _check_slice(op: GraphOp) -> str | None:
    """Starts, axes and steps must be constants; the ends need not be (the
    result's type gives the sizes, which shape inference computed from
    them). A start may depend on a symbolic size (`x[-1:]` starts at
    `N - 1`), and steps along a symbolic axis must be positive."""
    if not _constant_operands(op, "starts", "axes", "steps"):
        return NeedsConstants("starts, axes and steps must be constants")
    try:
        params = _slice_starts_and_steps(op)
    except UndecidedComparison as error:
        return f"a start that depends on the symbolic sizes ({error})"
    for (_, step), extent in zip(params, _shape(op.operand_group("data")[0])):
        if step < 0 and isinstance(extent, SymExpr):
            return f"a negative step along the symbolic axis of size {extent}"
    return None


def _slice_unread(op: GraphOp) -> frozenset[str]:
    """A Slice whose other operands are constants reads its ends from its
    result type, not their value (`_lower_slice`)."""
    return frozenset({"ends"}) if _check_slice(op) is None else frozenset()


def _shape_unread(op: GraphOp) -> frozenset[str]:
    """Reshape, Expand and CenterCropPad take their result shape from the result type, not
    the value of their `shape` operand (shape inference computed the type
    from it, symbols included)."""
    return frozenset({"shape"})


def _lower_gather(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Up to MAX_GATHER_INDICES constant indices: one `tensor.extract_slice` per
    index, inserted in order, then a reshape. Otherwise `ember_linalg.gather`,
    which reads the indices at run time."""
    data, indices = op.operand_group("data")[0], op.operand_group("indices")[0]
    shape, t = _shape(data), _elem(data)
    axis = _normalize_axis(op.attr("axis"), len(shape))
    out = _shape(op.results[0])
    constant = constant_value_of(indices)
    if constant is None or constant.size > MAX_GATHER_INDICES or isinstance(shape[axis], SymExpr):
        maps = ember_linalg.along_axis(len(shape), axis, len(_shape(indices)))
        return [e.value(ember_linalg.GatherOp.on_tensors(data, indices, op.result_types[0], maps))]
    picks = [i + shape[axis] if i < 0 else i for i in _int_constant(indices)]
    sizes = [1 if i == axis else d for i, d in enumerate(shape)]

    def piece(index: int) -> SSAValue:
        return e.extract(data, [index if i == axis else 0 for i in range(len(shape))], sizes)

    if len(picks) == 1:
        return [e.reshape(piece(picks[0]), out)]
    gathered = [len(picks) if i == axis else d for i, d in enumerate(shape)]
    dest = e.empty(gathered, t)
    for k, index in enumerate(picks):
        dest = e.insert(piece(index), dest, [k if i == axis else 0 for i in range(len(shape))])
    return [e.reshape(dest, out)]


def _check_gather(op: GraphOp) -> str | None:
    """Constant indices must lie in [-s, s - 1] (ONNX: an error otherwise).
    Checked here because a few of them become `tensor.extract_slice`s whose
    offsets nothing checks at run time; run-time indices are wrapped and
    clamped by `ember_linalg.gather` (docs/semantics.md)."""
    data, indices = op.operand_group("data")[0], op.operand_group("indices")[0]
    constant = constant_value_of(indices)
    if constant is None or constant.size == 0:
        return None
    shape = _shape(data)
    axis = _normalize_axis(op.attr("axis"), len(shape))
    if isinstance(shape[axis], SymExpr):  # read at run time, wrapped and clamped
        return None
    flat = np.asarray(constant, dtype=np.int64).reshape(-1)
    outside = flat[(flat < -shape[axis]) | (flat >= shape[axis])]
    if outside.size == 0:
        return None
    name = op.results[0].name_hint
    of = f" of %{name}" if name else ""
    return (
        f"constant index {int(outside[0])}{of} is out of range for axis {axis} of size "
        f"{shape[axis]}"
    )


def _lower_trilu(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """result = x where (column - row) >= k (upper; <= k lower), else 0: one
    generic reading the positions of its last two dims (`linalg.index`); k is
    folded in when it is a constant, else read as a scalar input."""
    x, ks = op.operand_group("input")[0], op.operand_group("k")
    shape, t = _shape(x), _elem(x)
    rank = len(shape)
    known = constant_value_of(ks[0]) if ks else np.zeros((), np.int64)
    inputs = [x] if known is not None else [x, ks[0]]
    relation = "ge" if op.attr("upper") else "le"

    def keep(b: Body, args: list[SSAValue]) -> SSAValue:
        row, column = (b.emit(linalg.IndexOp(d)) for d in (rank - 2, rank - 1))
        offset = b.emit(arith.IndexCastOp(b.emit(arith.SubiOp(column, row)), i64))
        k = b.const(int(np.asarray(known).reshape(())), i64) if known is not None else args[1]
        return b.select(b.cmp(relation, offset, k), args[0], b.const(0, t))

    return [e.parallel(inputs, shape, t, keep)]


def _lower_pad(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Negative pads crop with `tensor.extract_slice` first. Constant mode is a
    `tensor.pad`; edge, reflect and wrap build each padded axis in turn from
    slices of the input (see `_pad_axis`)."""
    x = op.operand_group("data")[0]
    shape = _shape(x)
    pads = _int_constant(op.operand_group("pads")[0])
    axes_group, value_group = op.operand_group("axes"), op.operand_group("constant_value")
    axes = _int_constant(axes_group[0]) if axes_group else list(range(len(shape)))
    low, high = [0] * len(shape), [0] * len(shape)
    for i, axis in enumerate(axes):
        axis = _normalize_axis(axis, len(shape))
        low[axis], high[axis] = pads[i], pads[i + len(axes)]
    sizes = [d - max(-lo, 0) - max(-hi, 0) for d, lo, hi in zip(shape, low, high)]
    y = e.extract(x, [max(-p, 0) for p in low], sizes)
    low, high = [max(p, 0) for p in low], [max(p, 0) for p in high]
    mode = op.attr("mode")
    if mode == "constant":
        filler = constant_value_of(value_group[0]) if value_group else None
        value = 0 if filler is None or filler.size == 0 else filler.reshape(-1)[0].item()
        return [e.pad(y, low, high, value)]
    for axis, (lo, hi) in enumerate(zip(low, high)):
        if lo or hi:
            y = _pad_axis(e, y, axis, lo, hi, mode)
    return [y]


def _index_runs(indices: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first index, step, length) runs of `indices` with step 1, -1 or 0."""
    runs: list[tuple[int, int, int]] = []
    for index in indices:
        if runs:
            first, step, length = runs[-1]
            last = first + step * (length - 1)
            if length == 1 and abs(index - last) <= 1:
                runs[-1] = (first, index - last, 2)
                continue
            if length > 1 and index - last == step:
                runs[-1] = (first, step, length + 1)
                continue
        runs.append((index, 1, 1))
    return runs


def _pad_axis(e: Emitter, x: SSAValue, axis: int, low: int, high: int, mode: str) -> SSAValue:
    """Pads one axis in edge, reflect or wrap mode: the input goes in the middle
    of a `tensor.empty`; each side is read from input positions (NumPy's
    `np.pad` of an index range), as runs of `tensor.extract_slice` pieces:
    ascending runs (wrap) as they are, descending runs (reflect) copied with a
    reversed map `(d) -> (-d + length - 1)`, repeated positions (edge) copied
    from a size-1 slice with a map reading index 0."""
    shape, t = _shape(x), _elem(x)
    rank, extent = len(shape), shape[axis]
    source = np.pad(np.arange(extent), (low, high), mode=mode)
    out = [*shape[:axis], extent + low + high, *shape[axis + 1 :]]
    dest = e.insert(x, e.empty(out, t), [low if i == axis else 0 for i in range(rank)])
    sides = [(0, source[:low]), (low + extent, source[low + extent :])]
    for position, indices in sides:
        for first, step, length in _index_runs([int(i) for i in indices]):
            start = first if step >= 0 else first - length + 1
            size = 1 if step == 0 else length
            offsets = [start if i == axis else 0 for i in range(rank)]
            piece = e.extract(x, offsets, [size if i == axis else d for i, d in enumerate(shape)])
            if step != 1:
                read = -_dim(axis) + (length - 1) if step < 0 else 0
                maps = [_map(rank, [read if i == axis else _dim(i) for i in range(rank)])]
                piece_shape = [length if i == axis else d for i, d in enumerate(shape)]
                piece = e.parallel([piece], piece_shape, t, _copy, maps=maps)
            dest = e.insert(piece, dest, [position if i == axis else 0 for i in range(rank)])
            position += length
    return dest


def _check_pad(op: GraphOp) -> str | None:
    if op.attr("mode") != "constant":  # constant_value is not read
        if not _constant_operands(op, "pads", "axes"):
            return NeedsConstants("pads and axes must be constants")
        return None
    if not _constant_operands(op, "pads", "constant_value", "axes"):
        return NeedsConstants("pads, constant_value and axes must be constants")
    return None


def _check_reshape(op: GraphOp) -> str | None:
    source, target = _shape(op.operands[0]), _shape(op.results[0])
    symbolic = any(isinstance(d, SymExpr) for d in (*source, *target))
    if symbolic and regrouping(source, target) is None:
        return f"{list(source)} does not regroup as {list(target)}"
    return None


class DataMovementPattern(FamilyPattern):
    """Reshapes, transposes, broadcasts, slices, concatenation, padding, gathers,
    triangles."""

    lowerings = {
        ReshapeOp: _lower_reshape,
        FlattenOp: _lower_reshape,
        SqueezeOp: _lower_reshape,
        UnsqueezeOp: _lower_reshape,
        TransposeOp: _lower_transpose,
        ExpandOp: _lower_expand,
        TileOp: _lower_tile,
        DepthToSpaceOp: _lower_depth_to_space,
        SpaceToDepthOp: _lower_space_to_depth,
        CenterCropPadOp: _lower_center_crop_pad,
        ConcatOp: _lower_concat,
        SplitOp: _lower_split,
        SliceOp: _lower_slice,
        GatherOp: _lower_gather,
        PadOp: _lower_pad,
        TriluOp: _lower_trilu,
    }
    checks = {SliceOp: _check_slice, PadOp: _check_pad, GatherOp: _check_gather,
              **{op_class: _check_reshape
                 for op_class in (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp)}}  # fmt: skip
    symbolic = frozenset({ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp, ExpandOp,
                          ConcatOp, SplitOp, SliceOp, GatherOp, TriluOp})  # fmt: skip
    unread = {
        SliceOp: _slice_unread,
        ReshapeOp: _shape_unread,
        ExpandOp: _shape_unread,
        CenterCropPadOp: _shape_unread,
    }
