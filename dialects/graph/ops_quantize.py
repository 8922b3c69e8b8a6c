"""`graph.quantize_linear`, `graph.dequantize_linear`: ONNX's linear
quantisation (opset 21), per tensor or per axis; `graph.dynamic_quantize_linear`:
per tensor to uint8, with a scale and zero point from the data.

    QuantizeLinear:   y = saturate(round_half_even(x / y_scale) + y_zero_point)
    DequantizeLinear: y = (x - x_zero_point) * x_scale

The scale and zero point are scalars or single values (per tensor), 1-D
along `axis` (per axis), or of x's rank with ceil(n / block_size) values
along `axis` (blocked: `block_size` consecutive elements share one).
QuantizeLinear's result has the zero point's type (int8, uint8, int16,
uint16, int4, uint4, int2, uint2, a float8 type or float4), or
`output_dtype`'s, uint8 by default; saturation clamps to an integer type's
range, and a float8 result rounds once as Cast does (with `saturate`).
DequantizeLinear gives the scale's type (float32, float16 or bfloat16). These
are the ops `onnxruntime.quantization.quantize_static` puts around the
Convs, MatMuls and Gemms of a float model (its QDQ format).

DynamicQuantizeLinear quantises a float32 x to uint8 with the range of its
values widened to hold 0, as ONNX's function body (and onnxruntime) says:

    lo, hi       = min(min(x), 0), max(max(x), 0)
    y_scale      = (hi - lo) / 255            (1 when hi == lo, as onnxruntime has it)
    y_zero_point = uint8(round_half_even(clip(0 - lo / y_scale, 0, 255)))
    y            = QuantizeLinear(x, y_scale, y_zero_point)

`graph-expand-qlinear` writes it out in those ops.
"""

from __future__ import annotations

from onnx import TensorProto
from xdsl.dialects.builtin import Float32Type, IntegerType, Signedness, TensorType

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result
from ember.dialects.graph.spec import OpSpec, int_attr, one, opt
from ember.dialects.graph.types import element_type_from_onnx

QUANTIZED_TYPES = ("int8", "uint8", "int16", "uint16")


def _blocked(ctx: ShapeContext, scale: str, data: str) -> None:
    """Blocked: the scale has x's rank, ceil(n / block_size) values along `axis`
    where x has n, and x's dims elsewhere."""
    block = ctx.attr("block_size")
    if block < 0:
        raise ctx.error(f"block_size must be positive, got {block}")
    rank, shape = ctx.rank(data), ctx.shape(scale)
    if len(shape) != rank or rank == 0:
        raise ctx.error(f"blocked quantisation needs a {scale} of {data}'s rank {rank}, "
                        f"got rank {len(shape)}")  # fmt: skip
    axis = ctx.normalize_axis(ctx.attr("axis"), rank)
    for dim, (size, along) in enumerate(zip(shape, ctx.shape(data))):
        if not (isinstance(size, int) and isinstance(along, int)) or along < 0 or size < 0:
            continue
        want = -(-along // block) if dim == axis else along
        if size != want:
            raise ctx.error(f"{scale} has {size} values on dim {dim}, where blocks of "
                            f"{block} along axis {axis} need {want}")  # fmt: skip


def _parameters(ctx: ShapeContext, scale: str, zero_point: str, data: str) -> None:
    """Scalar or 1-D along `axis`, or blocked (`_blocked`); the zero point
    shaped as the scale."""
    rank = ctx.rank(data)
    shape = ctx.shape(scale)
    if ctx.attr("block_size"):
        _blocked(ctx, scale, data)
    elif len(shape) > 1:
        raise ctx.error(f"{scale} must be a scalar or 1-D, got rank {len(shape)}")
    if len(shape) == 1 and rank and shape[0] != 1:  # one value is per tensor
        axis = ctx.normalize_axis(ctx.attr("axis"), rank)
        along = ctx.shape(data)[axis]
        if isinstance(along, int) and isinstance(shape[0], int) and along >= 0 \
                and shape[0] >= 0 and shape[0] != along:  # fmt: skip
            raise ctx.error(f"{scale} has {shape[0]} values, axis {axis} has {along}")
    if ctx.has(zero_point):
        points = ctx.shape(zero_point)
        if ctx.attr("block_size"):
            if list(points) != list(shape):
                raise ctx.error(f"{zero_point} must have {scale}'s shape")
        elif len(points) > 1 or (
            list(points) != list(shape) and [*points, *shape] not in ([1], [])
        ):
            raise ctx.error(
                f"{zero_point} must have {scale}'s shape (or hold one value as it does)"
            )


def quantize(ctx: ShapeContext) -> list[TensorType]:
    _parameters(ctx, "y_scale", "y_zero_point", "x")
    if ctx.has("y_zero_point"):
        out = ctx.element_type("y_zero_point")
    elif ctx.attr("output_dtype"):
        out = element_type_from_onnx(ctx.attr("output_dtype"))
    else:
        out = element_type_from_onnx(TensorProto.UINT8)
    return result(out, ctx.shape("x"))


def dequantize(ctx: ShapeContext) -> list[TensorType]:
    _parameters(ctx, "x_scale", "x_zero_point", "x")
    return result(ctx.element_type("x_scale"), ctx.shape("x"))


def dynamic_quantize(ctx: ShapeContext) -> list[TensorType]:
    """y: x's shape in uint8; y_scale (float32) and y_zero_point (uint8): scalars."""
    if not isinstance(ctx.element_type("x"), Float32Type):
        raise ShapeError(f"x must be a float32 tensor, got {ctx.element_type('x')}")
    uint8 = IntegerType(8, Signedness.UNSIGNED)
    return [*result(uint8, ctx.shape("x")), *result(Float32Type(), []), *result(uint8, [])]


SPECS = [
    OpSpec("QuantizeLinear", [one("x"), one("y_scale"), opt("y_zero_point")], [one("y")],
           quantize, attributes=(int_attr("axis", 1), int_attr("block_size", 0),
                                 int_attr("output_dtype", 0), int_attr("saturate", 1)),
           summary="saturate(round(x / y_scale) + y_zero_point), per tensor, per axis or blocked."),
    OpSpec("DequantizeLinear", [one("x"), one("x_scale"), opt("x_zero_point")], [one("y")],
           dequantize, attributes=(int_attr("axis", 1), int_attr("block_size", 0)),
           summary="(x - x_zero_point) * x_scale, per tensor, per axis or blocked."),
    OpSpec("DynamicQuantizeLinear", [one("x")], [one("y"), one("y_scale"), one("y_zero_point")],
           dynamic_quantize,
           summary="x to uint8 with a scale and zero point from its range (widened to hold 0)."),
]  # fmt: skip


@graph_op(SPECS)
class QuantizeLinearOp(GraphOp): ...


@graph_op(SPECS)
class DequantizeLinearOp(GraphOp): ...


@graph_op(SPECS)
class DynamicQuantizeLinearOp(GraphOp): ...
