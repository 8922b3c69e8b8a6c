"""`graph-widen-accumulators`: half-precision storage, f32 arithmetic where it
accumulates.

A model in float16, bfloat16 (or another narrow float: docs/types.md) keeps
its tensors in that type between ops, but each op that sums many terms
(products, convolutions, pooling averages, reductions, softmax, the
normalisations, attention, the losses, scans, transforms and the samplers:
`ACCUMULATING`) computes in f32: its half operands are cast
to f32 in front of it, its half results cast back after it. A constant
operand (a weight) is converted here, once, so the weights blob holds it in
f32 and no cast runs for it. Elementwise ops are left alone: float16 computes
as LLVM's `half` (each op rounded once, as ONNX says), the narrow floats in
f32 per op (`convert-graph-to-tensor`).

The narrow floats (bf16, float8), which have no arithmetic in LLVM, also
run the max pools, ReduceMax/Min/Prod, ArgMax/ArgMin, LRN, TopK and Hardmax in f32
(`NARROW_ONLY`). Ops with no half operand, and the ops outside the tables,
are unchanged.

One accumulating op keeps its half type here: a MatMul (or Gemm) of a few
rows by constant weights in bfloat16 or float16 (`keeps_half_weights`),
whose weights stay in the half type in the weights blob.
`convert-graph-to-tensor` lowers it to a product with f32 sums of
operands widened in registers (`lowering/graph_to_tensor/contractions.py`):
for bfloat16, with an even number of terms, of bfloat16 pairs (the CPU's
`vdpbf16ps`); for float16, of vectors widened by `vcvtph2ps`. Such a
product reads each weight once per row, so its time is the weights'
traffic, which the half type halves: 768 x 3072 bfloat16 weights ran 2.4
times faster for one row and 1.4 times for four on an Emerald Rapids core
(AVX512-BF16); from 8 rows on the f32 micro-kernels, on weights widened
once at compile time, are as fast or faster there (`vdpbf16ps` issues at a
quarter of the rate of `vfmadd231ps`, for twice the products each).
`graph-optimize` runs it at every level once constants are folded, before
layout and fusion, which fuse the casts into the elementwise groups around.
"""

from __future__ import annotations

import math
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16, f16, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ember.dialects import graph
from ember.dialects.graph import CastOp, GraphOp, constant_value_of
from ember.dialects.graph.spec import Arity
from ember.dialects.graph.types import is_narrow_float
from ember.passes.graph.builders import insert_constant, insert_op

ACCUMULATING = (
    graph.MatMulOp, graph.GemmOp, graph.ConvOp, graph.ConvTransposeOp, graph.AveragePoolOp,
    graph.GlobalAveragePoolOp, graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceL1Op,
    graph.ReduceL2Op, graph.ReduceSumSquareOp, graph.ReduceLogSumExpOp, graph.SoftmaxOp,
    graph.LogSoftmaxOp, graph.BatchNormalizationOp, graph.InstanceNormalizationOp,
    graph.LayerNormalizationOp, graph.RMSNormalizationOp, graph.GroupNormalizationOp,
    graph.MeanVarianceNormalizationOp, graph.LpNormalizationOp, graph.LpPoolOp,
    graph.ReduceLogSumOp, graph.CumSumOp, graph.CumProdOp, graph.EinsumOp, graph.DetOp,
    graph.NegativeLogLikelihoodLossOp, graph.SoftmaxCrossEntropyLossOp, graph.AttentionOp,
    graph.LinearAttentionOp, graph.CausalConvWithStateOp, graph.DFTOp, graph.STFTOp,
    graph.GridSampleOp, graph.AffineGridOp, graph.RoiAlignOp, graph.DeformConvOp, graph.Col2ImOp,
)  # fmt: skip
"""The ops whose results sum (or multiply) many terms: computed in f32 for half tensors."""

NARROW_ONLY = (
    graph.MaxPoolOp, graph.GlobalMaxPoolOp, graph.ReduceMaxOp, graph.ReduceMinOp,
    graph.ReduceProdOp, graph.ArgMaxOp, graph.ArgMinOp, graph.LRNOp, graph.TopKOp,
    graph.HardmaxOp,
)  # fmt: skip
"""Ops that compute in f16 as they are (LLVM's `half`) but that the narrow
floats, which have no arithmetic, also run in f32 (exactly, for the maxima)."""


