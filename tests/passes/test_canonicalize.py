"""graph-canonicalize keeps the meaning of real models. (Outputs are compared
with a tight tolerance: a Gemm whose weight was transposed at compile time
multiplies the same numbers, but NumPy's BLAS may sum them in another order.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from xdsl.context import Context
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import ember
from ember.passes.graph.canonicalize import TRANSPOSE_ROWS, CanonicalizePass, transposed
from tests.support.models import (
    SLOW_IN_PASS_TESTS,
    light_model_params,
    light_model_path,
    random_inputs,
    transformer_encoder,
    with_random_weights,
)


def _divisions(module) -> int:
    return sum(op.name == "graph.div" for op in module.walk())


def _canonicalized_outputs(model: onnx.ModelProto, inputs: dict) -> tuple[list, list, int, int]:
    module = ember.import_onnx(model)
    before = ember.reference.run(module, inputs)
    divisions_before = _divisions(module)
    CanonicalizePass().apply(Context(), module)
    DeadCodeElimination().apply(Context(), module)
    module.verify()
    return before, ember.reference.run(module, inputs), divisions_before, _divisions(module)


@pytest.mark.parametrize("name", light_model_params(SLOW_IN_PASS_TESTS))
def test_light_models_unchanged(name: str) -> None:
    model = with_random_weights(onnx.load(light_model_path(name)), seed=2)
    before, after, _, _ = _canonicalized_outputs(model, random_inputs(model, seed=3))
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_encoder_unchanged_and_scaled_by_a_multiplication() -> None:
    model = transformer_encoder(seq=16, hidden=64, heads=4, ffn=128)
    rng = np.random.default_rng(0)
    inputs = {"hidden": rng.standard_normal((1, 16, 64)).astype(np.float32),
              "mask": (rng.random((1, 16)) > 0.2).astype(np.int64)}  # fmt: skip
    before, after, divisions_before, divisions_after = _canonicalized_outputs(model, inputs)
    np.testing.assert_allclose(before[0], after[0], rtol=1e-4, atol=1e-6)
    # The attention scale sqrt(16) = 4 becomes a multiplication; Gelu's sqrt(2) does not.
    assert (divisions_before, divisions_after) == (2, 1)


@pytest.mark.parametrize("rows", [1, TRANSPOSE_ROWS - 1, TRANSPOSE_ROWS, 2 * TRANSPOSE_ROWS + 5])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_blocked_transpose_is_the_transpose(rows: int, dtype: type) -> None:
    """A Gemm's constant weight is transposed a block of rows at a time: the
    last, partial block and a single block give exactly `matrix.T`."""
    matrix = np.arange(rows * 7, dtype=dtype).reshape(rows, 7)
    result = transposed(matrix)
    assert result.flags.c_contiguous and result.dtype == dtype
    np.testing.assert_array_equal(result, matrix.T)
