"""`loop-pack-weights`: lays out every `loop.weight` in one weights blob.

Each weight gets a byte `offset` (aligned to 64 bytes) in the one blob of
the module that the compiled code receives by pointer; identical weights
share one place. Each function gets `loop.weights_bytes` (the blob's size). `weights_blob(module)` builds the blob
itself (NumPy bytes) from the offsets, so weights never pass through code.
"""

from __future__ import annotations

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from ember.dialects.graph.types import array_from_dense
from ember.dialects.loop import ALIGNMENT, WeightOp, align, aligned_zeros, byte_size


def pack_module(module: ModuleOp) -> int:
    """One blob for the whole module: functions never share an offset by accident."""
    offsets: dict[object, int] = {}
    size = 0
    for op in module.walk():
        if not isinstance(op, WeightOp):
            continue
        key = (op.value, op.result.type)
        if key not in offsets:
            offsets[key] = size
            size = align(size + byte_size(op.result.type))
        op.offset = IntegerAttr(offsets[key], i64)
    for func in module.walk():
        if isinstance(func, FuncOp) and not func.is_declaration:
            func.attributes["loop.weights_bytes"] = IntegerAttr(size, i64)
    return size


def weights_blob(module: ModuleOp) -> np.ndarray:
    """The packed weights of every function, as one aligned uint8 array."""
    size = 0
    weights = [op for op in module.walk() if isinstance(op, WeightOp)]
    for op in weights:
        if op.offset is None:
            raise ValueError("loop-pack-weights must run before weights_blob")
        size = max(size, op.offset.value.data + byte_size(op.result.type))
    blob = aligned_zeros(align(size) or ALIGNMENT)
    for op in weights:
        array = np.ascontiguousarray(array_from_dense(op.value))
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        data = array.reshape(-1).view(np.uint8)
        start = op.offset.value.data  # type: ignore[union-attr]
        blob[start : start + data.size] = data
    return blob


class PackWeightsPass(ModulePass):
    """Assigns each `loop.weight` its byte offset in the weights blob."""

    name = "loop-pack-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pack_module(op)
