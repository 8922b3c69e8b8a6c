"""QuantizeLinear and DequantizeLinear to the tensor level: one all-parallel
generic each, the scale and zero point read along `axis` (a 1-D parameter
is reshaped to broadcast there).

    quantize:   clamp(roundeven(x / scale) + zero_point, lo, hi) converted to the result type
    dequantize: (x - zero_point, in i32) converted to the scale's type, times the scale

The same arithmetic as the reference kernel (ember/reference/kernels/
quantize.py) and onnxruntime: a float32 division, rounding half to even,
saturation to the result type's range.
"""

from __future__ import annotations

from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IntegerType, f32
from xdsl.ir import SSAValue

from ember.dialects.graph import DequantizeLinearOp, QuantizeLinearOp
from ember.dialects.graph.base import GraphOp
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


def _parameters(e: Emitter, op: GraphOp) -> list[SSAValue]:
    return [_along(e, op, v) for v in op.operands[1:]]


def _lower_quantize(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    out = _elem(op.results[0])
    bits = _bits(out)
    low, high = (0, (1 << bits) - 1) if _is_unsigned(out) else (-(1 << (bits - 1)),
                                                               (1 << (bits - 1)) - 1)  # fmt: skip

    def body(b: Body, args: list[SSAValue]) -> SSAValue:
        value = b.math(xmath.RoundEvenOp, b.div(args[0], args[1]))
        if len(args) > 2:
            value = b.add(value, b.convert(args[2], f32))
        value = b.min(b.max(value, b.const(low, f32)), b.const(high, f32))
        return b.convert(value, out)

    return [e.parallel([x, *_parameters(e, op)], _shape(op.results[0]), out, body)]


def _lower_dequantize(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    out = _elem(op.results[0])

    def body(b: Body, args: list[SSAValue]) -> SSAValue:
        value = b.convert(args[0], I32)
        if len(args) > 2:
            value = b.sub(value, b.convert(args[2], I32))
        return b.mul(b.convert(value, out), args[1])

    return [e.parallel([x, *_parameters(e, op)], _shape(op.results[0]), out, body)]


def _check(op: GraphOp) -> str | None:
    if _elem(op.operands[1]) != f32:
        return f"a {_elem(op.operands[1])} scale (float32 only)"
    return None


class QuantizePattern(FamilyPattern):
    lowerings = {QuantizeLinearOp: _lower_quantize, DequantizeLinearOp: _lower_dequantize}
    checks = {QuantizeLinearOp: _check, DequantizeLinearOp: _check}
    symbolic = frozenset({QuantizeLinearOp, DequantizeLinearOp})


__all__ = ["QuantizePattern"]
