"""QuantizeLinear and DequantizeLinear (opset 21; per tensor, per axis or
blocked; to and from every integer and float8/float4 type),
DynamicQuantizeLinear, the quantised products QLinearConv, QLinearMatMul
and QGemm (integer accumulation, one requantisation:
`ember.dialects.graph.ops_qlinear`) and the integer products ConvInteger
and MatMulInteger (the int32 accumulator itself).

QuantizeLinear divides in float32 and rounds half to even before adding
the zero point and saturating, as ONNX's reference and onnxruntime do;
DequantizeLinear subtracts the zero point in integers and converts once,
so an int32 bias dequantises exactly up to 2^24.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import helper

from ember.dialects.graph.ops_qlinear import requant_multiplier, requantize
from ember.dialects.graph.types import is_narrow_float_dtype

from ._registry import Attrs, Inputs, arg, register
from .elementwise import cast
from .nn import conv


def _along(parameter: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A 1-D parameter shaped to broadcast along `axis` of a rank-`rank` tensor."""
    if parameter.ndim == 0 or rank == 0:
        return parameter
    axis = axis % rank
    return parameter.reshape(-1, *[1] * (rank - axis - 1))


def _applied(parameter: np.ndarray, shape: tuple[int, ...], attrs: Attrs) -> np.ndarray:
    """A scale or zero point broadcastable to x's shape: per tensor, 1-D along
    `axis`, or blocked (`block_size` consecutive elements along `axis` share one)."""
    axis, block = int(attrs.get("axis", 1)), int(attrs.get("block_size", 0))
    if not block or parameter.ndim == 0:
        return _along(parameter, len(shape), axis)
    axis %= len(shape)
    return np.repeat(parameter, block, axis=axis).take(np.arange(shape[axis]), axis=axis)


@register("QuantizeLinear")
def quantize_linear(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """To an integer type: round half to even, add the zero point, saturate.
    To a float8 type: one rounding to it (``saturate`` as Cast's; the zero
    point, which must be 0, is not added, as in onnx's reference); to float4
    the zero point is added before the rounding."""
    x, scale = inputs[0], inputs[1]
    zero_point = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    if zero_point is not None:
        dtype = zero_point.dtype
    elif attrs.get("output_dtype"):
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["output_dtype"]))
    else:
        dtype = np.dtype(np.uint8)
    scaled = x.astype(np.float32) / _applied(scale.astype(np.float32), x.shape, attrs)
    if is_narrow_float_dtype(dtype):
        if zero_point is not None and dtype == ml_dtypes.float4_e2m1fn:
            scaled = scaled + _applied(zero_point.astype(np.float32), x.shape, attrs)
        to = helper.np_dtype_to_tensor_dtype(dtype)
        return cast([scaled], {"to": to, "saturate": attrs.get("saturate", 1)})
    scaled = np.rint(scaled)
    if zero_point is not None:
        scaled = scaled + _applied(zero_point.astype(np.float32), x.shape, attrs)
    info = ml_dtypes.iinfo(dtype)
    return [np.clip(scaled, info.min, info.max).astype(dtype)]


