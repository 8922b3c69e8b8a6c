"""Graph-to-tensor lowering of the `ai.onnx.ml` operators Binarizer,
ArrayFeatureExtractor and TreeEnsemble.

- Binarizer is one all-parallel generic: 1 where X > threshold, else 0. An
  integer X compares with floor(threshold), which is the same test exactly
  (a threshold beyond X's range makes every element 1 or every one 0, a NaN
  threshold every one 0).
- ArrayFeatureExtractor is `ember_linalg.gather` along X's last axis by the
  flattened indices (read at run time: wrapped when negative, clamped,
  docs/semantics.md), a 1-D X reshaped to one row first.
- TreeEnsemble is one all-parallel generic over Y [N, n_targets]. It reads
  X once per feature a split tests (the map (n, t) -> (n, feature)); the
  body walks each tree as nested `arith.select`s of its leaves' weights and
  targets, and folds the weight of each tree whose leaf names the target
  (`linalg.index` 1) into the accumulator, computing in f64 and rounding to
  Y's type after each tree, as the reference kernel does; for MIN and MAX
  an i1 says whether a tree has named the target yet (none: 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import f64, i1, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue

from ember.dialects import ember_linalg
from ember.dialects.graph import ArrayFeatureExtractorOp, BinarizerOp, GraphOp, TreeEnsembleOp
from ember.dialects.graph.ops_ml import Leaf, Split, forest_of
from ember.dialects.graph.types import is_float
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    Body,
    Emitter,
    FamilyPattern,
    _dim,
    _elem,
    _highest,
    _identity,
    _lowest,
    _map,
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


_RELATIONS = {"LEQ": "ole", "LT": "olt", "GTE": "oge", "GT": "ogt", "EQ": "oeq", "NEQ": "une"}
"""The f64 comparison of each split mode (NaN compares false, but for NEQ)."""


def _goes_true(b: Body, split: Split, x: SSAValue) -> SSAValue:
    if split.mode == "MEMBER":
        assert isinstance(split.value, frozenset)
        found = b.const(0, i1)
        for member in sorted(split.value):
            found = b.or_(found, b.cmpf("oeq", x, b.const(member, f64)))
    else:
        found = b.cmpf(_RELATIONS[split.mode], x, b.const(float(split.value), f64))  # type: ignore[arg-type]
    return b.or_(found, b.is_nan(x)) if split.missing_tracks_true else found


def _walk(b: Body, tree: Split | Leaf, features: dict[int, SSAValue]) -> tuple[SSAValue, SSAValue]:
    """The weight (f64) and target (i64) of the leaf the row reaches."""
    if isinstance(tree, Leaf):
        return b.const(tree.weight, f64), b.const(tree.target, i64)
    true_weight, true_target = _walk(b, tree.true, features)
    false_weight, false_target = _walk(b, tree.false, features)
    condition = _goes_true(b, tree, features[tree.feature])
    return (b.select(condition, true_weight, false_weight),
            b.select(condition, true_target, false_target))  # fmt: skip


_AGGREGATE: dict[str, Callable[[Body, SSAValue, SSAValue, int], SSAValue]] = {
    "SUM": lambda b, acc, weight, trees: b.add(acc, weight),
    "AVERAGE": lambda b, acc, weight, trees: b.add(acc, b.div(weight, b.const(trees, f64))),
    "MIN": lambda b, acc, weight, trees: b.min(acc, weight),
    "MAX": lambda b, acc, weight, trees: b.max(acc, weight),
}
"""(body, accumulator, a tree's weight, both f64; the number of trees) -> the new accumulator."""


def _lower_tree_ensemble(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    t = _elem(op.results[0])
    forest = forest_of(op.attribute_values(), _shape(x)[1])  # type: ignore[arg-type]
    features = forest.features()
    first = forest.aggregate in ("MIN", "MAX")  # the first weight replaces the 0

    def body(b: Body, args: list[SSAValue]) -> list[SSAValue]:
        row = {f: b.convert(v, f64) for f, v in zip(features, args[: len(features)])}
        target = b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(1)), i64))
        acc, seen = b.const(0, t), b.const(0, i1)
        for tree in forest.trees:
            weight, leaf_target = _walk(b, tree, row)
            combined = _AGGREGATE[forest.aggregate](
                b, b.convert(acc, f64), weight, len(forest.trees)
            )
            if first:
                combined = b.select(seen, combined, weight)
            hit = b.cmp("eq", leaf_target, target)
            acc = b.select(hit, b.convert(combined, t), acc)
            seen = b.or_(seen, hit)
        return [acc]

    maps = [_map(2, [_dim(0), f]) for f in features]
    out = e.empty(_shape(op.results[0]), t)
    return e.generic([x] * len(features), [out], [*maps, _identity(2)], [PARALLEL] * 2, body)


class MLPattern(FamilyPattern):
    """Binarizer (one generic), ArrayFeatureExtractor (a gather) and
    TreeEnsemble (one generic)."""

    lowerings = {BinarizerOp: _lower_binarizer,
                 ArrayFeatureExtractorOp: _lower_array_feature_extractor,
                 TreeEnsembleOp: _lower_tree_ensemble}  # fmt: skip
