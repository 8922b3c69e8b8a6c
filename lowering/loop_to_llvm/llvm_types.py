"""The LLVM type of each loop-level type, shared by every piece of the lowering.

`index` is i64; a buffer element of type `i1` is one byte holding 0 or 1, as
NumPy stores booleans; pointers are opaque.
"""

from __future__ import annotations

from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute

PTR = llvm.LLVMPointerType()
FLOATS = (Float16Type, Float32Type, Float64Type)


def scalar_type(t: Attribute) -> Attribute:
    """The LLVM type of a scalar of type `t` (one that `lowerable` accepts)."""
    return i64 if isinstance(t, IndexType) else t


@cache
def lowerable(t: Attribute) -> bool:
    """Whether values of type `t` have an LLVM type here (asked for every
    operand of every op: cached, types being immutable)."""
    if isinstance(t, MemRefType):
        return lowerable(t.element_type)
    if isinstance(t, VectorType):  # one-dimensional, fixed length: an LLVM vector
        return t.get_num_dims() == 1 and not t.get_num_scalable_dims() and lowerable(t.element_type)
    return isinstance(t, (IndexType, *FLOATS)) or isinstance(t, IntegerType) and t.width.data <= 64


def memory_type(t: Attribute) -> Attribute:
    """The LLVM type of a buffer element: `i1` is a byte, as in NumPy."""
    return i8 if t == i1 else scalar_type(t)


def width(t: Attribute) -> int:
    assert isinstance(t, IntegerType)
    return t.width.data


def suffix(t: Attribute) -> str:
    """The type part of an overloaded intrinsic's name: `f32`, `i64`, ...,
    `v16f32` for a vector (`llvm.maximum.v16f32` computes lane by lane)."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{suffix(t.element_type)}"
    return f"i{width(t)}" if isinstance(t, IntegerType) else f"f{t.bitwidth}"  # type: ignore[attr-defined]
