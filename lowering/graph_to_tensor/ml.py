"""Graph-to-tensor lowering of the `ai.onnx.ml` operators Binarizer and
ArrayFeatureExtractor.

- Binarizer is one all-parallel generic: 1 where X > threshold, else 0. An
  integer X compares with floor(threshold), which is the same test exactly
  (a threshold beyond X's range makes every element 1 or every one 0, a NaN
  threshold every one 0).
- ArrayFeatureExtractor is `ember_linalg.gather` along X's last axis by the
  flattened indices (read at run time: wrapped when negative, clamped,
  docs/semantics.md), a 1-D X reshaped to one row first.
"""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from ember.dialects import ember_linalg
from ember.dialects.graph import ArrayFeatureExtractorOp, BinarizerOp, GraphOp
from ember.dialects.graph.types import is_float
from ember.lowering.graph_to_tensor.common import (
    Body,
    Emitter,
    FamilyPattern,
    _elem,
    _highest,
    _lowest,
    _shape,
)


def _lower_binarizer(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    t, threshold = _elem(x), float(op.attr("threshold"))

    def body(b: Body, args: list[SSAValue]) -> SSAValue:
        one, zero = b.const(1, t), b.const(0, t)
        if is_float(t):
            return b.select(b.cmp("gt", args[0], b.const(threshold, t)), one, zero)
        if math.isnan(threshold) or threshold >= _highest(t):
            return zero
        bound = math.floor(threshold)
        if bound < _lowest(t):
            return one
        return b.select(b.cmp("gt", args[0], b.const(bound, t)), one, zero)

    return [e.parallel([x], _shape(x), t, body)]


def _lower_array_feature_extractor(e: Emitter, op: GraphOp) -> list[SSAValue]:
    data, indices = op.operands
    shape = _shape(data)
    if len(shape) == 1:
        data = e.reshape(data, [1, *shape])
    rank = max(len(shape), 2)
    flat = e.reshape(indices, [math.prod(_shape(indices))])  # type: ignore[arg-type]
    maps = ember_linalg.along_axis(rank, rank - 1, 1)
    return [e.value(ember_linalg.GatherOp.on_tensors(data, flat, op.result_types[0], maps))]


class MLPattern(FamilyPattern):
    """Binarizer (one generic) and ArrayFeatureExtractor (a gather)."""

    lowerings = {BinarizerOp: _lower_binarizer,
                 ArrayFeatureExtractorOp: _lower_array_feature_extractor}  # fmt: skip
