"""Every light model imports, verifies, round-trips and runs in the reference
interpreter: against its shipped output, and against onnxruntime with random
weights. The MLP and the transformer encoder layer are checked the same way."""

from __future__ import annotations

import io

import numpy as np
import onnx
import pytest
from xdsl.parser import Parser

import ember
from ember.context import make_context
from ember.printing import print_module
from tests.support.models import (
    SLOW_IN_REFERENCE,
    assert_matches_shipped_output,
    light_model_params,
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    shipped_model_with_logits,
    transformer_encoder,
    with_random_weights,
)


@pytest.mark.parametrize("name", light_model_params({"vgg19", "zfnet512"}))
def test_light_model_matches_shipped_output(name: str) -> None:
    model, _ = shipped_model_with_logits(name)
    module = ember.import_onnx(model)
    module.verify()
    assert_matches_shipped_output(name, ember.reference.run(module, random_inputs(model)))


@pytest.mark.parametrize("name", light_model_params(SLOW_IN_REFERENCE))
def test_light_model_with_random_weights_matches_onnxruntime(name: str) -> None:
    model = with_random_weights(onnx.load(light_model_path(name)), seed=3)
    inputs = random_inputs(model, seed=4)
    expected = run_onnxruntime(model, inputs)
    outputs = ember.reference.run(ember.import_onnx(model), inputs)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet", "inception_v1"])
def test_imported_ir_round_trips_with_weights(name: str) -> None:
    module = ember.import_onnx(with_random_weights(onnx.load(light_model_path(name))))
    text = io.StringIO()
    print_module(module, text)
    reparsed = Parser(make_context(), text.getvalue()).parse_module()
    reparsed.verify()
    again = io.StringIO()
    print_module(reparsed, again)
    assert again.getvalue() == text.getvalue()
    inputs = random_inputs(onnx.load(light_model_path(name)))
    for a, b in zip(ember.reference.run(module, inputs), ember.reference.run(reparsed, inputs)):
        np.testing.assert_array_equal(a, b)


def test_mlp_matches_onnxruntime() -> None:
    model = mlp()
    inputs = random_inputs(model)
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.reference.run(ember.import_onnx(model), inputs)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


def test_transformer_encoder_matches_onnxruntime() -> None:
    model = transformer_encoder()
    rng = np.random.default_rng(7)
    inputs = {
        "hidden": rng.standard_normal((1, 128, 768)).astype(np.float32),
        "mask": (rng.random((1, 128)) > 0.2).astype(np.int64),
    }
    (want,) = run_onnxruntime(model, inputs)
    module = ember.import_onnx(model)
    assert "graph.layer_normalization" in str(module)
    (got,) = ember.reference.run(module, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_input_shape_override_changes_batch() -> None:
    module = ember.import_onnx(light_model_path("squeezenet"), {"data_0": [4, 3, 224, 224]})
    func = ember.reference.entry_function(module)
    assert func.function_type.outputs.data[0].get_shape() == (4, 1000, 1, 1)
    x = np.random.default_rng(0).standard_normal((4, 3, 224, 224)).astype(np.float32)
    (out,) = ember.reference.run(module, [x])
    assert out.shape == (4, 1000, 1, 1)


def test_input_shape_override_that_breaks_a_fixed_reshape_is_reported() -> None:
    # ResNet-50's exporter hard-coded batch 1 into its final Reshape.
    with pytest.raises(ember.EmberError, match=r"node .*Reshape.*cannot reshape 4x2048x1x1"):
        ember.import_onnx(light_model_path("resnet50"), {"gpu_0/data_0": [4, 3, 224, 224]})


def test_dynamic_batch_is_kept_unknown() -> None:
    module = ember.import_onnx(light_model_path("squeezenet"), {"data_0": [-1, 3, 224, 224]})
    func = ember.reference.entry_function(module)
    assert func.function_type.inputs.data[0].get_shape()[0] < 0
    x = np.random.default_rng(0).standard_normal((2, 3, 224, 224)).astype(np.float32)
    (out,) = ember.reference.run(module, [x])
    assert out.shape == (2, 1000, 1, 1)
