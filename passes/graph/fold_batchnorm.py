"""`graph-fold-batchnorm`: inference BatchNormalization folded into constants.

With constant statistics, BatchNormalization is an affine map per channel,
y = x * s + t with s = scale / sqrt(var + epsilon) and t = B - mean * s
(computed in float64, cast back to the weight's or x's type once). When x is
the only use of an op that is linear in a constant weight, the map moves into
that weight and its bias and the normalisation disappears:

| producer of x | becomes |
|---|---|
| Conv, constant W, constant or no bias b | Conv with W * s over W's axis 0 (the output channel, grouped convs too) and bias (b - mean) * s + B |
| Gemm, constant B (either transB), constant or no C | Gemm with op(B)'s columns scaled by s and C = beta * C * s + t (beta becomes 1; alpha stays) |
| MatMul of a 2-D x by a constant 2-D weight | Gemm with the weight's columns scaled by s and C = t |

Any other BatchNormalization with constant statistics becomes Mul(x, s) then
Add(t), s and t shaped [C, 1, ...] to broadcast over the channel axis: two
cheap elementwise ops instead of the normalisation.

Left alone: a BatchNormalization whose scale, B, mean or var is not a
constant, one in training mode, non-float tensors, and statistics that make s
or t infinite or NaN (var + epsilon <= 0), where the rewritten ops would not
compute what the normalisation does. A producer whose result has another user
is not folded (that user must keep seeing the unscaled values); its
BatchNormalization becomes the Mul/Add. Run `dce` afterwards to drop the
folded producers and their old weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.graph import (
    AddOp,
    BatchNormalizationOp,
    ConvOp,
    GemmOp,
    GraphOp,
    MatMulOp,
    MulOp,
    constant_value_of,
)
from ember.dialects.graph.types import is_float, numpy_dtype, shape_of
from ember.dialects.source_names import merged_location
from ember.passes.graph.builders import insert_constant, insert_op


@dataclass(frozen=True)
class ChannelAffine:
    """y = x * scale + shift along the channel axis, in float64."""

    scale: np.ndarray
    shift: np.ndarray


def _float_constant(value: SSAValue) -> np.ndarray | None:
    # The element type, not the NumPy dtype, says "float": bf16 arrays have kind 'V'.
    if not (isinstance(value.type, TensorType) and is_float(value.type.element_type)):
        return None
    return constant_value_of(value)


def channel_affine(bn: GraphOp) -> ChannelAffine | None:
    """The per-channel map an inference BatchNormalization computes, or None
    when it is not known at compile time."""
    if bn.attr("training_mode"):
        return None
    x = bn.operand_group("X")[0]
    if not (isinstance(x.type, TensorType) and is_float(x.type.element_type)):
        return None
    names = ("scale", "B", "input_mean", "input_var")
    params = [_float_constant(bn.operand_group(name)[0]) for name in names]
    if any(p is None for p in params):
        return None
    scale, bias, mean, var = (np.asarray(p, dtype=np.float64) for p in params)  # type: ignore[arg-type]
    with np.errstate(all="ignore"):  # non-finite results are rejected just below
        s = scale / np.sqrt(var + bn.attr("epsilon"))
        t = bias - mean * s
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(t))):
        return None
    return ChannelAffine(s, t)


# ------------------------------------------------------------------- folds

Fold = Callable[[GraphOp, ChannelAffine, GraphOp, PatternRewriter], SSAValue | None]
"""(producer, affine, batchnorm, rewriter) -> the value that replaces the
batchnorm, or None when the producer's weights are not constants. A fold
inserts nothing before it has decided to apply."""


def _optional_constant(producer: GraphOp, name: str) -> tuple[bool, np.ndarray | None]:
    """(usable, value): an absent optional operand is usable, with value None."""
    group = producer.operand_group(name)
    if not group:
        return True, None
    value = _float_constant(group[0])
    return value is not None, value


def into_conv(conv: GraphOp, affine: ChannelAffine, bn: GraphOp,
              rewriter: PatternRewriter) -> SSAValue | None:  # fmt: skip
    w = _float_constant(conv.operand_group("W")[0])
    usable, b = _optional_constant(conv, "B")
    if w is None or not usable or w.shape[0] != affine.scale.size:
        return None
    per_output_channel = affine.scale.reshape(-1, *[1] * (w.ndim - 1))
    weight = insert_constant(rewriter, bn, (w * per_output_channel).astype(w.dtype))
    old_bias = np.zeros(w.shape[0]) if b is None else b.astype(np.float64)
    bias = insert_constant(rewriter, bn, (old_bias * affine.scale + affine.shift).astype(w.dtype))
    operands = [conv.operand_group("X")[0], weight, [bias]]
    return insert_op(rewriter, bn, ConvOp, operands, bn.result_types[0], dict(conv.properties),  # type: ignore[arg-type]
                     merged_location([conv.location, bn.location]))  # fmt: skip


def into_gemm(gemm: GraphOp, affine: ChannelAffine, bn: GraphOp,
              rewriter: PatternRewriter) -> SSAValue | None:  # fmt: skip
    b = _float_constant(gemm.operand_group("B")[0])
    usable, c = _optional_constant(gemm, "C")
    trans_b = bool(gemm.attr("transB"))
    if b is None or not usable or b.shape[0 if trans_b else 1] != affine.scale.size:
        return None
    # op(B) = B.T under transB, so its columns are B's rows.
    columns = affine.scale.reshape(-1, 1) if trans_b else affine.scale
    weight = insert_constant(rewriter, bn, (b * columns).astype(b.dtype))
    # beta goes into C now, so beta = 0 stays exact; C broadcasts against the N channels.
    old_c = np.zeros(1) if c is None else gemm.attr("beta") * c.astype(np.float64)
    new_c = insert_constant(rewriter, bn, (old_c * affine.scale + affine.shift).astype(b.dtype))
    properties = {k: v for k, v in gemm.properties.items() if k != "beta"}
    operands = [gemm.operand_group("A")[0], weight, [new_c]]
    return insert_op(rewriter, bn, GemmOp, operands, bn.result_types[0], properties)  # type: ignore[arg-type]


def into_matmul(matmul: GraphOp, affine: ChannelAffine, bn: GraphOp,
                rewriter: PatternRewriter) -> SSAValue | None:  # fmt: skip
    a = matmul.operand_group("A")[0]
    w = _float_constant(matmul.operand_group("B")[0])
    if w is None or w.ndim != 2 or len(shape_of(a.type)) != 2:
        return None  # a batched MatMul's channel axis is not the weight's
    if w.shape[1] != affine.scale.size:
        return None
    # One Gemm carries both the scaled weight and the shift (as C).
    weight = insert_constant(rewriter, bn, (w * affine.scale).astype(w.dtype))
    shift = insert_constant(rewriter, bn, affine.shift.astype(w.dtype))
    return insert_op(rewriter, bn, GemmOp, [a, weight, [shift]], bn.result_types[0])  # type: ignore[arg-type]


FOLDS: dict[type[GraphOp], Fold] = {ConvOp: into_conv, GemmOp: into_gemm, MatMulOp: into_matmul}


def scale_and_shift(bn: GraphOp, affine: ChannelAffine, rewriter: PatternRewriter) -> SSAValue:
    """Mul(x, s) then Add(t), s and t shaped to broadcast over axis 1."""
    x = bn.operand_group("X")[0]
    rank = len(shape_of(x.type))
    dtype = numpy_dtype(x.type.element_type)  # type: ignore[attr-defined]
    per_channel = (-1, *[1] * (rank - 2))
    scale = insert_constant(rewriter, bn, affine.scale.reshape(per_channel).astype(dtype))
    shift = insert_constant(rewriter, bn, affine.shift.reshape(per_channel).astype(dtype))
    result_type = bn.result_types[0]
    scaled = insert_op(rewriter, bn, MulOp, [x, scale], result_type)  # type: ignore[arg-type]
    return insert_op(rewriter, bn, AddOp, [scaled, shift], result_type)  # type: ignore[arg-type]


class FoldBatchNorm(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormalizationOp, rewriter: PatternRewriter) -> None:
        affine = channel_affine(op)
        if affine is None:
            return
        x = op.operand_group("X")[0]
        producer = x.owner
        replacement = None
        if isinstance(producer, GraphOp) and x.has_one_use():
            fold = FOLDS.get(type(producer))
            replacement = fold(producer, affine, op, rewriter) if fold else None
        if replacement is None:
            replacement = scale_and_shift(op, affine, rewriter)
        replacement.name_hint = op.results[0].name_hint
        rewriter.replace(op, [], [replacement])


class FoldBatchNormPass(ModulePass):
    """Folds inference BatchNormalization into the Conv/Gemm/MatMul weights
    before it, or turns it into Mul + Add."""

    name = "graph-fold-batchnorm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldBatchNorm()).rewrite_module(op)
