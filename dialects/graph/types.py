"""Element types and attribute values: the bridge between IR, NumPy and ONNX.

Ember's `graph` dialect uses builtin types (`tensor<1x3x224x224xf32>`, with
`?` for unknown dims). This module maps element types between xDSL, NumPy
and ONNX's TensorProto enum (every numeric type ONNX defines: the narrow
floats `bf16`, `f8E4M3FN`, `f8E4M3FNUZ`, `f8E5M2`, `f8E5M2FNUZ`, `f8E8M0FNU`,
`f4E2M1FN`
and the narrow integers `i4`/`ui4`/`i2`/`ui2` are `ml_dtypes` arrays in
NumPy, one element per byte, as onnx's own `numpy_helper` gives them;
docs/types.md), converts attribute values between their IR and
Python forms (see `spec.AttrKind`), and moves tensor data into and out of
`dense` attributes without going through Python lists, so that 100 MB of
weights cost a copy, not a minute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
from onnx import TensorProto
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float4E2M1FNType,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    bf16,
    f8E4M3FN,
    f8E4M3FNUZ,
    f8E5M2,
    f8E5M2FNUZ,
    f8E8M0FNU,
    f16,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, TypeAttribute
from xdsl.irdl import AnyOf, BaseAttr

from ember.dialects.graph.dims import dim_text, symbolic_type
from ember.dialects.graph.spec import AttrKind
from ember.dialects.graph.symbolic import Dim
from ember.errors import EmberError

DYNAMIC = DYNAMIC_INDEX
"""The value of an unknown (`?`) dimension in a shape tuple."""

Shape = tuple[int, ...]

f4E2M1FN = Float4E2M1FNType()
"""ONNX's FLOAT4E2M1 (xDSL's builtin has the type but no instance)."""

NARROW_FLOATS = (bf16, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU, f4E2M1FN)
"""Float types Ember stores but does not compute in: a value of one is
converted to f32 (exactly) to take part in arithmetic, and an f32 result
back with ONNX's rounding (docs/types.md)."""

_ELEMENT_TYPES: list[tuple[TypeAttribute, Any, int]] = [
    (f32, np.float32, TensorProto.FLOAT),
    (f64, np.float64, TensorProto.DOUBLE),
    (f16, np.float16, TensorProto.FLOAT16),
    (i64, np.int64, TensorProto.INT64),
    (IntegerType(32), np.int32, TensorProto.INT32),
    (IntegerType(16), np.int16, TensorProto.INT16),
    (IntegerType(8), np.int8, TensorProto.INT8),
    (IntegerType(8, Signedness.UNSIGNED), np.uint8, TensorProto.UINT8),
    (IntegerType(16, Signedness.UNSIGNED), np.uint16, TensorProto.UINT16),
    (IntegerType(32, Signedness.UNSIGNED), np.uint32, TensorProto.UINT32),
    (IntegerType(64, Signedness.UNSIGNED), np.uint64, TensorProto.UINT64),
    (i1, np.bool_, TensorProto.BOOL),
    (bf16, ml_dtypes.bfloat16, TensorProto.BFLOAT16),
    (f8E4M3FN, ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN),
    (f8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ),
    (f8E5M2, ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2),
    (f8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ),
    (f8E8M0FNU, ml_dtypes.float8_e8m0fnu, TensorProto.FLOAT8E8M0),
    (f4E2M1FN, ml_dtypes.float4_e2m1fn, TensorProto.FLOAT4E2M1),
    (IntegerType(4), ml_dtypes.int4, TensorProto.INT4),
    (IntegerType(4, Signedness.UNSIGNED), ml_dtypes.uint4, TensorProto.UINT4),
    (IntegerType(2), ml_dtypes.int2, TensorProto.INT2),
    (IntegerType(2, Signedness.UNSIGNED), ml_dtypes.uint2, TensorProto.UINT2),
]

_NARROW_INTS = {
    np.dtype(t) for t in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2)
}

_BY_IR = {ir: (np.dtype(dt), onnx) for ir, dt, onnx in _ELEMENT_TYPES}
_BY_NUMPY = {np.dtype(dt): ir for ir, dt, _ in _ELEMENT_TYPES}
_BY_ONNX = {onnx: ir for ir, _, onnx in _ELEMENT_TYPES}
_ONNX_NAMES = {v: k for k, v in TensorProto.DataType.items()}


class UnsupportedTypeError(ValueError):
    pass


