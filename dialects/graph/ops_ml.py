"""Operators of ONNX's `ai.onnx.ml` domain: `graph.binarizer`,
`graph.array_feature_extractor` and `graph.tree_ensemble`.

- Binarizer: 1 where X > threshold, else 0, in X's type (a NaN gives 0).
- ArrayFeatureExtractor: the elements of X's last axis that the int64
  indices Y name, in Y's order (Y read flat; a negative index counts from
  the end). Z is X's shape with the last axis replaced by Y's size; a 1-D X
  gives a [1, size] Z, as onnxruntime does.
- TreeEnsemble (ml opset 5): each row of X [N, F] walks every tree from its
  root to a leaf (a split sends it to its true branch when X[n, feature]
  compares true with the split value in the split's mode, or is NaN and the
  split's missing value tracks true); the leaf gives a weight to one target.
  Y [N, n_targets] aggregates, per target, the weights of the trees whose
  leaf names it: their sum, average (each weight divided by the number of
  trees), min or max; 0 for a target no tree's leaf names (as onnxruntime).
  Splits, weights and members have X's type (as ONNX's type inference
  demands); comparisons are made in f64. Ember models post_transform NONE
  only; `forest_of` reads the attributes into trees (and checks them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType, TensorType, i64

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result
from ember.dialects.graph.spec import (
    ML_DOMAIN,
    OpSpec,
    float_attr,
    int_attr,
    ints_attr,
    one,
    tensor_attr,
)
from ember.dialects.graph.types import DYNAMIC, is_float, numpy_dtype

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


MODES = ("LEQ", "LT", "GTE", "GT", "EQ", "NEQ", "MEMBER")
"""TreeEnsemble's split modes, by their number in `nodes_modes`."""
MEMBER = MODES.index("MEMBER")
AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
"""TreeEnsemble's `aggregate_function` values, by number."""
POST_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


@dataclass(frozen=True)
class Leaf:
    weight: float
    target: int


@dataclass(frozen=True)
class Split:
    """A test of one feature: `value` is the split value, or the set of
    members for MEMBER."""

    mode: str
    value: float | frozenset[float]
    feature: int
    missing_tracks_true: bool
    true: Split | Leaf
    false: Split | Leaf


@dataclass(frozen=True)
class Forest:
    trees: tuple[Split | Leaf, ...]
    n_targets: int
    aggregate: str

    def features(self) -> list[int]:
        """The features some split reads, in ascending order."""
        found: set[int] = set()
        pending = list(self.trees)
        while pending:
            node = pending.pop()
            if isinstance(node, Split):
                found.add(node.feature)
                pending += [node.true, node.false]
        return sorted(found)


def _flat(value: Any) -> list:
    return [] if value is None else np.asarray(value).reshape(-1).tolist()


def forest_of(attrs: Mapping[str, Any], n_features: int | None = None) -> Forest:
    """The trees TreeEnsemble's attributes describe (`attrs` with defaults
    applied); a ShapeError names the first attribute that breaks a rule."""
    nodes = {name: _flat(attrs.get(name)) for name in (
        "nodes_splits", "nodes_featureids", "nodes_modes", "nodes_truenodeids",
        "nodes_falsenodeids", "nodes_trueleafs", "nodes_falseleafs")}  # fmt: skip
    count = len(nodes["nodes_modes"])
    missing = _flat(attrs.get("nodes_missing_value_tracks_true")) or [0] * count
    for name, values in [*nodes.items(), ("nodes_missing_value_tracks_true", missing)]:
        if len(values) != count:
            raise ShapeError(f"{name} has {len(values)} entries, nodes_modes {count}")
    weights, targets = _flat(attrs.get("leaf_weights")), _flat(attrs.get("leaf_targetids"))
    if len(weights) != len(targets):
        raise ShapeError(f"leaf_weights has {len(weights)} entries, leaf_targetids {len(targets)}")
    if any(t < 0 for t in targets):
        raise ShapeError("leaf_targetids must be non-negative")
    n_targets = attrs.get("n_targets")
    n_targets = (max(targets) + 1 if targets else 0) if n_targets is None else int(n_targets)
    if targets and max(targets) >= n_targets:
        raise ShapeError(f"leaf_targetids must be below n_targets ({n_targets})")
    aggregate, post = int(attrs.get("aggregate_function", 1)), int(attrs.get("post_transform", 0))
    if not 0 <= aggregate < len(AGGREGATES):
        raise ShapeError(f"aggregate_function must be 0 to 3, got {aggregate}")
    if post != 0:
        name = POST_TRANSFORMS[post] if 0 <= post < len(POST_TRANSFORMS) else str(post)
        raise ShapeError(f"post_transform {name} is not supported (Ember models NONE only)")
    members = iter(_flat(attrs.get("membership_values")))

    def member_set() -> frozenset[float]:
        found: set[float] = set()
        for value in members:
            if math.isnan(value):
                return frozenset(found)
            found.add(value)
        raise ShapeError("membership_values has fewer NaN-delimited sets than MEMBER splits")

    sets = {i: member_set() for i, mode in enumerate(nodes["nodes_modes"]) if mode == MEMBER}
    if next(members, None) is not None:
        raise ShapeError("membership_values has more sets than MEMBER splits")

    def build(index: int, is_leaf: bool, path: frozenset[int]) -> Split | Leaf:
        if is_leaf:
            if not 0 <= index < len(weights):
                raise ShapeError(f"leaf index {index} is out of range ({len(weights)} leaves)")
            return Leaf(float(weights[index]), int(targets[index]))
        if not 0 <= index < count:
            raise ShapeError(f"node index {index} is out of range ({count} nodes)")
        if index in path:
            raise ShapeError(f"node {index} lies on a cycle")
        mode = int(nodes["nodes_modes"][index])
        if not 0 <= mode < len(MODES):
            raise ShapeError(f"nodes_modes[{index}] must be 0 to 6, got {mode}")
        feature = int(nodes["nodes_featureids"][index])
        if feature < 0 or (n_features is not None and n_features != DYNAMIC
                           and feature >= n_features):  # fmt: skip
            raise ShapeError(f"nodes_featureids[{index}] ({feature}) is not a feature of X")
        inner = path | {index}
        return Split(MODES[mode], sets.get(index, float(nodes["nodes_splits"][index])), feature,
                     bool(missing[index]),
                     build(int(nodes["nodes_truenodeids"][index]),
                           bool(nodes["nodes_trueleafs"][index]), inner),
                     build(int(nodes["nodes_falsenodeids"][index]),
                           bool(nodes["nodes_falseleafs"][index]), inner))  # fmt: skip

    trees = []
    for root in _flat(attrs.get("tree_roots")):
        if not 0 <= root < count:
            raise ShapeError(f"tree root {root} is out of range ({count} nodes)")
        leaf = (nodes["nodes_trueleafs"][root] and nodes["nodes_falseleafs"][root]
                and nodes["nodes_truenodeids"][root] == nodes["nodes_falsenodeids"][root])  # fmt: skip
        trees.append(build(int(nodes["nodes_truenodeids"][root]), True, frozenset())
                     if leaf else build(root, False, frozenset()))  # fmt: skip
    return Forest(tuple(trees), n_targets, AGGREGATES[aggregate])


