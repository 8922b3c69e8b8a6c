"""Compiled models match onnxruntime: every light model with random weights
(and as shipped), the MLP and the transformer encoder layer."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember
from tests.support.models import (
    SLOW_TO_COMPILE,
    assert_matches_shipped_output,
    light_model_params,
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    shipped_model_with_logits,
    transformer_encoder,
    with_logits,
    with_random_weights,
)


@pytest.mark.parametrize(
    "name",
    light_model_params(SLOW_TO_COMPILE | {"bvlc_alexnet", "resnet50", "squeezenet", "shufflenet"}),
)
def test_light_model_random_weights(name: str) -> None:
    """Every output, and the logits before a final Softmax (which squashes
    an error: 999 of ResNet-50's 1,000 probabilities are below 1e-4), within
    1e-4 of the largest magnitude, as the NPU's tests compare. (AlexNet's
    240 MB of weights make it slow as well.)"""
    model, _ = with_logits(with_random_weights(onnx.load(light_model_path(name)), seed=11))
    inputs = random_inputs(model, seed=12)
    expected = run_onnxruntime(model, inputs)
    compiled = ember.compile(model)
    outputs = compiled.run(inputs)
    for got, want in zip(outputs, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        scale = float(np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * scale)


@pytest.mark.parametrize("name", ["squeezenet", pytest.param("shufflenet", marks=pytest.mark.slow)])
def test_light_model_shipped(name: str) -> None:
    model, _ = shipped_model_with_logits(name)
    compiled = ember.compile(model)
    assert_matches_shipped_output(name, compiled.run(random_inputs(model)))


def test_mlp() -> None:
    model = mlp()
    inputs = random_inputs(model)
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model).run(inputs)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


@pytest.mark.slow
def test_transformer_encoder() -> None:
    """The full-size BERT-base layer (test_small_transformer_encoder runs by default)."""
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


def _embedding_model() -> onnx.ModelProto:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    table = numpy_helper.from_array(rng.standard_normal((100, 16)).astype(np.float32), "table")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["emb"], axis=0),
         helper.make_node("ReduceMean", ["emb", "axes"], ["pooled"], keepdims=0)], "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 5])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [2, 16])],
        [table, numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def test_embedding_lookup_with_run_time_indices() -> None:
    model = _embedding_model()
    ids = np.array([[1, 5, 99, -1, 0], [3, 3, 7, -100, 42]], np.int64)
    (want,) = run_onnxruntime(model, {"ids": ids})
    (got,) = ember.compile(model)(ids)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_out_of_range_indices_are_clamped_not_read_out_of_bounds() -> None:
    compiled = ember.compile(_embedding_model())
    wild = np.array([[10**9, -(10**9), 99, 0, 1]] * 2, np.int64)
    clamped = np.array([[99, 0, 99, 0, 1]] * 2, np.int64)
    np.testing.assert_array_equal(compiled(wild)[0], compiled(clamped)[0])