@register("DequantizeLinear")
def dequantize_linear(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """(x - zero_point) * scale: an integer x centred in integers and converted
    once; a float8 x read as f32 (its zero point is 0), a float4 one centred in f32."""
    x, scale = inputs[0], inputs[1]
    zero_point = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    if is_narrow_float_dtype(x.dtype):
        shifted = x.astype(np.float32)
        if zero_point is not None and x.dtype == ml_dtypes.float4_e2m1fn:
            shifted = shifted - _applied(zero_point.astype(np.float32), x.shape, attrs)
    else:
        shifted = x.astype(np.int64)
        if zero_point is not None:
            shifted = shifted - _applied(zero_point.astype(np.int64), x.shape, attrs)
    product = shifted.astype(np.float32) * _applied(scale.astype(np.float32), x.shape, attrs)
    return [product.astype(scale.dtype)]


def _centred(x: np.ndarray, zero_point: np.ndarray | None) -> np.ndarray:
    """`x - zero_point` in int64 (the zero point shaped to broadcast)."""
    if zero_point is None:
        return x.astype(np.int64)
    return x.astype(np.int64) - np.asarray(zero_point, np.int64)


def _per_channel(parameter: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    parameter = np.asarray(parameter)
    return parameter.reshape(shape) if parameter.size > 1 else parameter.reshape(())


def _centred_filters(w: np.ndarray, zero_point: np.ndarray | None) -> np.ndarray:
    """Convolution filters less their zero point (one, or one per output channel)."""
    channel = (-1, *[1] * (w.ndim - 1))
    return _centred(w, None if zero_point is None else _per_channel(zero_point, channel))


def _output(acc: np.ndarray, x_scale: np.ndarray, w_scale: np.ndarray, y_scale: np.ndarray | None,
            y_zero_point: np.ndarray | None, shape: tuple[int, ...], alpha: float = 1.0) -> np.ndarray:  # fmt: skip
    """The int64 accumulator requantised (or, without y_scale, QGemm's float32)."""
    w_scale = _per_channel(w_scale, shape)
    if y_scale is None:
        return (acc.astype(np.float32) * (np.float32(alpha) * np.float32(x_scale)
                                          * w_scale.astype(np.float32))).astype(np.float32)  # fmt: skip
    dtype = np.dtype(np.uint8) if y_zero_point is None else y_zero_point.dtype
    point = np.zeros((), dtype) if y_zero_point is None else y_zero_point
    return requantize(acc, requant_multiplier(x_scale, w_scale, y_scale), point, dtype)


@register("QLinearConv")
def qlinear_conv(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, x_scale, x_point, w, w_scale, w_point, y_scale, y_point = inputs[:8]
    bias = arg(inputs, 8)
    assert x is not None and w is not None and x_scale is not None and w_scale is not None
    weights = _centred_filters(w, w_point)
    acc = conv([_centred(x, x_point), weights, None if bias is None else bias.astype(np.int64)],
               attrs)[0]  # fmt: skip
    return [_output(acc, x_scale, w_scale, y_scale, y_point, (-1, *[1] * (x.ndim - 2)))]


@register("DynamicQuantizeLinear")
def dynamic_quantize_linear(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """uint8 over x's range widened to hold 0, in float32 as onnxruntime
    computes it (`ember.dialects.graph.ops_quantize`)."""
    x = inputs[0]
    assert x is not None
    low = np.minimum(np.float32(0), x.min(initial=np.float32(0)))
    high = np.maximum(np.float32(0), x.max(initial=np.float32(0)))
    scale = np.float32(1) if high == low else np.float32(high - low) / np.float32(255)
    point = np.rint(np.clip(np.float32(0) - low / scale, 0, 255)).astype(np.uint8)
    y = quantize_linear([x, np.asarray(scale, np.float32), np.asarray(point)], {})[0]
    return [y, np.asarray(scale, np.float32), np.asarray(point, np.uint8)]


@register("ConvInteger")
def conv_integer(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, w = inputs[0], inputs[1]
    x_point, w_point = arg(inputs, 2), arg(inputs, 3)
    assert x is not None and w is not None
    acc = conv([_centred(x, x_point), _centred_filters(w, w_point)], attrs)[0]
    return [acc.astype(np.int32)]


@register("MatMulInteger")
def matmul_integer(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """A 1-D a_zero_point holds one value per row of A, a 1-D b_zero_point
    one per column of B (higher ranks broadcast as they are)."""
    a, b = inputs[0], inputs[1]
    a_point, b_point = arg(inputs, 2), arg(inputs, 3)
    assert a is not None and b is not None
    if a_point is not None and a_point.ndim == 1 and a.ndim > 1:
        a_point = a_point.reshape(-1, 1)
    return [np.matmul(_centred(a, a_point), _centred(b, b_point)).astype(np.int32)]


@register("QLinearMatMul")
def qlinear_matmul(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    a, a_scale, a_point, b, b_scale, b_point, y_scale, y_point = inputs[:8]
    assert a is not None and b is not None and a_scale is not None and b_scale is not None
    b_point = None if b_point is None else _per_channel(b_point, (-1,))
    acc = np.matmul(_centred(a, a_point), _centred(b, b_point))
    return [_output(acc, a_scale, b_scale, y_scale, y_point, (-1,))]


@register("QGemm")
def qgemm(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    a, a_scale, a_point, b, b_scale, b_point = inputs[:6]
    bias, y_scale, y_point = arg(inputs, 6), arg(inputs, 7), arg(inputs, 8)
    assert a is not None and b is not None and a_scale is not None and b_scale is not None
    b_axis = 0 if attrs.get("transB", 0) else -1  # the output column's axis of B
    b_shape = (-1, 1) if b_axis == 0 else (-1,)
    a_int = _centred(a, a_point)
    b_int = _centred(b, None if b_point is None else _per_channel(b_point, b_shape))
    acc = np.matmul(a_int.T if attrs.get("transA", 0) else a_int,
                    b_int.T if attrs.get("transB", 0) else b_int)  # fmt: skip
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    alpha = float(attrs.get("alpha", 1.0))
    if y_scale is None:
        return [_output(acc, a_scale, b_scale, None, None, (-1,), alpha)]
    return [_output(acc, np.float32(alpha) * np.float32(a_scale), b_scale, y_scale, y_point,
                    (-1,))]  # fmt: skip
