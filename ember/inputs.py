"""Random model inputs, made one way everywhere (CLI, benchmarks, tests).

Floats are standard normal; integers and booleans are 0 or 1, which is a
valid index, mask or count for the models Ember runs, so random inputs never
read out of bounds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def random_array(shape: Sequence[int], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    values = rng.standard_normal(tuple(shape)) if dtype.kind == "f" else rng.integers(0, 2, shape)
    return values.astype(dtype)


__all__ = ["random_array"]