class ElidedConstantError(EmberError, ValueError):
    """Constant data is needed but the IR only holds `dense_resource<__elided__>`
    (it was printed with `--elide-large-constants`)."""


ELIDED_ADVICE = ("the IR was written with --elide-large-constants (dense_resource<__elided__>); "
                 "give this step IR written without it")  # fmt: skip


def element_type_from_onnx(onnx_type: int) -> TypeAttribute:
    if onnx_type not in _BY_ONNX:
        name = _ONNX_NAMES.get(onnx_type, str(onnx_type))
        raise UnsupportedTypeError(f"unsupported ONNX element type {name}")
    return _BY_ONNX[onnx_type]


def element_type_from_numpy(dtype: np.dtype[Any]) -> TypeAttribute:
    if dtype not in _BY_NUMPY:
        raise UnsupportedTypeError(f"unsupported NumPy dtype {dtype}")
    return _BY_NUMPY[dtype]


def is_narrow_float_dtype(dtype: np.dtype[Any]) -> bool:
    """An ml_dtypes float (bfloat16, float8, float4): NumPy's kind "V"."""
    return dtype in _BY_NUMPY and is_narrow_float(_BY_NUMPY[dtype])


def is_narrow_int_dtype(dtype: np.dtype[Any]) -> bool:
    """An ml_dtypes integer narrower than a byte (int4, uint4, int2, uint2)."""
    return dtype in _NARROW_INTS


def numpy_dtype(element_type: Attribute) -> np.dtype[Any]:
    if element_type not in _BY_IR:
        raise UnsupportedTypeError(f"element type {element_type} has no NumPy equivalent")
    return _BY_IR[element_type][0]


def onnx_type_of(element_type: Attribute) -> int:
    if element_type not in _BY_IR:
        raise UnsupportedTypeError(f"element type {element_type} has no ONNX equivalent")
    return _BY_IR[element_type][1]


MAX_TENSOR_BYTES = 1 << 34
"""Ember's limit on one tensor: 16 GiB. A model input, weight or op result
larger than this is refused at import with a diagnostic naming it, before
anything is allocated (shape inference only computes the type). It lies far
above what the models Ember targets need (ONNX caps a whole model's weights at
2 GiB) and far below the terabytes a bad shape can ask for."""


def element_bytes(element_type: Attribute) -> int:
    """Bytes per element in memory (a bool, an i4 or an f4 takes a byte, as in
    NumPy and ml_dtypes)."""
    return numpy_dtype(element_type).itemsize if element_type in _BY_IR else 8


def size_limit_problem(shape: Shape | list[int], itemsize: int) -> str | None:
    """Why a tensor of this static shape breaks `MAX_TENSOR_BYTES`, or None.
    Unknown dims are left to be checked when they are known."""
    count = 1
    for dim in shape:
        if dim != DYNAMIC:
            count *= max(dim, 0)
    if count * itemsize <= MAX_TENSOR_BYTES:
        return None
    return (
        f"a tensor of shape {format_shape(tuple(shape))} holds {count} elements "
        f"({count * itemsize / 2**30:.4g} GiB), over Ember's limit of "
        f"{MAX_TENSOR_BYTES >> 30} GiB per tensor"
    )


def type_size_problem(value_type: Attribute) -> str | None:
    """`size_limit_problem` for a tensor type."""
    if not isinstance(value_type, TensorType):
        return None
    return size_limit_problem(shape_of(value_type), element_bytes(value_type.element_type))


def is_float(element_type: Attribute) -> bool:
    return element_type in (f16, f32, f64, *NARROW_FLOATS)


def is_narrow_float(element_type: Attribute) -> bool:
    """A float type held only in storage (`NARROW_FLOATS`)."""
    return element_type in NARROW_FLOATS


def tensor_type(element_type: Attribute, shape: Sequence[Dim]) -> TensorType:
    """A tensor type; symbolic dims (`SymExpr`) become `?` with a `#graph.dims` encoding."""
    return symbolic_type(element_type, shape)


def shape_of(value_type: Attribute) -> Shape:
    """The dims of a tensor type as ints (`DYNAMIC` for every `?`, symbolic or
    not; `dims.symbolic_shape` reads the symbols)."""
    assert isinstance(value_type, TensorType)
    return tuple(value_type.get_shape())


def format_shape(shape: Sequence[Dim]) -> str:
    """`1x3x224x224`, `Nx(2 * S)x768`, `?x4`; `scalar` for rank 0."""
    texts = [dim_text(d) for d in shape]
    return "x".join(f"({t})" if " " in t else t for t in texts) or "scalar"


