"""Kernels of the `ai.onnx.ml` operators Binarizer and ArrayFeatureExtractor."""

from __future__ import annotations

import numpy as np

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
