"""`graph-fold-constants`: evaluates ops whose operands are all constants.

An op whose operands all come from `graph.constant` is run through its
reference kernel and replaced by constants holding its results: the
`ConstantOfShape` weights of exported models, the Shape/Gather/Concat/
Unsqueeze/Reshape chains that exporters emit for shapes, and the weights that
`graph-layout` re-lays out. `ConstantOfShape` folds into a splat (one element
stored, whatever the shape). `LayoutTransform` only moves its operand's
elements, so its result is never larger than its operand: it folds whatever
its size, and a splat stays a splat. Other results are folded only when their
shapes are static and they hold at most `max-elements` elements in all, and
no splat operand would expand to more than that, so folding never blows up
memory. Shape and Size of a value whose shape is static fold whatever the
value (its dims are known; once an input's sizes are pinned, the shape
arithmetic exporters build from them folds away). Constants left without
uses are removed. Other ops with any non-constant operand, or with results
of unknown shape, are left alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import dce

from ember.dialects.graph import (
    ConstantOfShapeOp,
    ConstantOp,
    GraphOp,
    LayoutTransformOp,
    ShapeOp,
    SizeOp,
)
from ember.dialects.graph.types import DYNAMIC, array_from_dense, dense_from_array
from ember.errors import EmberError
from ember.passes.graph.builders import constant_op
from ember.reference.evaluate import evaluate


def static_element_count(value_type: object) -> int | None:
    if not isinstance(value_type, TensorType):
        return None
    shape = value_type.get_shape()
    return None if DYNAMIC in shape else math.prod(shape)


def _is_splat(attr: DenseIntOrFPElementsAttr) -> bool:
    """One element stored for a tensor of several (what ConstantOfShape folds into)."""
    count = static_element_count(attr.get_type())
    bits = attr.get_element_type().bitwidth  # type: ignore[attr-defined]
    return count is not None and count > 1 and len(attr.data.data) * 8 == bits


REARRANGING_OPS: tuple[type[GraphOp], ...] = (LayoutTransformOp,)
"""Ops whose result holds exactly their operand's elements, moved: folding one
never needs more memory than its operand already takes (weights re-laid out
for a convolution are as large as the model's weights), so the size limit
does not apply to them."""


@dataclass
class FoldConstantOperands(RewritePattern):
    max_elements: int

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
            return
        owners = [v.owner for v in op.operands]
        if not all(isinstance(o, ConstantOp) for o in owners):
            return
        if not all(isinstance(o.properties["value"], DenseIntOrFPElementsAttr) for o in owners):
            return  # elided data cannot be folded
        counts = [static_element_count(t) for t in op.result_types]
        if any(c is None for c in counts):
            return
        if isinstance(op, ConstantOfShapeOp):
            attrs = [op.splat()]
        elif isinstance(op, REARRANGING_OPS):
            attrs = self._rearranged(op, owners)
        elif sum(c for c in counts if c is not None) > self.max_elements:
            return
        elif any(self._expanded_splat(o, self.max_elements) for o in owners):
            return
        else:
            attrs = self._evaluate(op, owners)
        new_ops = [constant_op(attr) for attr in attrs]
        for new_op, old in zip(new_ops, op.results):
            new_op.results[0].name_hint = old.name_hint
        rewriter.replace(op, new_ops, [o.results[0] for o in new_ops])

    @staticmethod
    def _expanded_splat(owner: Operation, max_elements: int) -> bool:
        """A splat operand stores one element, but evaluating expands it in full:
        one over the limit would be materialised (ReduceSum of a 2^30-element
        ConstantOfShape needs 4 GiB for a one-element result)."""
        value = owner.properties["value"]
        assert isinstance(value, DenseIntOrFPElementsAttr)
        count = static_element_count(value.get_type())
        return _is_splat(value) and count is not None and count > max_elements

    @staticmethod
    def _rearranged(op: GraphOp, owners: list[Operation]) -> list[DenseIntOrFPElementsAttr]:
        """The moved elements; a splat moved is the same splat, kept as one element."""
        value, result_type = owners[0].properties["value"], op.result_types[0]
        assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(result_type, TensorType)
        if _is_splat(value):
            return [DenseIntOrFPElementsAttr(result_type, value.data)]
        return FoldConstantOperands._evaluate(op, owners)

    @staticmethod
    def _evaluate(op: GraphOp, owners: list[Operation]) -> list[DenseIntOrFPElementsAttr]:
        arrays = [array_from_dense(o.properties["value"]) for o in owners]  # type: ignore[arg-type]
        try:
            outputs = evaluate(op, arrays)
        except EmberError as error:
            raise EmberError(f"graph-fold-constants: cannot fold {error}") from error
        return [dense_from_array(a) for a in outputs]


class FoldStaticShapes(RewritePattern):
    """Shape and Size of a value whose type has a static shape."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ShapeOp | SizeOp) or isinstance(op.operands[0].owner, ConstantOp):
            return  # a constant operand folds with the others
        shape = op.operands[0].type.get_shape()  # type: ignore[attr-defined]
        if DYNAMIC in shape:
            return
        if isinstance(op, ShapeOp):
            value = np.array(shape[op.attr("start") : op.attr("end")], dtype=np.int64)
        else:
            value = np.array(math.prod(shape), dtype=np.int64)
        new = constant_op(dense_from_array(value))
        new.results[0].name_hint = op.results[0].name_hint
        rewriter.replace(op, [new], [new.results[0]])


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Replaces `graph` ops with all-constant operands by their values."""

    name = "graph-fold-constants"

    max_elements: int = 1 << 22
    """Largest total number of result elements an op may fold into (ConstantOfShape
    folds into a splat whatever its size)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [FoldStaticShapes(), FoldConstantOperands(self.max_elements)]
        )
        PatternRewriteWalker(patterns).rewrite_module(op)
        dce(op)
