"""Elementwise kernels: unary maths and activations, binary ops, variadic ops, Where, Clip, Cast.

Floating-point unary maths is evaluated in float64 and rounded back to the input dtype once.
Binary arithmetic follows numpy broadcasting and keeps the dtype of the first operand.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ember.dialects.graph.types import is_narrow_float_dtype, is_narrow_int_dtype

from ._registry import Attrs, Inputs, Kernel, arg, register, register_all, wide

Unary = Callable[[np.ndarray, Attrs], np.ndarray]
Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]

_erf_obj = np.frompyfunc(math.erf, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_erf_obj(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def _gelu(x: np.ndarray, a: Attrs) -> np.ndarray:
    if a.get("approximate", "none") == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


# op_type -> f(x, attrs); x arrives widened to float64 when floating point.
_UNARY: dict[str, Unary] = {
    "Abs": lambda x, a: np.abs(x),
    "Neg": lambda x, a: np.negative(x),
    "Relu": lambda x, a: np.maximum(x, 0),
    "Sigmoid": lambda x, a: _sigmoid(x),
    "Tanh": lambda x, a: np.tanh(x),
    "Exp": lambda x, a: np.exp(x),
    "Log": lambda x, a: np.log(x),
    "Sqrt": lambda x, a: np.sqrt(x),
    "Reciprocal": lambda x, a: 1.0 / x,
    "Floor": lambda x, a: np.floor(x),
    "Ceil": lambda x, a: np.ceil(x),
    "Round": lambda x, a: np.round(x),  # numpy rounds half to even, as ONNX requires
    "Sign": lambda x, a: np.sign(x),
    "Erf": lambda x, a: _erf(x),
    "Sin": lambda x, a: np.sin(x),
    "Cos": lambda x, a: np.cos(x),
    "Tan": lambda x, a: np.tan(x),
    "Asin": lambda x, a: np.arcsin(x),
    "Acos": lambda x, a: np.arccos(x),
    "Atan": lambda x, a: np.arctan(x),
    "Sinh": lambda x, a: np.sinh(x),
    "Cosh": lambda x, a: np.cosh(x),
    "Softplus": lambda x, a: _softplus(x),
    "Softsign": lambda x, a: x / (1.0 + np.abs(x)),
    "Not": lambda x, a: np.logical_not(x),
    "IsNaN": lambda x, a: np.isnan(x),
    "HardSwish": lambda x, a: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "Mish": lambda x, a: x * np.tanh(_softplus(x)),
    "LeakyRelu": lambda x, a: np.where(x < 0, a["alpha"] * x, x),
    "Elu": lambda x, a: np.where(x < 0, a["alpha"] * (np.exp(x) - 1.0), x),
    "Selu": lambda x, a: a["gamma"] * np.where(x > 0, x, a["alpha"] * (np.exp(x) - 1.0)),
    "HardSigmoid": lambda x, a: np.clip(a["alpha"] * x + a["beta"], 0.0, 1.0),
    "Gelu": _gelu,
    "Celu": lambda x, a: (
        np.maximum(x, 0.0) + np.minimum(0.0, a["alpha"] * (np.exp(x / a["alpha"]) - 1.0))
    ),
    "ThresholdedRelu": lambda x, a: np.where(x > a["alpha"], x, 0.0),
    "Acosh": lambda x, a: np.arccosh(x),
    "Asinh": lambda x, a: np.arcsinh(x),
    "Atanh": lambda x, a: np.arctanh(x),
    "Swish": lambda x, a: x * _sigmoid(a["alpha"] * x),
    "Shrink": lambda x, a: np.where(
        x < -a["lambd"], x + a["bias"], np.where(x > a["lambd"], x - a["bias"], 0)
    ),
    "BitwiseNot": lambda x, a: np.invert(x),
    "IsInf": lambda x, a: (
        (np.isposinf(x) & bool(a["detect_positive"]))
        | (np.isneginf(x) & bool(a["detect_negative"]))
    ),
}


def _unary_kernel(fn: Unary) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        x = np.asarray(inputs[0])
        with np.errstate(all="ignore"):
            y = np.asarray(fn(wide(x), attrs))
        return [y if y.dtype == np.bool_ else y.astype(x.dtype)]

    return kernel


for _op, _fn in _UNARY.items():
    register_all([_op], _unary_kernel(_fn))


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return (a - np.fmod(a, b)) // b  # C semantics: truncate toward zero
    return a / b


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and not (b < 0).any():
        return np.power(a, b)
    return np.power(a.astype(np.float64), b.astype(np.float64))


_BINARY: dict[str, Binary] = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": _int_div,
    "Pow": _pow,
    "PRelu": lambda x, slope: np.where(x < 0, x * slope, x),
    "Equal": np.equal,
    "Less": np.less,
    "LessOrEqual": np.less_equal,
    "Greater": np.greater,
    "GreaterOrEqual": np.greater_equal,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
    "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or,
    "BitwiseXor": np.bitwise_xor,
}


def _binary_kernel(fn: Binary) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
        with np.errstate(all="ignore"):
            y = np.asarray(fn(a, b))
        return [y if y.dtype == np.bool_ else y.astype(a.dtype)]

    return kernel


for _op, _fn2 in _BINARY.items():
    register_all([_op], _binary_kernel(_fn2))


@register("Mod")
def mod(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
    with np.errstate(all="ignore"):
        y = np.fmod(a, b) if attrs.get("fmod", 0) else np.mod(a, b)
    return [np.asarray(y).astype(a.dtype)]


@register("BitShift")
def bit_shift(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """A shift by a negative amount or by the width or more fills: with zeros,
    or with the sign bit for a signed right shift (ONNX opset 28)."""
    x, y = np.broadcast_arrays(np.asarray(inputs[0]), np.asarray(inputs[1]).astype(inputs[0].dtype))
    width = 8 * x.dtype.itemsize
    outside = (y.astype(np.int64) < 0) | (y.astype(np.uint64) >= width)
    shift = np.where(outside, 0, y)
    if attrs["direction"] == "LEFT":
        return [np.where(outside, 0, np.left_shift(x, shift)).astype(x.dtype)]
    fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
    return [np.where(outside, fill, np.right_shift(x, shift)).astype(x.dtype)]


_VARIADIC: dict[str, tuple[Binary, bool]] = {
    # ONNX type: (the fold, whether the result is divided by the operand count)
    "Sum": (np.add, False),
    "Max": (np.maximum, False),
    "Min": (np.minimum, False),
    "Mean": (np.add, True),
}


def _variadic_kernel(fn: Binary, average: bool) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        xs = [np.asarray(x) for x in inputs if x is not None]
        y = np.asarray(functools.reduce(fn, [wide(x) for x in xs]))
        if average:
            y = y / len(xs)
        return [y.astype(np.result_type(*xs))]

    return kernel


for _op, (_fn2, _average) in _VARIADIC.items():
    register_all([_op], _variadic_kernel(_fn2, _average))


@register("Where")
def where(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    cond, x, y = (np.asarray(v) for v in inputs[:3])
    return [np.where(cond, x, y).astype(np.result_type(x, y))]


@register("Clip")
def clip(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    lo, hi = arg(inputs, 1), arg(inputs, 2)
    y = x
    # Ordered comparisons, as onnxruntime: NaN stays NaN, a NaN bound clips nothing.
    if lo is not None:
        low = np.asarray(lo).astype(x.dtype)
        y = np.where(y < low, low, y)
    if hi is not None:
        high = np.asarray(hi).astype(x.dtype)
        y = np.where(high < y, high, y)
    return [np.array(y, dtype=x.dtype)]


_FLOAT8 = {TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
           TensorProto.FLOAT8E5M2FNUZ}  # fmt: skip


def _truncate(x: np.ndarray, width: int) -> np.ndarray:
    """x truncated toward zero to a signed `width`-bit integer; INT_MIN when that
    is out of range or x is NaN (x86's cvttss2si, which onnxruntime uses)."""
    limit = 2.0 ** (width - 1)
    in_range = (x >= -limit) & (x < limit)
    dtype = np.dtype(f"i{width // 8}")
    truncated = np.trunc(np.where(in_range, x, 0)).astype(dtype)
    return np.where(in_range, truncated, np.iinfo(dtype).min)


def float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float to integer as onnxruntime converts (docs/semantics.md): a 32- or
    64-bit conversion (INT_MIN for NaN, infinities and out-of-range values),
    then wrapped to `dtype`. 64-bit unsigned targets (and 32-bit ones from
    f32/f64) convert values at or above 2^(w-1) shifted down by 2^(w-1) and
    set the top bit again."""
    half = x.dtype.itemsize == 2
    x = x.astype(np.float32) if half else x
    bits, unsigned = 8 * dtype.itemsize, dtype.kind == "u"
    width = 64 if bits == 64 or (bits == 32 and unsigned and half) else 32
    result = _truncate(x, width)
    if unsigned and bits == width:
        top = 2.0 ** (width - 1)
        shifted = _truncate(x - top, width) ^ np.iinfo(result.dtype).min
        result = np.where(x >= top, shifted, result)
    return result.astype(dtype)


@register("Cast")
def cast(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Cast to TensorProto type ``to``; float->int truncates toward zero, with
    onnxruntime's results out of range (``float_to_int``). The narrow types are
    ml_dtypes arrays (docs/types.md): a narrow float source is read as f32
    (exactly), and conversions to one round to nearest even once, as onnx's
    reference does.

    ``saturate`` (float8 targets only) clips out-of-range values and infinities to
    the largest finite value of the target (``onnx.numpy_helper.saturate_cast``);
    without it they become infinity or NaN as the type has them. FLOAT8E8M0
    rounds as ``round_mode`` says (``numpy_helper.to_float8e8m0``). STRING is
    unsupported.
    """
    x = np.asarray(inputs[0])
    to = int(attrs["to"])
    if to == TensorProto.STRING or x.dtype == object:
        raise NotImplementedError("Cast from/to STRING is not supported")
    dtype = helper.tensor_dtype_to_np_dtype(to)
    if is_narrow_float_dtype(x.dtype):
        x = x.astype(np.float32)
    with np.errstate(all="ignore"):
        if to in _FLOAT8 and attrs.get("saturate", 1) and x.dtype.kind == "f":
            return [numpy_helper.saturate_cast(x, dtype)]
        if to == TensorProto.FLOAT8E8M0:
            round_mode = attrs.get("round_mode", "up")
            return [numpy_helper.to_float8e8m0(x, bool(attrs.get("saturate", 1)), round_mode)]
        if x.dtype.kind == "f" and dtype.kind in "iu":
            return [float_to_int(x, dtype)]
        if x.dtype.kind == "f" and is_narrow_int_dtype(dtype):
            return [float_to_int(x, np.dtype(np.int32)).astype(dtype)]
        return [x.astype(dtype)]


@register("BitCast")
def bit_cast(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """The bits of each element read as the type ``to`` (of the same size)."""
    x = np.ascontiguousarray(inputs[0])
    return [x.view(helper.tensor_dtype_to_np_dtype(int(attrs["to"])))]
