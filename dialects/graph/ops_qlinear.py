"""Quantised products: `graph.qlinear_conv`, `graph.qlinear_matmul` (ONNX)
and `graph.qgemm` (onnxruntime's `com.microsoft` QGemm), and the integer
products `graph.conv_integer` and `graph.matmul_integer` (ONNX).

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

ConvInteger and MatMulInteger stop at the accumulator: int8 or uint8
operands, each with an optional zero point of its own type, and an int32
result

    y = sum((x - x_zero_point) * (w - w_zero_point))

(the padding of a convolution is x's zero point: 0 once centred). A
convolution's `w_zero_point` is one value or one per output channel, its
`x_zero_point` one value; MatMulInteger's `a_zero_point` is one value, one
per row of A (M values, or A's rank with 1 as its last dim), and its
`b_zero_point` one value or one per column of B (N values, or B's rank with
1 as its second-last dim). `graph-expand-qlinear` turns them into the int32
Conv or MatMul of the centred operands.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType, Signedness, TensorType, i32
from xdsl.ir import Attribute

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.ops_nn import _WINDOW_ATTRS, ConvOp, GemmOp, conv, gemm, matmul
from ember.dialects.graph.shapes import ShapeContext, ShapeError, dims_compatible
from ember.dialects.graph.spec import (
    ORT_DOMAIN,
    OpSpec,
    float_attr,
    int_attr,
    ints_attr,
    one,
    opt,
)
from ember.dialects.graph.types import format_shape, tensor_type

_F32 = Float32Type()


def _as_float(ctx: ShapeContext, names: dict[str, str]) -> ShapeContext:
    """`ctx` as the float op's rule sees it: the operands renamed (float
    name -> quantised name) and typed float32, so the float op's shape rule
    applies unchanged."""
    types = {float_name: [tensor_type(_F32, symbolic_shape(t)) for t in ctx.types(name)]
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
    return _retyped(rule_result, element)


def _retyped(rule_result: list[TensorType], element: Attribute) -> list[TensorType]:
    """The float rule's result (its symbolic dims kept) with `element` instead."""
    return [tensor_type(element, symbolic_shape(rule_result[0]))]


def qlinear_conv(ctx: ShapeContext) -> list[TensorType]:
    _integer(ctx, "x", "w", "B")
    return _requantised(ctx, conv(_as_float(ctx, {"X": "x", "W": "w", "B": "B"})))


def qlinear_matmul(ctx: ShapeContext) -> list[TensorType]:
    _integer(ctx, "a", "b")
    return _requantised(ctx, matmul(_as_float(ctx, {"A": "a", "B": "b"})))


def q_gemm(ctx: ShapeContext) -> list[TensorType]:
    _integer(ctx, "A", "B", "C")
    return _requantised(ctx, gemm(_as_float(ctx, {"A": "A", "B": "B", "C": "C"})))


_INT8_TYPES = (IntegerType(8, Signedness.SIGNLESS), IntegerType(8, Signedness.UNSIGNED))


def _integer_operands(ctx: ShapeContext, pairs: tuple[tuple[str, str], ...]) -> None:
    """Each (data, zero point) pair int8 or uint8, the zero point of its data's type."""
    for data, point in pairs:
        element = ctx.element_type(data)
        if element not in _INT8_TYPES:
            raise ShapeError(f"{data} must be an int8 or uint8 tensor, got {element}")
        if ctx.has(point) and ctx.element_type(point) != element:
            raise ShapeError(f"{point} must have {data}'s element type {element}, "
                             f"got {ctx.element_type(point)}")  # fmt: skip


def _zero_point_fits(ctx: ShapeContext, point: str, allowed: list[list[int]]) -> None:
    """`point` is a single value or has one of the `allowed` shapes (an
    unknown dim matches anything)."""
    if not ctx.has(point):
        return
    shape = list(ctx.shape(point))
    if all(d == 1 for d in shape):
        return
    for want in allowed:
        if len(want) == len(shape) and all(map(dims_compatible, shape, want)):
            return
    listing = "".join(f" or have shape {format_shape(w)}" for w in allowed)
    raise ShapeError(f"{point} must hold one value{listing}, got {format_shape(shape)}")


def conv_integer(ctx: ShapeContext) -> list[TensorType]:
    _integer_operands(ctx, (("x", "x_zero_point"), ("w", "w_zero_point")))
    shape = conv(_as_float(ctx, {"X": "x", "W": "w"}))
    _zero_point_fits(ctx, "x_zero_point", [])
    _zero_point_fits(ctx, "w_zero_point", [[ctx.shape("w")[0]]])
    return _retyped(shape, i32)


def matmul_integer(ctx: ShapeContext) -> list[TensorType]:
    _integer_operands(ctx, (("A", "a_zero_point"), ("B", "b_zero_point")))
    shape = matmul(_as_float(ctx, {"A": "A", "B": "B"}))
    a, b = list(ctx.shape("A")), list(ctx.shape("B"))
    _zero_point_fits(ctx, "a_zero_point", [[a[-2]], [*a[:-1], 1]] if len(a) > 1 else [])
    _zero_point_fits(ctx, "b_zero_point", [[b[-1]], [*b[:-2], 1, b[-1]]] if len(b) > 1 else [])
    return _retyped(shape, i32)


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
    OpSpec("ConvInteger", [one("x"), one("w"), opt("x_zero_point"), opt("w_zero_point")],
           [one("y")], conv_integer,
           attributes=(*_WINDOW_ATTRS, ints_attr("dilations"), int_attr("group", 1),
                       ints_attr("kernel_shape")),
           summary="Conv of int8/uint8 x and w less their zero points, as int32."),
    OpSpec("MatMulInteger", [one("A"), one("B"), opt("a_zero_point"), opt("b_zero_point")],
           [one("Y")], matmul_integer,
           summary="MatMul of int8/uint8 A and B less their zero points, as int32."),
]  # fmt: skip


@graph_op(SPECS)
class QLinearConvOp(GraphOp): ...


@graph_op(SPECS)
class QLinearMatMulOp(GraphOp): ...


@graph_op(SPECS)
class QGemmOp(GraphOp): ...


@graph_op(SPECS)
class ConvIntegerOp(GraphOp): ...


@graph_op(SPECS)
class MatMulIntegerOp(GraphOp): ...


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