# ---------------------------------------------------------------- dense data


def dense_from_array(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A `dense` attribute holding `array`'s bytes (little-endian, C order)."""
    element_type = element_type_from_numpy(array.dtype)
    data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    if array.dtype == np.bool_ or array.dtype in _NARROW_INTS:
        # A byte per element, narrow integers sign-extended: the printed values are theirs.
        data = data.astype(np.uint8 if array.dtype.name.startswith("u") else np.int8)
    return DenseIntOrFPElementsAttr(
        TensorType(element_type, list(array.shape)), BytesAttr(data.tobytes())
    )


def array_from_dense(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The NumPy array of a `dense` attribute (a splat is expanded): a
    read-only view of the attribute's bytes where their type is the
    array's (a weight is not copied each time a pass reads it), else a
    converted copy."""
    value_type = attr.get_type()
    assert isinstance(value_type, TensorType)
    dtype = numpy_dtype(value_type.element_type)
    storage = np.int8 if dtype == np.bool_ else dtype
    flat = np.frombuffer(attr.data.data, dtype=np.dtype(storage).newbyteorder("<"))
    shape = tuple(value_type.get_shape())
    count = int(np.prod(shape)) if shape else 1
    if flat.size == 1 and count != 1:
        flat = np.broadcast_to(flat, (count,))
    return flat.astype(dtype, copy=False).reshape(shape)


# ----------------------------------------------------------- attribute values


def attribute_from_value(kind: AttrKind, value: Any) -> Attribute:
    """The IR attribute for a Python attribute value of the given kind."""
    match kind:
        case AttrKind.INT:
            return IntegerAttr(int(value), i64)
        case AttrKind.INTS:
            return DenseArrayBase.from_list(i64, [int(v) for v in value])
        case AttrKind.FLOAT:
            return FloatAttr(float(value), f32)
        case AttrKind.FLOATS:
            return DenseArrayBase.from_list(f32, [float(v) for v in value])
        case AttrKind.STRING:
            return StringAttr(value.decode() if isinstance(value, bytes) else str(value))
        case AttrKind.STRINGS:
            return ArrayAttr([StringAttr(v.decode() if isinstance(v, bytes) else str(v))
                              for v in value])  # fmt: skip
        case AttrKind.TENSOR:
            return dense_from_array(np.asarray(value))
        case AttrKind.TYPE:
            assert isinstance(value, TypeAttribute)
            return value


def value_from_attribute(kind: AttrKind, attr: Attribute) -> Any:
    """The Python value of an IR attribute of the given kind."""
    match kind:
        case AttrKind.INT:
            assert isinstance(attr, IntegerAttr)
            return attr.value.data
        case AttrKind.INTS | AttrKind.FLOATS:
            assert isinstance(attr, DenseArrayBase)
            return list(attr.get_values())
        case AttrKind.FLOAT:
            assert isinstance(attr, FloatAttr)
            return float(attr.value.data)
        case AttrKind.STRING:
            assert isinstance(attr, StringAttr)
            return attr.data
        case AttrKind.STRINGS:
            assert isinstance(attr, ArrayAttr)
            return [s.data for s in attr.data if isinstance(s, StringAttr)]
        case AttrKind.TENSOR:
            if isinstance(attr, DenseResourceAttr):
                raise ElidedConstantError(
                    f"constant data '{attr.resource_handle.data}' is not in the IR: {ELIDED_ADVICE}"
                )
            assert isinstance(attr, DenseIntOrFPElementsAttr)
            return array_from_dense(attr)
        case AttrKind.TYPE:
            return attr


def attribute_constraint(kind: AttrKind) -> Any:
    """The attribute constraint a property of this kind must satisfy."""
    if kind is AttrKind.TENSOR:
        # An elided constant (`dense_resource<__elided__>`) still parses and verifies.
        return AnyOf((BaseAttr(DenseIntOrFPElementsAttr), BaseAttr(DenseResourceAttr)))
    return {
        AttrKind.INT: IntegerAttr,
        AttrKind.INTS: DenseArrayBase,
        AttrKind.FLOAT: FloatAttr,
        AttrKind.FLOATS: DenseArrayBase,
        AttrKind.STRING: StringAttr,
        AttrKind.STRINGS: ArrayAttr,
        AttrKind.TENSOR: DenseIntOrFPElementsAttr,
        AttrKind.TYPE: TypeAttribute,
    }[kind]
