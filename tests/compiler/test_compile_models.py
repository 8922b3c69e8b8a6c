"""Compiled models match onnxruntime: every light model with random weights
(and as shipped), the MLP and the transformer encoder layer."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember
from tests.support.models import (
    LIGHT_MODELS,
    light_expected_output,
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    transformer_encoder,
    with_random_weights,
)


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_model_random_weights(name: str) -> None:
    model = with_random_weights(onnx.load(light_model_path(name)), seed=11)
    inputs = random_inputs(model, seed=12)
    expected = run_onnxruntime(model, inputs)
    compiled = ember.compile(model)
    outputs = compiled.run(inputs)
    for got, want in zip(outputs, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["squeezenet"])
def test_light_model_shipped(name: str) -> None:
    path = light_model_path(name)
    compiled = ember.compile(path)
    (out,) = compiled(*random_inputs(onnx.load(path)).values())
    np.testing.assert_allclose(out, light_expected_output(name), rtol=1e-3, atol=1e-5)


def test_mlp() -> None:
    model = mlp()
    inputs = random_inputs(model)
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model).run(inputs)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


def test_transformer_encoder() -> None:
    model = transformer_encoder()
    rng = np.random.default_rng(3)
    inputs = {
        "hidden": rng.standard_normal((1, 128, 768)).astype(np.float32),
        "mask": (rng.random((1, 128)) > 0.2).astype(np.int64),
    }
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model).run(inputs)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_small_transformer_encoder() -> None:
    model = transformer_encoder(seq=16, hidden=64, heads=4, ffn=128)
    rng = np.random.default_rng(4)
    inputs = {
        "hidden": rng.standard_normal((1, 16, 64)).astype(np.float32),
        "mask": (rng.random((1, 16)) > 0.2).astype(np.int64),
    }
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model).run(inputs)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_memory_plan_reuses_buffers() -> None:
    compiled = ember.compile(light_model_path("squeezenet"))
    report = compiled.report
    assert 0 < report.arena_bytes < report.naive_bytes
