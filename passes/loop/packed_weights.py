"""Packing a constant operand at compile time.

A schedule's `pack` copies an input into a buffer laid out tile by tile
before the op's loops run (`ember.dialects.schedule`, `loop-generate`). When
that input is a `loop.weight` (a matmul's constant B, a convolution's
filter), the copy would do the same work on every call for the same
values: `loop-generate` asks `packed_weight` instead, which lays the values
out here, with NumPy, as a new `loop.weight` placed next to the original. The
op reads it exactly as it would have read the copy; the original stays as
long as anything else reads it (`loop-generate` erases it with the op when
nothing does). The padding of a partial last tile is zero, and never read.

As onnxruntime's MLAS packs a constant B once when a session starts, this
makes a packed weight cost nothing per call: the default schedule can pack
every constant panel whose reads it helps (`targets/cpu/schedule/cache_blocking.py`).

In a kernel function outlined before its loops were generated, the weight
is an argument: where every call passes a `loop.weight` there, each is
packed at its call and passed in an argument of the packed type, which the
loops read (the unpacked one goes once nothing reads it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ember.dialects.graph.types import array_from_dense, dense_from_array
from ember.dialects.loop import WeightOp
from ember.passes.loop.kernel_buffers import append_argument, passed_values


def tile_layout(array: np.ndarray, tiles: Sequence[int]) -> np.ndarray:
    """`array` laid out tile by tile: for each axis tiled by t (0 < t < its
    extent E), a tile-number axis of ceil(E / t) and a within-tile axis of t,
    the tile-number axes first, in axis order, then the within-tile ones (an
    untiled axis whole among them); a partial last tile padded with zeros."""
    tiled = [0 < t < e for t, e in zip(tiles, array.shape)]
    padding = [(0, -e % t if is_tiled else 0)
               for t, e, is_tiled in zip(tiles, array.shape, tiled)]  # fmt: skip
    padded = np.pad(array, padding)
    split: list[int] = []
    numbers: list[int] = []
    within: list[int] = []
    for t, e, is_tiled in zip(tiles, padded.shape, tiled):
        if is_tiled:
            numbers.append(len(split))
            split += [e // t, t]
        within.append(len(split) - 1 if is_tiled else len(split))
        if not is_tiled:
            split.append(e)
    return np.ascontiguousarray(padded.reshape(split).transpose(numbers + within))


def packed_weight(
    buffer: SSAValue,
    offsets: Sequence[int] | None,
    strides: Sequence[int] | None,
    extents: Sequence[int],
    tiles: Sequence[int],
    calls: Mapping[str, Sequence[CallOp]] | None = None,
) -> SSAValue | None:
    """The packed copy of the constant operand that `loop-generate` reads from
    `buffer` (a `loop.weight`) at `index * stride + offset` per axis (no
    `offsets`: at the index), of `extents` tiled by `tiles` per axis (see
    `tile_layout`), as a new `loop.weight` just after `buffer`'s; None where
    `buffer` is not a weight of that rank.

    In a kernel function (`ember.kernel`), `buffer` may be an argument that
    every call (`calls`, by callee) passes a weight: each call's weight is
    packed so, and passed in a new argument, which is returned."""
    if isinstance(buffer, BlockArgument):
        return _packed_argument(buffer, offsets, strides, extents, tiles, calls or {})
    weight = buffer.owner
    if not isinstance(weight, WeightOp):
        return None
    packed = _packed_array(weight, offsets, strides, extents, tiles)
    return None if packed is None else _weight_after(weight, packed)


def _packed_array(
    weight: WeightOp,
    offsets: Sequence[int] | None,
    strides: Sequence[int] | None,
    extents: Sequence[int],
    tiles: Sequence[int],
) -> np.ndarray | None:
    array = array_from_dense(weight.value)
    if array.ndim != len(extents):
        return None
    if offsets is not None and strides is not None:
        array = array[tuple(slice(o, o + (e - 1) * s + 1, s)
                            for o, s, e in zip(offsets, strides, extents))]  # fmt: skip
    if tuple(array.shape) != tuple(extents):
        return None
    return tile_layout(array, tiles)


def _weight_after(weight: WeightOp, packed: np.ndarray) -> SSAValue:
    source_type = weight.result.type
    assert isinstance(source_type, MemRefType)
    copy = WeightOp(dense_from_array(packed), MemRefType(source_type.element_type, packed.shape))
    Rewriter.insert_op(copy, InsertPoint.after(weight))
    hint = weight.result.name_hint
    copy.result.name_hint = f"{hint}_packed" if hint else "packed"
    return copy.result


def _packed_argument(
    argument: BlockArgument,
    offsets: Sequence[int] | None,
    strides: Sequence[int] | None,
    extents: Sequence[int],
    tiles: Sequence[int],
    calls: Mapping[str, Sequence[CallOp]],
) -> SSAValue | None:
    passed = passed_values(argument, calls)
    weights = [v.owner for v in passed or ()]
    if not weights or not all(isinstance(w, WeightOp) for w in weights):
        return None
    arrays = [_packed_array(w, offsets, strides, extents, tiles) for w in weights]  # type: ignore[arg-type]
    if any(a is None for a in arrays):
        return None
    packed = [_weight_after(w, a) for w, a in zip(weights, arrays)]  # type: ignore[arg-type]
    func = argument.block.parent_op()
    assert isinstance(func, FuncOp)
    hint = f"{argument.name_hint}_packed" if argument.name_hint else "packed"
    result = append_argument(func, packed[0].type, hint)
    sites = calls[func.sym_name.data]
    for call, weight in zip(sites, packed):
        call.operands = (*call.operands, weight)
    return result


__all__ = ["packed_weight", "tile_layout"]
