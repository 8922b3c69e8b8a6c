"""QuantizeLinear and DequantizeLinear (opset 21; per tensor or per axis).

QuantizeLinear divides in float32 and rounds half to even before adding
the zero point and saturating, as ONNX's reference and onnxruntime do;
DequantizeLinear subtracts the zero point in integers and converts once,
so an int32 bias dequantises exactly up to 2^24.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from ._registry import Attrs, Inputs, register


def _along(parameter: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A 1-D parameter shaped to broadcast along `axis` of a rank-`rank` tensor."""
    if parameter.ndim == 0 or rank == 0:
        return parameter
    axis = axis % rank
    return parameter.reshape(-1, *[1] * (rank - axis - 1))


@register("QuantizeLinear")
def quantize_linear(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, scale = inputs[0], inputs[1]
    zero_point = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    if zero_point is not None:
        dtype = zero_point.dtype
    elif attrs.get("output_dtype"):
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["output_dtype"]))
    else:
        dtype = np.dtype(np.uint8)
    axis = int(attrs.get("axis", 1))
    scaled = np.rint(x.astype(np.float32) / _along(scale.astype(np.float32), x.ndim, axis))
    if zero_point is not None:
        scaled = scaled + _along(zero_point.astype(np.float32), x.ndim, axis)
    info = np.iinfo(dtype)
    return [np.clip(scaled, info.min, info.max).astype(dtype)]


@register("DequantizeLinear")
def dequantize_linear(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, scale = inputs[0], inputs[1]
    zero_point = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    axis = int(attrs.get("axis", 1))
    shifted = x.astype(np.int64)
    if zero_point is not None:
        shifted = shifted - _along(zero_point.astype(np.int64), x.ndim, axis)
    return [(shifted.astype(np.float32) * _along(scale, x.ndim, axis)).astype(scale.dtype)]
