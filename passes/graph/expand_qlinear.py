"""`graph-expand-qlinear`: quantised products back into QDQ chains, for the
CPU pipeline.

`graph.qlinear_conv`, `graph.qlinear_matmul` and `graph.qgemm` (from an
ONNX file, or left to the host by `graph-partition-npu` after
`graph-fuse-qdq`) become

    QuantizeLinear(Conv|MatMul|Gemm(DequantizeLinear(x), DequantizeLinear(w),
                                     DequantizeLinear(bias, x_scale * w_scale)?))

(QGemm without `y_scale` ends at the Gemm, its alpha kept), which the CPU
lowers as it lowers any QDQ model. The float product may round an
accumulator a value lands on a requantisation boundary differently from
the integer one, by a quantum at most. A per-channel weight scale
dequantises along the weight's output-channel axis. Nothing else is touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, IntegerAttr, ModuleOp, TensorType, i64
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
    constant_value_of,
)
from ember.dialects.graph.ops_qlinear import BIAS_OPERAND, weight_channel_axis
from ember.passes.graph.builders import insert_constant, insert_op

_PRODUCTS: dict[type[GraphOp], type[GraphOp]] = {
    QLinearConvOp: ConvOp, QLinearMatMulOp: MatMulOp, QGemmOp: GemmOp,
}  # fmt: skip


def _float_type(value: SSAValue) -> TensorType:
    assert isinstance(value.type, TensorType)
    return TensorType(Float32Type(), value.type.get_shape())


def _dequantise(rewriter: PatternRewriter, anchor: GraphOp, data: SSAValue, scale: SSAValue,
                point: list[SSAValue], axis: int) -> SSAValue:  # fmt: skip
    return insert_op(rewriter, anchor, DequantizeLinearOp, [data, scale, point], _float_type(data),
                     {"axis": IntegerAttr(axis, i64)})  # fmt: skip


class ExpandQLinear(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QLinearConvOp | QLinearMatMulOp | QGemmOp,
                          rewriter: PatternRewriter) -> None:  # fmt: skip
        names = [s.name for s in op.SPEC.operands]
        group = {name: op.operand_group(name) for name in names}
        x, x_scale, x_point, w, w_scale, w_point = (group[n] for n in names[:6])
        dq_x = _dequantise(rewriter, op, x[0], x_scale[0], x_point, 1)
        dq_w = _dequantise(rewriter, op, w[0], w_scale[0], w_point, weight_channel_axis(op))
        bias = group.get(BIAS_OPERAND.get(type(op), ""), [])
        extra: list = []
        if bias:
            sx, sw = constant_value_of(x_scale[0]), constant_value_of(w_scale[0])
            if sx is None or sw is None:
                return  # a bias scale computed at run time is not modelled
            scale = insert_constant(rewriter, op, (np.float32(sx) * np.asarray(sw, np.float32))
                                    .reshape(-1).astype(np.float32))  # fmt: skip
            extra = [[_dequantise(rewriter, op, bias[0], scale, [], 0)]]
        elif isinstance(op, QLinearConvOp | QGemmOp):
            extra = [[]]
        names_kept = {a.name for a in _PRODUCTS[type(op)].SPEC.attributes}
        properties = {k: v for k, v in op.properties.items() if k in names_kept}
        y_scale = group.get("y_scale") or []
        float_type = _float_type(op.results[0])
        product = insert_op(rewriter, op, _PRODUCTS[type(op)], [dq_x, dq_w, *extra], float_type,
                            properties)  # fmt: skip
        if not y_scale:
            product.name_hint = op.results[0].name_hint
            rewriter.replace(op, [], [product])
            return
        operands = [product, y_scale[0], group["y_zero_point"]]
        result_type = op.result_types[0]
        assert isinstance(result_type, TensorType)
        quantised = insert_op(rewriter, op, QuantizeLinearOp, operands, result_type)
        quantised.name_hint = op.results[0].name_hint
        rewriter.replace(op, [], [quantised])


@dataclass(frozen=True)
class ExpandQLinearPass(ModulePass):
    """Expands quantised products into DequantizeLinear -> product ->
    QuantizeLinear (see the module docstring)."""

    name = "graph-expand-qlinear"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ExpandQLinear()).rewrite_module(op)


__all__ = ["ExpandQLinearPass"]
