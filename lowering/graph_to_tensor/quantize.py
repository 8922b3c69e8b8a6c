"""QuantizeLinear and DequantizeLinear to the tensor level: one all-parallel
generic each, the scale and zero point read along `axis` (a 1-D parameter
is reshaped to broadcast there; a blocked one is read through a map that
divides the index along `axis` by `block_size`).

    quantize:   clamp(roundeven(x / scale) + zero_point, lo, hi) converted to the result type
                (a float8/float4 result: x / scale (+ float4's zero point) rounded once, as Cast)
    dequantize: (x - zero_point, in i32; in f32 for float8/float4) times the scale, in f32,
                converted to the scale's type

The same arithmetic as the reference kernel (ember/reference/kernels/
quantize.py) and onnxruntime: a float32 division, rounding half to even,
saturation to the result type's range.
"""

from __future__ import annotations

from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IntegerType, bf16, f16, f32
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ember.dialects.graph import DequantizeLinearOp, QuantizeLinearOp
from ember.dialects.graph.base import GraphOp
from ember.dialects.graph.types import f4E2M1FN, is_float
from ember.lowering.graph_to_tensor.common import (
    Body,
    Emitter,
    FamilyPattern,
    _bits,
    _elem,
    _is_unsigned,
    _shape,
)

I32 = IntegerType(32)


def _along(e: Emitter, op: GraphOp, parameter: SSAValue) -> SSAValue:
    """A 1-D scale or zero point reshaped to broadcast along the op's axis."""
    rank = len(_shape(op.operands[0]))
    shape = _shape(parameter)
    if len(shape) != 1 or rank == 0:
        return parameter
    axis = op.attr("axis") % rank
    return e.reshape(parameter, [shape[0], *[1] * (rank - axis - 1)])


def _parameters(e: Emitter, op: GraphOp) -> tuple[list[SSAValue], list[AffineMap] | None]:
    """The scale and zero point, and the maps the generic reads them (and x)
    through: NumPy broadcasting (None), or for blocked quantisation x's index
    with the one along `axis` divided by `block_size`."""
    block = op.attr("block_size")
    if not block:
        return [_along(e, op, v) for v in op.operands[1:]], None
    rank = len(_shape(op.operands[0]))
    axis = op.attr("axis") % rank
    dims = [AffineExpr.dimension(i) for i in range(rank)]
    dims[axis] = dims[axis] // block
    blocked = AffineMap(rank, 0, tuple(dims))
    return list(op.operands[1:]), [AffineMap.identity(rank), *[blocked] * (len(op.operands) - 1)]


def _lower_quantize(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    out = _elem(op.results[0])
    saturate = bool(op.attr("saturate"))
    float8 = is_float(out) and out != f4E2M1FN
    bits = _bits(out)
    low, high = (0, (1 << bits) - 1) if _is_unsigned(out) else (-(1 << (bits - 1)),
                                                               (1 << (bits - 1)) - 1)  # fmt: skip

    def body(b: Body, args: list[SSAValue]) -> SSAValue:
        value = b.div(b.convert(args[0], f32), b.convert(args[1], f32))
        if is_float(out):  # one rounding to the narrow float (float8's zero point is 0)
            if len(args) > 2 and not float8:
                value = b.add(value, b.convert(args[2], f32))
            return b.convert(value, out, saturate)
        value = b.math(xmath.RoundEvenOp, value)
        if len(args) > 2:
            value = b.add(value, b.convert(args[2], f32))
        value = b.min(b.max(value, b.const(low, f32)), b.const(high, f32))
        return b.convert(value, out)

    parameters, maps = _parameters(e, op)
    return [e.parallel([x, *parameters], _shape(op.results[0]), out, body, maps)]


def _lower_dequantize(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    out = _elem(op.results[0])

    def body(b: Body, args: list[SSAValue]) -> SSAValue:
        if is_float(args[0].type):  # float8 (zero point 0) or float4, in f32
            value = b.convert(args[0], f32)
            if len(args) > 2 and args[0].type == f4E2M1FN:
                value = b.sub(value, b.convert(args[2], f32))
        else:
            value = b.convert(args[0], I32)
            if len(args) > 2:
                value = b.sub(value, b.convert(args[2], I32))
        return b.convert(b.mul(b.convert(value, f32), b.convert(args[1], f32)), out)

    parameters, maps = _parameters(e, op)
    return [e.parallel([x, *parameters], _shape(op.results[0]), out, body, maps)]


def _check(op: GraphOp) -> str | None:
    scale = _elem(op.operands[1])
    if scale not in (f32, f16, bf16):
        return f"a {scale} scale (float32, float16 or bfloat16 only)"
    return None


class QuantizePattern(FamilyPattern):
    lowerings = {QuantizeLinearOp: _lower_quantize, DequantizeLinearOp: _lower_dequantize}
    checks = {QuantizeLinearOp: _check, DequantizeLinearOp: _check}
    symbolic = frozenset({QuantizeLinearOp, DequantizeLinearOp})


__all__ = ["QuantizePattern"]
