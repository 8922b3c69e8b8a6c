"""Kernels of the `ai.onnx.ml` operators Binarizer, ArrayFeatureExtractor and
TreeEnsemble."""

from __future__ import annotations

import math

import numpy as np

from ember.dialects.graph.ops_ml import Leaf, Split, forest_of

from ._registry import Attrs, Inputs, register


@register("Binarizer")
def binarizer(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """1 where X > threshold (compared exactly, an integer X too), else 0."""
    x = np.asarray(inputs[0])
    return [(x > attrs["threshold"]).astype(x.dtype)]


@register("ArrayFeatureExtractor")
def array_feature_extractor(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """X's last axis at the flat indices Y (negative ones count from the end);
    a 1-D X reads as one row."""
    x, indices = np.asarray(inputs[0]), np.asarray(inputs[1]).astype(np.int64).reshape(-1)
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    return [np.take(rows, indices, axis=-1)]


def _goes_true(split: Split, x: float) -> bool:
    """Whether a row with feature value `x` (as f64) takes the split's true branch."""
    if math.isnan(x) and split.missing_tracks_true:
        return True
    if split.mode == "MEMBER":
        assert isinstance(split.value, frozenset)
        return x in split.value
    value = float(split.value)  # type: ignore[arg-type]
    return {"LEQ": x <= value, "LT": x < value, "GTE": x >= value, "GT": x > value,
            "EQ": x == value, "NEQ": x != value}[split.mode]  # fmt: skip


def leaf_of(tree: Split | Leaf, row: np.ndarray) -> Leaf:
    while isinstance(tree, Split):
        tree = tree.true if _goes_true(tree, float(row[tree.feature])) else tree.false
    return tree


@register("TreeEnsemble")
def tree_ensemble(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Per row and target, the aggregate of the weights of the leaves reached
    that name the target, 0 where none does (as onnxruntime); each step
    computes in f64 and rounds to X's type."""
    x = np.asarray(inputs[0])
    forest = forest_of(attrs, x.shape[1])
    dtype = x.dtype.type
    y = np.zeros((x.shape[0], forest.n_targets), dtype)
    seen = np.zeros(y.shape, bool)
    combine = {
        "SUM": lambda acc, w: acc + w,
        "AVERAGE": lambda acc, w: acc + w / len(forest.trees),
        "MIN": min,
        "MAX": max,
    }[forest.aggregate]
    first = forest.aggregate in ("MIN", "MAX")  # the first weight replaces the 0
    for n, row in enumerate(x):
        for tree in forest.trees:
            leaf = leaf_of(tree, row)
            acc = float(y[n, leaf.target])
            value = leaf.weight if first and not seen[n, leaf.target] else combine(acc, leaf.weight)
            y[n, leaf.target] = dtype(value)
            seen[n, leaf.target] = True
    return [y]
