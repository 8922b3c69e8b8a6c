"""The LLVM type of each loop-level type, shared by every piece of the lowering.

`index` is i64; a buffer element of type `i1` is one byte holding 0 or 1, as
NumPy stores booleans, and one of a narrower integer (`i4`, `ui2`, ...) a
byte holding it zero-extended, as ml_dtypes stores them; the narrow floats
(`bf16`, the float8 types, `f4E2M1FN`), which Ember only stores and converts
(docs/types.md), are the integers of their width (`i16`, `i8`, `i4`), their
conversions integer arithmetic (`graph_to_tensor/float_conversions.py`);
pointers are opaque.
"""

from __future__ import annotations

from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
    i8,
    i64,
)
from xdsl.ir import Attribute

PTR = llvm.LLVMPointerType()
FLOATS = (Float16Type, Float32Type, Float64Type)


NARROW_FLOATS = (BFloat16Type, Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
                 Float8E5M2FNUZType, Float8E8M0FNUType, Float4E2M1FNType)  # fmt: skip


def scalar_type(t: Attribute) -> Attribute:
    """The LLVM type of a scalar of type `t` (one that `lowerable` accepts)."""
    if isinstance(t, NARROW_FLOATS):
        return IntegerType(t.bitwidth)
    return i64 if isinstance(t, IndexType) else t


def llvm_vector(t: VectorType) -> VectorType:
    """The LLVM vector type of `t`: a narrow float's lanes are its integers."""
    element = scalar_type(t.element_type)
    return t if element == t.element_type else VectorType(element, t.get_shape())


@cache
def lowerable(t: Attribute) -> bool:
    """Whether values of type `t` have an LLVM type here (asked for every
    operand of every op: cached, types being immutable)."""
    if isinstance(t, MemRefType):
        return lowerable(t.element_type)
    if isinstance(t, VectorType):  # one-dimensional, fixed length: an LLVM vector
        return (t.get_num_dims() == 1 and not t.get_num_scalable_dims()
                and lowerable(t.element_type) and memory_type(t.element_type) == scalar_type(t.element_type))  # fmt: skip
    return isinstance(t, (IndexType, *FLOATS, *NARROW_FLOATS)) or (
        isinstance(t, IntegerType) and t.width.data <= 64
    )


def element_of(t: Attribute) -> Attribute:
    """A buffer's or a vector's element type; a scalar's own."""
    return t.element_type if isinstance(t, MemRefType | VectorType) else t


def memory_type(t: Attribute) -> Attribute:
    """The LLVM type of a buffer element: one of less than a byte (`i1`,
    `i4`, `f4E2M1FN`) is a byte, as in NumPy and ml_dtypes."""
    llvm_type = scalar_type(t)
    if isinstance(llvm_type, IntegerType) and llvm_type.width.data < 8:
        return i8
    return llvm_type


def width(t: Attribute) -> int:
    assert isinstance(t, IntegerType)
    return t.width.data


def suffix(t: Attribute) -> str:
    """The type part of an overloaded intrinsic's name: `f32`, `i64`, ...,
    `v16f32` for a vector (`llvm.maximum.v16f32` computes lane by lane)."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{suffix(t.element_type)}"
    return f"i{width(t)}" if isinstance(t, IntegerType) else f"f{t.bitwidth}"  # type: ignore[attr-defined]