def is_half(t: Attribute) -> bool:
    """A tensor of float16 or a narrow float."""
    return isinstance(t, TensorType) and (t.element_type == f16 or is_narrow_float(t.element_type))


def _is_narrow(t: Attribute) -> bool:
    return isinstance(t, TensorType) and is_narrow_float(t.element_type)


HALF_WEIGHT_ROWS = 4
"""The most rows (A's dims but the last, multiplied) of a MatMul or Gemm
that keeps its half weights (module docstring)."""


def keeps_half_weights(op: Operation) -> bool:
    """Whether `op` is a MatMul, or a Gemm without transA, of at most
    `HALF_WEIGHT_ROWS` static rows by a constant matrix, all in bfloat16
    (with an even number of terms to sum: pairs) or all in float16: computed
    in f32 on the half operands (module docstring), not widened here."""
    if isinstance(op, graph.GemmOp):
        if op.attr("transA"):
            return False
        a, b = op.operand_group("A")[0], op.operand_group("B")[0]
        terms = 1 if op.attr("transB") else 0
    elif isinstance(op, graph.MatMulOp):
        (a, b), terms = op.operands, 0
    else:
        return False
    types = (*(v.type for v in op.operands), op.result_types[0])
    if not all(isinstance(t, TensorType) for t in types):
        return False
    half = {t.element_type for t in types}  # type: ignore[attr-defined]
    if half not in ({bf16}, {f16}):
        return False
    assert isinstance(a.type, TensorType) and isinstance(b.type, TensorType)
    shape, rows = b.type.get_shape(), a.type.get_shape()[:-1]
    if len(shape) != 2 or not rows or min(rows) < 0 or shape[terms] < 1:
        return False
    if half == {bf16} and shape[terms] % 2:
        return False
    return math.prod(rows) <= HALF_WEIGHT_ROWS and constant_value_of(b) is not None


def _widens(op: Operation) -> bool:
    if keeps_half_weights(op):
        return False
    if isinstance(op, ACCUMULATING):
        return any(is_half(v.type) for v in op.operands)
    return isinstance(op, NARROW_ONLY) and any(_is_narrow(v.type) for v in op.operands)


def _wide(t: TensorType) -> TensorType:
    return TensorType(f32, t.get_shape(), t.encoding)


def _widened(value: SSAValue, anchor: Operation, rewriter: PatternRewriter) -> SSAValue:
    """`value` in f32: a constant converted now, anything else through a Cast."""
    assert isinstance(value.type, TensorType)
    if (array := constant_value_of(value)) is not None:
        return insert_constant(rewriter, anchor, array.astype("float32"))
    return insert_op(rewriter, anchor, CastOp, [value], _wide(value.type),
                     {"to": f32})  # fmt: skip


class WidenAccumulators(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GraphOp, rewriter: PatternRewriter) -> None:
        if not _widens(op):
            return
        operands: list[Any] = []
        for spec in op.SPEC.operands:
            group = [_widened(v, op, rewriter) if is_half(v.type) else v
                     for v in op.operand_group(spec.name)]  # fmt: skip
            operands.append(group[0] if spec.arity is Arity.SINGLE else group)
        result_types = [_wide(t) if is_half(t) else t for t in op.result_types]
        wide = type(op).build(operands=operands,
                              result_types=type(op).group_result_types(result_types),
                              properties=dict(op.properties))  # fmt: skip
        rewriter.insert(wide, InsertPoint.before(op))
        results = []
        for old, new in zip(op.results, wide.results, strict=True):
            if is_half(old.type):
                assert isinstance(old.type, TensorType)
                new = insert_op(rewriter, op, CastOp, [new], old.type,
                                {"to": old.type.element_type})  # fmt: skip
            new.name_hint = old.name_hint
            results.append(new)
        rewriter.replace(op, [], results)


class WidenAccumulatorsPass(ModulePass):
    """Runs the ops of `ACCUMULATING` on half tensors in f32 (module docstring)."""

    name = "graph-widen-accumulators"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(WidenAccumulators(), apply_recursively=False).rewrite_module(op)
