"""Kernels of the random operators RandomUniform, RandomNormal, their Like
forms, Bernoulli and Multinomial: the numbers `ember.dialects.graph.ops_random` defines
(SplitMix64 from the seed at each element's flat position), as the compiled
code computes them, converted to the output type."""

from __future__ import annotations

import numpy as np

from ember.dialects.graph.ops_random import (
    bernoulli_values,
    multinomial_values,
    normal_values,
    uniform_values,
)
from ember.dialects.graph.types import element_type_from_onnx, numpy_dtype

from ._registry import Attrs, Inputs, register


def _dtype(attrs: Attrs, like: np.ndarray | None) -> np.dtype:
    """The output dtype: the `dtype` attribute's, else `like`'s."""
    if attrs.get("dtype") is None and like is not None:
        return like.dtype
    return numpy_dtype(element_type_from_onnx(int(attrs.get("dtype", 1))))


def _shape(inputs: Inputs, attrs: Attrs) -> tuple[tuple[int, ...], np.ndarray | None]:
    """The output shape (the `shape` attribute, or the input's) and the input."""
    if inputs:
        like = np.asarray(inputs[0])
        return like.shape, like
    return tuple(int(d) for d in attrs["shape"]), None


@register("RandomUniform", "RandomUniformLike")
def random_uniform(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    shape, like = _shape(inputs, attrs)
    values = uniform_values(attrs.get("seed"), shape, attrs.get("low", 0.0), attrs.get("high", 1.0))
    return [values.astype(_dtype(attrs, like))]


@register("RandomNormal", "RandomNormalLike")
def random_normal(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    shape, like = _shape(inputs, attrs)
    values = normal_values(
        attrs.get("seed"), shape, attrs.get("mean", 0.0), attrs.get("scale", 1.0)
    )
    return [values.astype(_dtype(attrs, like))]


@register("Bernoulli")
def bernoulli(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    p = np.asarray(inputs[0])
    return [bernoulli_values(attrs.get("seed"), p).astype(_dtype(attrs, p))]


@register("Multinomial")
def multinomial(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    samples = multinomial_values(
        attrs.get("seed"), np.asarray(inputs[0]), int(attrs["sample_size"])
    )
    return [samples.astype(_dtype(attrs, None))]
