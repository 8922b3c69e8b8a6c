"""graph-fold-constants keeps every light model's meaning and removes the
ConstantOfShape weights and shape chains."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from xdsl.context import Context

import ember
from ember.passes.graph.fold_constants import FoldConstantsPass
from tests.support.models import light_model_params, light_model_path, random_inputs


def _op_names(module) -> list[str]:
    return [op.name for op in module.walk()]


# The biggest models run the reference interpreter longest: with the slow tests.
@pytest.mark.parametrize(
    "name", light_model_params(slow={"vgg19", "densenet121", "inception_v1", "inception_v2",
                                     "zfnet512", "bvlc_alexnet"})
)  # fmt: skip
def test_folding_preserves_light_model_outputs(name: str) -> None:
    path = light_model_path(name)
    inputs = random_inputs(onnx.load(path), seed=5)
    module = ember.import_onnx(path)
    before = ember.reference.run(module, inputs)
    FoldConstantsPass().apply(Context(), module)
    module.verify()
    assert "graph.constant_of_shape" not in _op_names(module)
    after = ember.reference.run(module, inputs)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_folding_is_a_fixed_point() -> None:
    module = ember.import_onnx(light_model_path("shufflenet"))
    FoldConstantsPass().apply(Context(), module)
    once = str(module)
    FoldConstantsPass().apply(Context(), module)
    assert str(module) == once
