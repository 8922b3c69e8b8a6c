"""Memory addressing: buffers, views, loads and stores to pointer arithmetic.

`loop.alloc` and `loop.weight` are byte offsets (their `offset`, set by
`loop-plan-memory` and `loop-pack-weights`) into the arena and the weights
blob; `loop.reshape` is the same pointer; `memref.load`/`memref.store` index
a static strided memref by one `getelementptr` on the linear element index
`offset + i*stride0 + j*stride1 + ...`. An `i1` element is a byte.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import MemRefType, i1, i8, i64
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects import loop
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import memory_type

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


@_lowers(loop.AllocOp, loop.WeightOp)
def _buffer(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, loop.AllocOp | loop.WeightOp)
    is_alloc = isinstance(op, loop.AllocOp)
    if op.offset is None:
        needed = "loop-plan-memory" if is_alloc else "loop-pack-weights"
        raise DiagnosticException(
            f"{lw.pass_name}: {op.name} : {op.result.type} has no offset; run {needed} first"
        )
    offset = op.offset.value.data
    index: int | SSAValue = offset if offset < 2**31 else lw.const(offset, i64)
    base = lw.arena if is_alloc else lw.weights
    return lw.emit(llvm.GEPOp.from_mixed_indices(base, [index], i8, inbounds=True))


@_lowers(loop.ReshapeOp)
def _reshape(lw: FunctionBuilder, op: Operation) -> SSAValue:
    return lw.values[op.operands[0]]


def element_pointer(lw: FunctionBuilder, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """`&buffer[i, j, ...]`: GEP by the linear index `i*stride0 + j*stride1 + ...`."""
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    strides, offset = memref_type.get_strides(), memref_type.get_offset()
    if strides is None or None in strides or offset is None:
        raise DiagnosticException(f"{lw.pass_name}: {memref_type} is not a static strided memref")
    linear: SSAValue | None = lw.const(offset, i64) if offset else None
    for index, stride in zip(indices, strides):
        term = lw.values[index]
        if stride != 1:
            term = lw.emit(llvm.MulOp(term, lw.const(stride, i64)))  # type: ignore[arg-type]
        linear = term if linear is None else lw.emit(llvm.AddOp(linear, term))
    if linear is None:  # a rank-0 buffer
        return lw.values[buffer]
    element = memory_type(memref_type.element_type)
    return lw.emit(
        llvm.GEPOp.from_mixed_indices(lw.values[buffer], [linear], element, inbounds=True)
    )


@_lowers(memref.LoadOp)
def _load(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, memref.LoadOp)
    pointer = element_pointer(lw, op.memref, op.indices)
    value = lw.emit(llvm.LoadOp(pointer, memory_type(op.res.type)))
    return lw.emit(llvm.TruncOp(value, i1)) if op.res.type == i1 else value


@_lowers(memref.StoreOp)
def _store(lw: FunctionBuilder, op: Operation) -> None:
    assert isinstance(op, memref.StoreOp)
    value = lw.values[op.value]
    if op.value.type == i1:
        value = lw.emit(llvm.ZExtOp(value, i8))
    lw.emit(llvm.StoreOp(value, element_pointer(lw, op.memref, op.indices)))
