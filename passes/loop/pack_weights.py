"""`loop-pack-weights`: lays out every `loop.weight` in one weights blob.

Each weight gets a byte offset (aligned to 64 bytes) in the one blob of the
module that the compiled code receives by pointer; identical weights share
one place. The blob becomes explicit in each function that has a body (but
kernels, `ember.kernel`): an argument `%weights: memref<Nxi8> {ember.weights}`
(N the blob's size, 0 without weights) after its inputs and outputs, and
each `loop.weight` becomes `memref.view %weights[%offset][]`. Each such
function gets `loop.weights_bytes` (the blob's size). Functions that have a
weights argument already are left alone.

The data leaves the IR here: the blob itself (NumPy bytes) is kept for the
module in memory and `weights_blob(module)` returns it, so weights never pass
through code or text.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, i1, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ember.dialects.graph.types import array_from_dense
from ember.dialects.loop import (
    ALIGNMENT,
    WEIGHTS_ARG,
    WeightOp,
    add_abi_argument,
    align,
    aligned_zeros,
    byte_size,
    marked_argument,
)
from ember.passes.loop.outline_kernels import KERNEL_ATTR

_BLOBS: WeakKeyDictionary[ModuleOp, np.ndarray] = WeakKeyDictionary()
"""The blob `loop-pack-weights` laid out for each module it ran on."""


def _packable(func: FuncOp) -> bool:
    return (
        not func.is_declaration
        and KERNEL_ATTR not in func.attributes
        and marked_argument(func, WEIGHTS_ARG) is None
    )


def pack_module(module: ModuleOp) -> int:
    """One blob for the whole module: functions never share an offset by accident.
    Returns the blob's size in bytes."""
    functions = [f for f in module.ops if isinstance(f, FuncOp) and _packable(f)]
    # Weights of one type whose bytes are equal share a place; bytes are
    # compared, not hashed: hashing ResNet-50's 100 MB took longer than the
    # copies, and unequal weights differ within their first bytes.
    places: dict[Attribute, list[tuple[bytes, int, WeightOp]]] = {}
    by_function: dict[FuncOp, list[tuple[WeightOp, int]]] = {f: [] for f in functions}
    size = 0
    for func in functions:
        for op in func.walk():
            if not isinstance(op, WeightOp):
                continue
            data = op.value.data.data
            same_type = places.setdefault(op.result.type, [])
            offset = next((o for d, o, _ in same_type if d == data), None)
            if offset is None:
                offset = size
                same_type.append((data, offset, op))
                size = align(size + byte_size(op.result.type))
            by_function[func].append((op, offset))
    blob = aligned_zeros(size or ALIGNMENT)
    for same_type in places.values():
        for _, offset, op in same_type:
            data = _weight_bytes(op)
            blob[offset : offset + data.size] = data
    _BLOBS[module] = blob
    for func, weights in by_function.items():
        _view_weights(func, weights, size)
    return size


def _weight_bytes(op: WeightOp) -> np.ndarray:
    """The bytes `op` puts in the blob. A `dense` attribute holds them already
    (little-endian, C order), so they are viewed, not converted: copying
    ResNet-50's 100 MB through NumPy arrays first took longer than the rest
    of the pass. A splat is expanded, and a bool made 0 or 1."""
    raw = op.value.data.data
    result_type = op.result.type
    assert isinstance(result_type, MemRefType)
    if result_type.element_type != i1 and len(raw) == byte_size(result_type):
        return np.frombuffer(raw, dtype=np.uint8)
    array = np.ascontiguousarray(array_from_dense(op.value))
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return array.reshape(-1).view(np.uint8)


def _view_weights(func: FuncOp, weights: list[tuple[WeightOp, int]], size: int) -> None:
    """Adds the weights argument to `func` and views each weight in it."""
    blob = add_abi_argument(func, WEIGHTS_ARG, size)
    func.attributes["loop.weights_bytes"] = IntegerAttr(size, i64)
    entry = func.body.block
    offsets = sorted({offset for _, offset in weights})
    constants = [arith.ConstantOp(IntegerAttr(offset, IndexType())) for offset in offsets]
    entry.insert_ops_before(constants, entry.first_op)  # type: ignore[arg-type]
    by_offset: dict[int, SSAValue] = {o: c.result for o, c in zip(offsets, constants)}
    for op, offset in weights:
        result_type = op.result.type
        assert isinstance(result_type, MemRefType)
        view = memref.ViewOp(blob, by_offset[offset], [], result_type)
        view.result.name_hint = op.result.name_hint
        Rewriter.replace_op(op, view)


def weights_blob(module: ModuleOp) -> np.ndarray:
    """The packed weights of every function, as one aligned uint8 array."""
    if module not in _BLOBS:
        raise ValueError("loop-pack-weights must run before weights_blob")
    return _BLOBS[module]


class PackWeightsPass(ModulePass):
    """Lays out the weights blob and views each `loop.weight` in it."""

    name = "loop-pack-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pack_module(op)
