"""`graph-expand-qlinear`: quantised products back into QDQ chains, and the
integer products and DynamicQuantizeLinear into the ops they are made of,
for the CPU pipeline.

`graph.qlinear_conv`, `graph.qlinear_matmul` and `graph.qgemm` (from an
ONNX file, or left to the host by `graph-partition-npu` after
`graph-fuse-qdq`) become

    QuantizeLinear(Conv|MatMul|Gemm(DequantizeLinear(x), DequantizeLinear(w),
                                     DequantizeLinear(bias, x_scale * w_scale)?))

(QGemm without `y_scale` ends at the Gemm, its alpha kept), which the CPU
lowers as it lowers any QDQ model. The float product may round an
accumulator a value lands on a requantisation boundary differently from
the integer one, by a quantum at most. A per-channel weight scale
dequantises along the weight's output-channel axis.

The integer products keep integers: `graph.conv_integer` and
`graph.matmul_integer` become the int32 Conv or MatMul of their operands
cast to int32 less their zero points (a per-channel or per-row zero point
reshaped to broadcast along its axis; a constant one of 0 left out), which
the CPU lowers as it lowers any integer product: exact, as ONNX defines
them. `graph.dynamic_quantize_linear` becomes the ops of ONNX's function
body (ReduceMin/ReduceMax, Min/Max with 0, Div, Clip, Round, Cast and a
QuantizeLinear), with onnxruntime's scale of 1 for a tensor of zeros where
the body divides by 0. Nothing else is touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    Float32Type,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.graph import (
    CastOp,
    ClipOp,
    ConvIntegerOp,
    ConvOp,
    DequantizeLinearOp,
    DivOp,
    DynamicQuantizeLinearOp,
    EqualOp,
    GemmOp,
    GraphOp,
    MatMulIntegerOp,
    MatMulOp,
    MaxOp,
    MinOp,
    QGemmOp,
    QLinearConvOp,
    QLinearMatMulOp,
    QuantizeLinearOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReshapeOp,
    RoundOp,
    SubOp,
    WhereOp,
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


def _retyped(value: SSAValue, element: Attribute) -> TensorType:
    assert isinstance(value.type, TensorType)
    return TensorType(element, value.type.get_shape(), value.type.encoding)


def _centred(rewriter: PatternRewriter, anchor: GraphOp, data: SSAValue, point: list[SSAValue],
             point_shape: tuple[int, ...] | None) -> SSAValue:  # fmt: skip
    """`data - point` in int32; the zero point reshaped to `point_shape` when
    given (per channel or per row), left out when it is a constant 0."""
    wide = insert_op(rewriter, anchor, CastOp, [data], _retyped(data, i32), {"to": i32})
    if not point:
        return wide
    if (value := constant_value_of(point[0])) is not None:
        if not value.any():
            return wide
        shape = value.shape if point_shape is None else point_shape
        centre = insert_constant(rewriter, anchor, value.astype(np.int32).reshape(shape))
    else:
        centre = insert_op(rewriter, anchor, CastOp, [point[0]], _retyped(point[0], i32),
                           {"to": i32})  # fmt: skip
        if point_shape is not None:
            target = insert_constant(rewriter, anchor, np.array(point_shape, np.int64))
            centre = insert_op(rewriter, anchor, ReshapeOp, [centre, target],
                               TensorType(i32, point_shape))  # fmt: skip
    return insert_op(rewriter, anchor, SubOp, [wide, centre], _retyped(data, i32))


def _per_axis(point: list[SSAValue], trailing: int) -> tuple[int, ...] | None:
    """The shape that broadcasts a 1-D zero point of more than one value (one
    per output channel or row) along its axis: its values, then `trailing`
    1s; None for a zero point that broadcasts as it is."""
    if not point:
        return None
    assert isinstance(point[0].type, TensorType)
    dims = point[0].type.get_shape()
    return (dims[0], *[1] * trailing) if len(dims) == 1 and dims[0] != 1 else None


class ExpandIntegerProduct(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvIntegerOp | MatMulIntegerOp,
                          rewriter: PatternRewriter) -> None:  # fmt: skip
        x_name, w_name, x_point_name, w_point_name = (s.name for s in op.SPEC.operands)
        x, w = op.operand_group(x_name)[0], op.operand_group(w_name)[0]
        x_point, w_point = op.operand_group(x_point_name), op.operand_group(w_point_name)
        assert isinstance(x.type, TensorType) and isinstance(w.type, TensorType)
        if isinstance(op, ConvIntegerOp):  # w's zero point per output channel
            x_shape, w_shape = None, _per_axis(w_point, w.type.get_num_dims() - 1)
        else:  # A's per row, B's per column (as it broadcasts)
            x_shape = _per_axis(x_point, 1) if x.type.get_num_dims() > 1 else None
            w_shape = None
        centred_x = _centred(rewriter, op, x, x_point, x_shape)
        centred_w = _centred(rewriter, op, w, w_point, w_shape)
        product_class = ConvOp if isinstance(op, ConvIntegerOp) else MatMulOp
        bias: list = [[]] if product_class is ConvOp else []
        names_kept = {a.name for a in product_class.SPEC.attributes}
        properties = {k: v for k, v in op.properties.items() if k in names_kept}
        result_type = op.result_types[0]
        assert isinstance(result_type, TensorType)
        product = insert_op(rewriter, op, product_class, [centred_x, centred_w, *bias],
                            result_type, properties)  # fmt: skip
        product.name_hint = op.results[0].name_hint
        rewriter.replace(op, [], [product])


_UINT8 = IntegerType(8, Signedness.UNSIGNED)


class ExpandDynamicQuantizeLinear(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DynamicQuantizeLinearOp, rewriter: PatternRewriter) -> None:
        x = op.operands[0]
        scalar, flag, point_type = TensorType(Float32Type(), []), TensorType(i1, []), \
            TensorType(_UINT8, [])  # fmt: skip

        def scalar_op(op_class: type[GraphOp], operands: list, properties: dict | None = None,
                      result_type: TensorType = scalar) -> SSAValue:  # fmt: skip
            return insert_op(rewriter, op, op_class, operands, result_type, properties)

        zero = insert_constant(rewriter, op, np.array(0, np.float32))
        one = insert_constant(rewriter, op, np.array(1, np.float32))
        q_max = insert_constant(rewriter, op, np.array(255, np.float32))
        everything = {"keepdims": IntegerAttr(0, i64)}
        low = scalar_op(MinOp, [[scalar_op(ReduceMinOp, [x, []], everything), zero]])
        high = scalar_op(MaxOp, [[scalar_op(ReduceMaxOp, [x, []], everything), zero]])
        spread = scalar_op(DivOp, [scalar_op(SubOp, [high, low]), q_max])
        flat = scalar_op(EqualOp, [high, low], result_type=flag)
        scale = scalar_op(WhereOp, [flat, one, spread])
        point = scalar_op(SubOp, [zero, scalar_op(DivOp, [low, scale])])
        point = scalar_op(RoundOp, [scalar_op(ClipOp, [point, [zero], [q_max]])])
        point = scalar_op(CastOp, [point], {"to": _UINT8}, point_type)
        y_type = op.result_types[0]
        assert isinstance(y_type, TensorType)
        y = insert_op(rewriter, op, QuantizeLinearOp, [x, scale, [point]], y_type)
        for new, old in zip((y, scale, point), op.results, strict=True):
            new.name_hint = old.name_hint
        rewriter.replace(op, [], [y, scale, point])


@dataclass(frozen=True)
class ExpandQLinearPass(ModulePass):
    """Expands quantised products into DequantizeLinear -> product ->
    QuantizeLinear, integer products into int32 products of centred
    operands, DynamicQuantizeLinear into its function body (see the module
    docstring)."""

    name = "graph-expand-qlinear"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [ExpandQLinear(), ExpandIntegerProduct(), ExpandDynamicQuantizeLinear()]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)


__all__ = ["ExpandQLinearPass"]