def tree_ensemble(ctx: ShapeContext) -> list[TensorType]:
    shape = ctx.shape("X")
    if not is_float(ctx.element_type("X")) or len(shape) != 2:
        raise ShapeError(f"X must be a 2-D floating-point tensor [N, F], got {ctx.type('X')}")
    dtype = numpy_dtype(ctx.element_type("X"))
    for name, expected in (("nodes_splits", dtype), ("leaf_weights", dtype),
                           ("membership_values", dtype), ("nodes_modes", np.dtype(np.uint8)),
                           ("nodes_hitrates", np.dtype(np.float32))):  # fmt: skip
        value = ctx.attr(name)
        if value is not None and np.asarray(value).dtype != expected:
            raise ShapeError(
                f"{name} must be a tensor of {expected}, got {np.asarray(value).dtype}"
            )
    features = shape[1] if isinstance(shape[1], int) else None
    forest = forest_of({a.name: ctx.attr(a.name) for a in ctx.spec.attributes}, features)
    return result(ctx.element_type("X"), [shape[0], forest.n_targets])


SPECS: list[OpSpec] = [
    OpSpec("Binarizer", [one("X")], [one("Y")], binarizer,
           attributes=(float_attr("threshold", 0.0),),
           summary="1 where X > threshold, else 0 (ai.onnx.ml).", domain=ML_DOMAIN),
    OpSpec("ArrayFeatureExtractor", [one("X"), one("Y")], [one("Z")], array_feature_extractor,
           summary="Selects elements of X's last axis by index (ai.onnx.ml).", domain=ML_DOMAIN),
    OpSpec("TreeEnsemble", [one("X")], [one("Y")], tree_ensemble,
           attributes=(int_attr("aggregate_function", 1), tensor_attr("leaf_weights", required=True),
                       ints_attr("leaf_targetids", required=True),
                       tensor_attr("membership_values"), int_attr("n_targets"),
                       ints_attr("nodes_falseleafs", required=True),
                       ints_attr("nodes_falsenodeids", required=True),
                       ints_attr("nodes_featureids", required=True), tensor_attr("nodes_hitrates"),
                       ints_attr("nodes_missing_value_tracks_true"),
                       tensor_attr("nodes_modes", required=True),
                       tensor_attr("nodes_splits", required=True),
                       ints_attr("nodes_trueleafs", required=True),
                       ints_attr("nodes_truenodeids", required=True), int_attr("post_transform", 0),
                       ints_attr("tree_roots", required=True)),
           summary="Sums (or averages, min, max) the leaf weights a forest of trees gives each "
                   "row of X, per target (ai.onnx.ml opset 5).", domain=ML_DOMAIN),
]  # fmt: skip


@graph_op(SPECS)
class BinarizerOp(GraphOp): ...


@graph_op(SPECS)
class ArrayFeatureExtractorOp(GraphOp): ...


@graph_op(SPECS)
class TreeEnsembleOp(GraphOp): ...
