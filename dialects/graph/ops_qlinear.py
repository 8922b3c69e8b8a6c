"""Quantised products: `graph.qlinear_conv`, `graph.qlinear_matmul` (ONNX)
and `graph.qgemm` (onnxruntime's `com.microsoft` QGemm).

Each multiplies integer operands with their zero points subtracted,
accumulates in int32 (plus an int32 bias `B`/`C`, quantised with scale
`x_scale * w_scale` and zero point 0) and requantises once:

    acc = sum((x - x_zero_point) * (w - w_zero_point)) + bias
    y   = saturate(round_half_even(f32(acc) * (x_scale * w_scale / y_scale)) + y_zero_point)

the multiplier computed in float32 as onnxruntime does (`w_scale` and
`w_zero_point` may be per output channel: W's first axis for Conv, B's
last for the products). QGemm without `y_scale` gives float32
`alpha * x_scale * w_scale * acc` instead.

These are what a QDQ graph means once its DequantizeLinear -> product ->
QuantizeLinear chains are recognised (`graph-fuse-qdq`): the integer
work an int8 matrix unit does. `graph-expand-qlinear` turns them back
into QDQ chains for the CPU pipeline.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType, Signedness, TensorType

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.ops_nn import _WINDOW_ATTRS, ConvOp, GemmOp, conv, gemm, matmul
from ember.dialects.graph.shapes import ShapeContext, ShapeError
from ember.dialects.graph.spec import (
    ORT_DOMAIN,
    OpSpec,
    float_attr,
    int_attr,
    ints_attr,
    one,
    opt,
)
from ember.dialects.graph.types import tensor_type

_F32 = Float32Type()


def _as_float(ctx: ShapeContext, names: dict[str, str]) -> ShapeContext:
    """`ctx` as the float op's rule sees it: the operands renamed (float
    name -> quantised name) and typed float32, so the float op's shape rule
    applies unchanged."""
    types = {float_name: [tensor_type(_F32, t.get_shape()) for t in ctx.types(name)]
             for float_name, name in names.items()}  # fmt: skip
    return ShapeContext(ctx.spec, types, {}, ctx.attributes, ctx.num_results, ctx.result_names)


def _integer(ctx: ShapeContext, *names: str) -> None:
    for name in names:
        if ctx.has(name) and not isinstance(ctx.element_type(name), IntegerType):
            raise ShapeError(f"{name} must be an integer tensor, got {ctx.element_type(name)}")


def _requantised(ctx: ShapeContext, rule_result: list[TensorType]) -> list[TensorType]:
    """The float rule's shape with y_zero_point's type (float32 when there is
    no y_scale: QGemm's float output)."""
    if not ctx.has("y_scale"):
        return rule_result
    if ctx.has("y_zero_point"):
        element = ctx.element_type("y_zero_point")
    else:
        element = IntegerType(8, Signedness.UNSIGNED)  # onnxruntime's default
    return [tensor_type(element, rule_result[0].get_shape())]


def qlinear_conv(ctx: ShapeContext) -> list[TensorType]:
    _integer(ctx, "x", "w", "B")
    return _requantised(ctx, conv(_as_float(ctx, {"X": "x", "W": "w", "B": "B"})))


def qlinear_matmul(ctx: ShapeContext) -> list[TensorType]:
    _integer(ctx, "a", "b")
    return _requantised(ctx, matmul(_as_float(ctx, {"A": "a", "B": "b"})))


def q_gemm(ctx: ShapeContext) -> list[TensorType]:
    _integer(ctx, "A", "B", "C")
    return _requantised(ctx, gemm(_as_float(ctx, {"A": "A", "B": "B", "C": "C"})))


SPECS = [
    OpSpec("QLinearConv", [one("x"), one("x_scale"), one("x_zero_point"), one("w"),
                           one("w_scale"), one("w_zero_point"), one("y_scale"),
                           one("y_zero_point"), opt("B")], [one("y")], qlinear_conv,
           attributes=(*_WINDOW_ATTRS, ints_attr("dilations"), int_attr("group", 1),
                       ints_attr("kernel_shape")),
           summary="Conv of quantised x and w, int32 accumulation and bias, requantised."),
    OpSpec("QLinearMatMul", [one("a"), one("a_scale"), one("a_zero_point"), one("b"),
                             one("b_scale"), one("b_zero_point"), one("y_scale"),
                             one("y_zero_point")], [one("y")], qlinear_matmul,
           summary="MatMul of quantised a and b, int32 accumulation, requantised."),
    OpSpec("QGemm", [one("A"), one("a_scale"), one("a_zero_point"), one("B"), one("b_scale"),
                     one("b_zero_point"), opt("C"), opt("y_scale"), opt("y_zero_point")],
           [one("Y")], q_gemm,
           attributes=(float_attr("alpha", 1.0), int_attr("transA", 0), int_attr("transB", 0)),
           summary="Gemm of quantised A and B plus an int32 C, requantised (or float32).",
           domain=ORT_DOMAIN),
]  # fmt: skip


@graph_op(SPECS)
class QLinearConvOp(GraphOp): ...


@graph_op(SPECS)
class QLinearMatMulOp(GraphOp): ...


@graph_op(SPECS)
class QGemmOp(GraphOp): ...


BIAS_OPERAND: dict[type[GraphOp], str] = {QLinearConvOp: "B", QGemmOp: "C"}
"""The int32 bias operand of the quantised products that have one."""


def weight_channel_axis(op: GraphOp) -> int:
    """The axis of a product's weights (its second factor) along the output
    channels: a (quantised) convolution's filters, a Gemm's columns of
    op(B), a MatMul's columns."""
    if isinstance(op, ConvOp | QLinearConvOp):
        return 0
    if isinstance(op, GemmOp | QGemmOp):
        return 0 if op.attr("transB") else 1
    return 1


def requant_multiplier(x_scale: np.ndarray, w_scale: np.ndarray,
                       y_scale: np.ndarray) -> np.ndarray:  # fmt: skip
    """`x_scale * w_scale / y_scale` in float32, in that order (onnxruntime's
    arithmetic; one value, or one per output channel)."""
    product = np.float32(x_scale) * np.asarray(w_scale, np.float32)
    return np.asarray(product / np.float32(y_scale), np.float32)


def requantize(acc: np.ndarray, multiplier: np.ndarray, zero_point: np.ndarray,
               dtype: np.dtype) -> np.ndarray:  # fmt: skip
    """saturate(round_half_even(f32(acc) * multiplier) + zero_point) (see the
    module docstring); `multiplier` and `zero_point` broadcast against acc."""
    scaled = np.rint(acc.astype(np.float32) * multiplier)
    info = np.iinfo(dtype)
    shifted = scaled.astype(np.float64) + np.asarray(zero_point, np.float64)
    return np.clip(shifted, info.min, info.max).astype(dtype)
