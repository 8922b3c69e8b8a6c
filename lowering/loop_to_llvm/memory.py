"""Memory addressing: views, loads and stores to pointer arithmetic.

A memref lowers to a base pointer and a strided layout (`StridedLayout`:
offset, sizes and strides in elements, each static or an i64 value): the
static parts come from the type (`memref<4x8xf32, strided<[8, 1], offset:
?>>`), the dynamic ones from where the memref came from (the ABI's extra
arguments, a view's operands). `memref.load`/`memref.store` index by one
`getelementptr` on the linear element index `offset + i*stride0 +
j*stride1 + ...`; `memref.dim` reads a size. Views never move data:

- `memref.view` of an i8 buffer (the arena, the weights blob) is the base
  pointer plus its byte shift, row-major with its sizes;
- `memref.subview` keeps the base pointer and composes offset and strides;
- `memref.reinterpret_cast` keeps the base pointer and takes the layout it
  names.

An `i1` element is a byte. `memref.alloc` and `loop.weight` have no address
until `loop-plan-memory` and `loop-pack-weights` turn them into views; a
static `memref.alloca` (a loop's scratch) is an `alloca` in the function's
entry block.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, i8, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects import loop
from ember.dialects.quick_ops import quick
from ember.lowering.loop_to_llvm.builder import (
    FunctionBuilder,
    HandlerTable,
    Index,
    StridedLayout,
    registrar,
)
from ember.lowering.loop_to_llvm.llvm_types import memory_type, scalar_type

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


def static_layout(memref_type: Attribute) -> StridedLayout:
    """The layout a memref type states, with DYNAMIC_INDEX where it leaves a
    part dynamic (an identity layout's strides follow from dynamic sizes)."""
    assert isinstance(memref_type, MemRefType)
    strides, offset = memref_type.get_strides(), memref_type.get_offset()
    shape = list(memref_type.get_shape())
    if strides is None:
        raise DiagnosticException(f"{memref_type} has no strided layout")
    return StridedLayout(
        DYNAMIC_INDEX if offset is None else offset,
        shape,  # type: ignore[arg-type]
        [DYNAMIC_INDEX if s is None else s for s in strides],
    )


def layout_of(lw: FunctionBuilder, buffer: SSAValue) -> StridedLayout:
    """The layout of a lowered memref: recorded where dynamic, else its type's."""
    recorded = lw.layouts.get(buffer)
    if recorded is not None:
        return recorded
    layout = static_layout(buffer.type)
    if _has_dynamic(layout):
        raise DiagnosticException(
            f"{lw.pass_name}: the dynamic parts of {buffer.type} are not known here"
        )
    return layout


def _has_dynamic(layout: StridedLayout) -> bool:
    return DYNAMIC_INDEX in (layout.offset, *layout.sizes, *layout.strides)


def row_major_strides(lw: FunctionBuilder, sizes: Sequence[Index]) -> list[Index]:
    strides: list[Index] = [1] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        strides[i] = lw.mul(strides[i + 1], sizes[i + 1])
    return strides


def _record(lw: FunctionBuilder, buffer: SSAValue, layout: StridedLayout) -> None:
    """Keeps `layout` for `buffer` unless its type states all of it."""
    if static_layout(buffer.type) != layout:
        lw.layouts[buffer] = layout


def _constant_or_value(lw: FunctionBuilder, value: SSAValue) -> Index:
    """An index operand as an int when an `arith.constant` defines it."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return lw.values[value]


def _mixed(lw: FunctionBuilder, static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Index]:
    """Static entries with each DYNAMIC_INDEX taken, in order, from `dynamic`."""
    values = iter(dynamic)
    return [_constant_or_value(lw, next(values)) if s == DYNAMIC_INDEX else s for s in static]


@_lowers(memref.AllocOp, loop.WeightOp)
def _unplaced(lw: FunctionBuilder, op: Operation) -> None:
    needed = "loop-plan-memory" if isinstance(op, memref.AllocOp) else "loop-pack-weights"
    raise DiagnosticException(
        f"{lw.pass_name}: {op.name} : {op.results[0].type} has no address; run {needed} first"
    )


@_lowers(memref.AllocaOp)
def _alloca(lw: FunctionBuilder, op: Operation) -> SSAValue:
    """A static scratch buffer: one `alloca` in the entry block, whatever
    loop asks for it (`contract_buffers` puts scratch in loop bodies)."""
    assert isinstance(op, memref.AllocaOp)
    memref_type = op.memref.type
    assert isinstance(memref_type, MemRefType)
    if op.dynamic_sizes or not memref_type.has_static_shape():
        raise DiagnosticException(f"{lw.pass_name}: {op.name} of dynamic size is not supported")
    count = 1
    for size in memref_type.get_shape():
        count *= size
    alignment = op.alignment.value.data if op.alignment is not None else 0
    element = memory_type(memref_type.element_type)
    scratch = llvm.AllocaOp(lw.const(count, i64), element, alignment=alignment)
    # As an opaque pointer, like every other buffer's (llvmlite types an alloca's).
    address = llvm.BitcastOp(scratch.res, llvm.LLVMPointerType())
    lw.emit_in_entry(address)
    lw.emit_in_entry(scratch)  # above the cast
    return address.result


@_lowers(memref.ViewOp)
def _view(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, memref.ViewOp)
    shift = _constant_or_value(lw, op.byte_shift)
    if isinstance(shift, int) and shift >= 2**31:
        shift = lw.index(shift)
    base = lw.values[op.source]
    pointer = lw.emit(
        llvm.GEPOp.from_mixed_indices(base, [shift], i8, result_type=base.type, inbounds=True)  # type: ignore[arg-type]
    )
    result_type = op.result.type
    assert isinstance(result_type, MemRefType)
    sizes = _mixed(lw, result_type.get_shape(), op.sizes)
    _record(lw, op.result, StridedLayout(0, sizes, row_major_strides(lw, sizes)))
    return pointer


@_lowers(memref.SubviewOp)
def _subview(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, memref.SubviewOp)
    source = layout_of(lw, op.source)
    offsets = _mixed(lw, op.static_offsets.get_values(), op.offsets)
    sizes = _mixed(lw, op.static_sizes.get_values(), op.sizes)
    strides = _mixed(lw, op.static_strides.get_values(), op.strides)
    result_rank = len(op.result.type.get_shape())  # type: ignore[attr-defined]
    if result_rank != len(sizes):
        raise DiagnosticException(f"{lw.pass_name}: rank-reducing memref.subview is not supported")
    offset = source.offset
    for start, stride in zip(offsets, source.strides):
        offset = lw.add(offset, lw.mul(start, stride))
    composed = [lw.mul(s, t) for s, t in zip(source.strides, strides)]
    _record(lw, op.result, StridedLayout(offset, sizes, composed))
    return lw.values[op.source]


@_lowers(memref.ReinterpretCastOp)
def _reinterpret_cast(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, memref.ReinterpretCastOp)
    (offset,) = _mixed(lw, op.static_offsets.get_values(), op.offsets)
    sizes = _mixed(lw, op.static_sizes.get_values(), op.sizes)
    strides = _mixed(lw, op.static_strides.get_values(), op.strides)
    _record(lw, op.result, StridedLayout(offset, sizes, strides))
    return lw.values[op.source]


@_lowers(memref.DimOp)
def _dim(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, memref.DimOp)
    dim = _constant_or_value(lw, op.index)
    if not isinstance(dim, int):
        raise DiagnosticException(f"{lw.pass_name}: memref.dim needs a constant dim")
    return lw.index(layout_of(lw, op.source).sizes[dim])


def element_pointer(lw: FunctionBuilder, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """`&buffer[i, j, ...]`: GEP by the linear index `offset + i*stride0 + j*stride1 + ...`."""
    layout = layout_of(lw, buffer)
    linear: Index = layout.offset
    for index, stride in zip(indices, layout.strides):
        linear = lw.add(linear, lw.mul(lw.values[index], stride))
    if linear == 0:  # a rank-0 buffer, or element 0
        return lw.values[buffer]
    element = memory_type(buffer.type.element_type)  # type: ignore[attr-defined]
    return lw.element_address(lw.values[buffer], lw.index(linear), element)


@_lowers(memref.LoadOp)
def _load(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, memref.LoadOp)
    pointer = element_pointer(lw, op.memref, op.indices)
    stored, held = memory_type(op.res.type), scalar_type(op.res.type)
    value = lw.emit(quick(lambda: llvm.LoadOp(pointer, stored), llvm.LoadOp, llvm.LoadOp,
                          (pointer,), (stored,)))  # fmt: skip
    return lw.emit(llvm.TruncOp(value, held)) if stored != held else value


@_lowers(memref.StoreOp)
def _store(lw: FunctionBuilder, op: Operation) -> None:
    assert isinstance(op, memref.StoreOp)
    value = lw.values[op.value]
    stored = memory_type(op.value.type)
    if stored != scalar_type(op.value.type):  # a byte holding fewer bits, zero-extended
        value = lw.emit(llvm.ZExtOp(value, stored))
    pointer = element_pointer(lw, op.memref, op.indices)
    lw.emit(quick(lambda: llvm.StoreOp(value, pointer), llvm.StoreOp, llvm.StoreOp,
                  (value, pointer), ()))  # fmt: skip
