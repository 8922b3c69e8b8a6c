"""The quantised products the NPU runs as int8 matrix-unit work:
`graph.qlinear_conv`, `graph.qlinear_matmul` and `graph.qgemm` (formed from
a QDQ model's chains by `graph-fuse-qdq`).

The matrix unit multiplies int8 by int8 into int32 and has no zero points,
so they move out of the product. The weights' zero point must be 0 (what
`quantize_static` writes: symmetric weights); the activations' `zx` is
folded into the int32 bias, per output channel:

    sum_k W[f, k] (x[k] - zx) + B[f]  =  sum_k W[f, k] x[k] + (B[f] - zx * sum_k W[f, k])

and a convolution's padding is `zx` (the quantised 0.0), stored in the halo
around its input's planes. The requantising store then applies the
multiplier `x_scale * w_scale / y_scale` (float32, as the reference kernel
does) and `y_zero_point`, bit for bit what the reference computes.

Taken: int8 activations, weights and result; every scale and zero point a
constant, per tensor, except a convolution's weight scale, which may be
per output channel (its output rows: each row is stored after a
`config_store` of its own multiplier); constant weights (and bias); QGemm
with a quantised result, alpha 1 and A not transposed. Left to the host
(where `graph-expand-qlinear` makes them QDQ chains again): uint8 tensors,
per-channel scales of the products (their channels are columns, and a
store writes whole accumulator rows), weights with a non-zero zero point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType
from xdsl.ir import SSAValue

from ember.dialects.graph import (
    ConstantOp,
    GraphOp,
    QGemmOp,
    QLinearConvOp,
    QLinearMatMulOp,
    constant_value_of,
)
from ember.dialects.graph.ops_qlinear import BIAS_OPERAND, requant_multiplier
from ember.dialects.npu.machine import NpuProgramError

QuantisedProduct = QLinearConvOp | QLinearMatMulOp | QGemmOp
QUANTISED_PRODUCTS = (QLinearConvOp, QLinearMatMulOp, QGemmOp)

_SCALARS = {
    QLinearConvOp: ("x_scale", "x_zero_point", "w_scale", "w_zero_point", "y_scale",
                    "y_zero_point"),
    QLinearMatMulOp: ("a_scale", "a_zero_point", "b_scale", "b_zero_point", "y_scale",
                      "y_zero_point"),
    QGemmOp: ("a_scale", "a_zero_point", "b_scale", "b_zero_point", "y_scale", "y_zero_point"),
}  # fmt: skip


def is_int8(value: SSAValue) -> bool:
    t = value.type
    return (isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
            and t.element_type.width.data == 8
            and t.element_type.signedness.data == Signedness.SIGNLESS)  # fmt: skip


def _scalar(op: GraphOp, name: str) -> float | int | None:
    """A parameter's single constant value, else None."""
    group = op.operand_group(name)
    if not group or not isinstance(group[0].owner, ConstantOp):
        return None
    value = constant_value_of(group[0])
    if value is None or value.size != 1:
        return None
    return value.reshape(()).item()


def why_not(op: QuantisedProduct) -> str | None:
    """Why the NPU does not take `op` (None: it does); looks at the scalar
    parameters, not the weights."""
    data, weights = op.operands[0], op.operands[3]
    if not all(is_int8(v) for v in (data, weights, op.results[0])):
        return "not int8 throughout"
    if not isinstance(weights.owner, ConstantOp):
        return "weights computed at run time"
    bias = op.operand_group(BIAS_OPERAND[type(op)]) if type(op) in BIAS_OPERAND else []
    if bias and not isinstance(bias[0].owner, ConstantOp):
        return "a bias computed at run time"
    x_scale, x_point, w_scale, w_point, y_scale, y_point = _SCALARS[type(op)]
    per_channel = isinstance(op, QLinearConvOp) and _per_channel(op)
    names = (x_scale, x_point, y_scale, y_point) if per_channel else _SCALARS[type(op)]
    if any(_scalar(op, name) is None for name in names):
        return "scales or zero points per channel (of a product) or computed at run time"
    points = constant_value_of(op.operand_group(w_point)[0])
    if points is None or np.any(points != 0):
        return "weights with a zero point"
    if isinstance(op, QGemmOp) and (op.attr("transA") or op.attr("alpha") != 1.0):
        return "a transposed A or alpha"
    return None


def int8_zero_point(op: QuantisedProduct) -> int:
    """The activations' zero point (a convolution's padding value)."""
    value = _scalar(op, _SCALARS[type(op)][1])
    assert value is not None
    return int(value)


def _per_channel(op: QLinearConvOp) -> bool:
    """A constant weight scale per output channel (and zero points to match)."""
    scale, point = op.operand_group("w_scale")[0], op.operand_group("w_zero_point")[0]
    if not all(isinstance(v.owner, ConstantOp) for v in (scale, point)):
        return False
    values = constant_value_of(scale)
    return values is not None and values.size > 1


@dataclass(frozen=True)
class Int8Product:
    """What the matrix unit needs of a quantised product: the weights (W
    [F, C, KH, KW] of a convolution; B as [K, N] of the products), the
    int32 bias with the activations' zero point folded in (per output
    channel: a convolution's rows, the products' columns; None when it is
    all zeros), and the store's requantisation."""

    x_zero_point: int
    weights: np.ndarray
    bias: np.ndarray | None
    multiplier: float | tuple[float, ...]
    """One multiplier, or one per output channel (a convolution's)."""
    y_zero_point: int


def int8_product(op: QuantisedProduct) -> Int8Product:
    """`op`'s operands for the matrix unit (see the module docstring); `op`
    is one the NPU takes (`why_not` is None)."""
    x_scale, x_point, _, _, y_scale, y_point = (_scalar(op, n) for n in _SCALARS[type(op)])
    w_scale = constant_value_of(op.operand_group(_SCALARS[type(op)][2])[0])
    assert w_scale is not None
    weights = constant_value_of(op.operands[3])
    assert weights is not None
    if isinstance(op, QGemmOp) and op.attr("transB"):
        weights = weights.T
    weights = np.ascontiguousarray(weights, np.int8)
    if isinstance(op, QLinearConvOp):
        sums = weights.reshape(weights.shape[0], -1).sum(axis=1, dtype=np.int64)
    else:
        sums = weights.sum(axis=0, dtype=np.int64)
    bias = -int(x_point) * sums  # type: ignore[arg-type]
    name = BIAS_OPERAND.get(type(op))
    if name and op.operand_group(name):
        given = constant_value_of(op.operand_group(name)[0])
        assert given is not None
        bias = bias + given.astype(np.int64).reshape(-1)
    if np.any(np.abs(bias) > np.iinfo(np.int32).max):
        raise NpuProgramError(f"{op.name}: the bias with the zero point folded in overflows int32")
    multipliers = requant_multiplier(np.float32(x_scale), w_scale, np.float32(y_scale))
    multiplier = (tuple(float(m) for m in multipliers.reshape(-1)) if multipliers.size > 1
                  else float(multipliers.reshape(()).item()))  # fmt: skip
    return Int8Product(int(x_point), weights, bias.astype(np.int32) if np.any(bias) else None,  # type: ignore[arg-type]
                       multiplier, int(y_point))  # type: ignore[arg-type]  # fmt: skip
