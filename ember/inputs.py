"""Random model inputs, made one way everywhere (CLI, benchmarks, tests).

Floats are standard normal; integers and booleans are 0 or 1, which is a
valid index, mask or count for the models Ember runs, so random inputs never
read out of bounds. A shape over Ember's per-tensor limit
(`MAX_TENSOR_BYTES`, 16 GiB) is refused before anything is allocated.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ember.dialects.graph.types import size_limit_problem
from ember.errors import TensorTooLargeError


def random_array(shape: Sequence[int], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    # Floats are drawn as float64 before the cast: that copy counts too.
    problem = size_limit_problem(list(shape), max(np.dtype(dtype).itemsize, 8))
    if problem:
        raise TensorTooLargeError(f"cannot generate a random input: {problem}")
    values = rng.standard_normal(tuple(shape)) if dtype.kind == "f" else rng.integers(0, 2, shape)
    return values.astype(dtype)


__all__ = ["random_array"]
