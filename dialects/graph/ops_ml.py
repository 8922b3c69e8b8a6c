"""Operators of ONNX's `ai.onnx.ml` domain: `graph.binarizer` and
`graph.array_feature_extractor`.

- Binarizer: 1 where X > threshold, else 0, in X's type (a NaN gives 0).
- ArrayFeatureExtractor: the elements of X's last axis that the int64
  indices Y name, in Y's order (Y read flat; a negative index counts from
  the end). Z is X's shape with the last axis replaced by Y's size; a 1-D X
  gives a [1, size] Z, as onnxruntime does.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType, TensorType, i64

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result
from ember.dialects.graph.spec import ML_DOMAIN, OpSpec, float_attr, one
from ember.dialects.graph.types import DYNAMIC

_BINARIZER_TYPES = (Float32Type(), Float64Type(), i64, IntegerType(32))


def binarizer(ctx: ShapeContext) -> list[TensorType]:
    if ctx.element_type("X") not in _BINARIZER_TYPES:
        raise ShapeError(f"X must be f32, f64, i64 or i32, got {ctx.type('X')}")
    return [ctx.type("X")]


def array_feature_extractor(ctx: ShapeContext) -> list[TensorType]:
    data = ctx.shape("X")
    if not data:
        raise ShapeError(f"X must have rank >= 1, got {ctx.type('X')}")
    if ctx.element_type("Y") != i64:
        raise ShapeError(f"Y must be an int64 tensor, got {ctx.type('Y')}")
    indices = ctx.shape("Y")
    known = all(isinstance(d, int) and d != DYNAMIC for d in indices)
    count = math.prod(indices) if known else DYNAMIC  # type: ignore[arg-type]
    rows = data[:-1] if len(data) > 1 else (1,)
    return result(ctx.element_type("X"), [*rows, count])


SPECS: list[OpSpec] = [
    OpSpec("Binarizer", [one("X")], [one("Y")], binarizer,
           attributes=(float_attr("threshold", 0.0),),
           summary="1 where X > threshold, else 0 (ai.onnx.ml).", domain=ML_DOMAIN),
    OpSpec("ArrayFeatureExtractor", [one("X"), one("Y")], [one("Z")], array_feature_extractor,
           summary="Selects elements of X's last axis by index (ai.onnx.ml).", domain=ML_DOMAIN),
]  # fmt: skip


@graph_op(SPECS)
class BinarizerOp(GraphOp): ...


@graph_op(SPECS)
class ArrayFeatureExtractorOp(GraphOp): ...
