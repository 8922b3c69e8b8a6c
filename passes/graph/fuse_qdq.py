"""`graph-fuse-qdq`: DequantizeLinear -> product -> QuantizeLinear chains
become quantised products (`graph.qlinear_conv`, `graph.qlinear_matmul`,
`graph.qgemm`), as onnxruntime's QDQ transformer turns them into its
QLinearConv/QLinearMatMul/QGemm kernels.

A QDQ model (onnxruntime's `quantize_static`, QDQ format) computes each
product in float between a DequantizeLinear of every operand and a
QuantizeLinear of the result. What it means is integer work: the product
of the quantised operands, accumulated in int32 with the int32 bias, and
one requantisation (see `ember.dialects.graph.ops_qlinear`). This pass
rewrites

| chain | into |
|---|---|
| Q(Conv(DQ(x), DQ(w), DQ(b)?)) | QLinearConv(x, w, b?) |
| Q(MatMul(DQ(a), DQ(b))) | QLinearMatMul(a, b), B of rank 2 |
| Q(Gemm(DQ(a), DQ(b), DQ(c)?)) | QGemm(a, b, c?), beta = 1 |

with each scale and zero point passed on. A Relu between the product and
the QuantizeLinear is absorbed when the zero point is its type's lowest
value: saturation then clamps exactly where the Relu would.

It must not fire (the chain stays as it is) unless: every scale and zero
point is a constant and present; x (a) and the output are quantised per
tensor, to int8 or uint8; the weight is int8 or uint8, per tensor or per
output channel (W's axis 0 for Conv, the output column's axis for the
products); the bias is int32, with zero point 0 and the scale `x_scale *
w_scale` (within float32 rounding) that makes it an accumulator term;
and the product's result (and the Relu's) has no other user. Dead
DequantizeLinears are left for `dce`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.graph import (
    ConvOp,
    DequantizeLinearOp,
    GemmOp,
    GraphOp,
    MatMulOp,
    QGemmOp,
    QLinearConvOp,
    QLinearMatMulOp,
    QuantizeLinearOp,
    ReluOp,
    constant_value_of,
)
from ember.dialects.graph.ops_qlinear import BIAS_OPERAND, weight_channel_axis
from ember.dialects.graph.types import numpy_dtype
from ember.passes.graph.builders import insert_op

QUANTISED = (np.dtype(np.int8), np.dtype(np.uint8))
_QUANTISED: dict[type[GraphOp], type[GraphOp]] = {
    ConvOp: QLinearConvOp, MatMulOp: QLinearMatMulOp, GemmOp: QGemmOp,
}  # fmt: skip


@dataclass(frozen=True)
class Quantised:
    """The operands of a DequantizeLinear (or a QuantizeLinear) with
    constant parameters: the data, scale and zero point, their values, and
    the axis a per-axis scale runs along (None: per tensor)."""

    data: SSAValue
    scale: SSAValue
    zero_point: SSAValue | None
    scale_value: np.ndarray
    point_value: np.ndarray
    axis: int | None

    @property
    def dtype(self) -> np.dtype:
        return self.point_value.dtype


def _parameters(op: GraphOp, data: SSAValue) -> Quantised | None:
    scale, point = op.operands[1], op.operand_group(op.SPEC.operands[2].name)
    element = _element(data) if isinstance(op, DequantizeLinearOp) else _element(op.results[0])
    if element is None or not isinstance(data.type, TensorType):
        return None
    scale_value = constant_value_of(scale)
    point_value = constant_value_of(point[0]) if point else np.zeros((), element)
    if scale_value is None or point_value is None:
        return None
    axis = None
    if scale_value.size > 1:
        rank = len(data.type.get_shape())
        axis = op.attr("axis") % rank
    return Quantised(data, scale, point[0] if point else None, scale_value, point_value, axis)


def dequantised(value: SSAValue) -> Quantised | None:
    """`value`'s DequantizeLinear, when it is one with constant parameters."""
    op = value.owner
    if not isinstance(op, DequantizeLinearOp):
        return None
    return _parameters(op, op.operands[0])


def _element(value: SSAValue) -> np.dtype | None:
    t = value.type
    if not isinstance(t, TensorType) or not isinstance(t.element_type, IntegerType):
        return None
    return np.dtype(numpy_dtype(t.element_type))


def _activation(q: Quantised | None) -> bool:
    return (q is not None and q.zero_point is not None and q.axis is None
            and q.dtype in QUANTISED)  # fmt: skip


def _weight(q: Quantised | None, channel_axis: int) -> bool:
    return (q is not None and q.zero_point is not None and q.dtype in QUANTISED
            and q.axis in (None, channel_axis))  # fmt: skip


def _bias(value: SSAValue, x: Quantised, w: Quantised) -> SSAValue | None:
    """The int32 data of a DequantizeLinear bias in accumulator units, else None."""
    q = dequantised(value)
    if q is None or q.dtype != np.dtype(np.int32) or np.any(q.point_value != 0):
        return None
    want = np.float32(x.scale_value) * np.asarray(w.scale_value, np.float32).reshape(-1)
    got = np.broadcast_to(np.asarray(q.scale_value, np.float32).reshape(-1), want.shape)
    return q.data if np.allclose(got, want, rtol=1e-6, atol=0) else None


def _quantised_output(q: QuantizeLinearOp) -> tuple[GraphOp, Quantised] | None:
    """The product a QuantizeLinear quantises (through an absorbable Relu) and
    the output's parameters."""
    y = _parameters(q, q.operands[0])
    if y is None or y.zero_point is None or y.axis is not None or y.dtype not in QUANTISED:
        return None
    value = q.operands[0]
    producer = value.owner
    if isinstance(producer, ReluOp):
        if not value.has_one_use() or y.point_value != np.iinfo(y.dtype).min:
            return None
        value = producer.operands[0]
        producer = value.owner
    if not isinstance(producer, ConvOp | MatMulOp | GemmOp) or not value.has_one_use():
        return None
    return producer, y


def _fused(product: GraphOp, y: Quantised, q: QuantizeLinearOp,
           rewriter: PatternRewriter) -> SSAValue | None:  # fmt: skip
    """The quantised product replacing `q`, or None when the chain does not
    qualify (see the module docstring)."""
    op_class = _QUANTISED[type(product)]
    x, w = product.operands[0], product.operands[1]
    bias = product.operand_group(BIAS_OPERAND[op_class]) if op_class in BIAS_OPERAND else []
    if isinstance(product, GemmOp) and bias and product.attr("beta") != 1.0:
        return None
    channel = weight_channel_axis(product)
    qx, qw = dequantised(x), dequantised(w)
    if not _activation(qx) or not _weight(qw, channel):
        return None
    assert qx is not None and qw is not None
    if isinstance(product, MatMulOp) and len(qw.data.type.get_shape()) != 2:  # type: ignore[attr-defined]
        return None
    bias_data = [_bias(v, qx, qw) for v in bias]
    if any(v is None for v in bias_data):
        return None
    head = [qx.data, qx.scale, qx.zero_point, qw.data, qw.scale, qw.zero_point]
    if isinstance(product, ConvOp):
        operands = [*head, y.scale, y.zero_point, bias_data]
    elif isinstance(product, MatMulOp):
        operands = [*head, y.scale, y.zero_point]
    else:
        operands = [*head, bias_data, [y.scale], [y.zero_point]]
    names = {a.name for a in op_class.SPEC.attributes}
    properties = {k: v for k, v in product.properties.items() if k in names}
    return insert_op(rewriter, q, op_class, operands, q.result_types[0], properties)  # type: ignore[arg-type]


class FuseQdq(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeLinearOp, rewriter: PatternRewriter) -> None:
        found = _quantised_output(op)
        if found is None:
            return
        fused = _fused(*found, op, rewriter)
        if fused is None:
            return
        fused.name_hint = op.results[0].name_hint
        rewriter.replace(op, [], [fused])


@dataclass(frozen=True)
class FuseQdqPass(ModulePass):
    """Turns DequantizeLinear -> Conv/MatMul/Gemm -> QuantizeLinear chains
    into quantised products (see the module docstring)."""

    name = "graph-fuse-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseQdq()).rewrite_module(op)


__all__ = ["FuseQdqPass", "Quantised", "dequantised"]
