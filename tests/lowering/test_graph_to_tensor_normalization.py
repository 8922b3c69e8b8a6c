"""Softmax, LogSoftmax, LayerNormalization, Gelu and Sigmoid compiled for
the CPU next to onnxruntime, at several shapes and axes, with additive
masks of -inf and -10000 and with large values: the rows are reduced with
their contiguous axis innermost and reassociated sums
(targets/cpu/schedule/reduction_order.py), and exp, erf and tanh run as
`loop-expand-math`'s vector code. Tolerances are relative to each
output's magnitude."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.support.models import gpt_block, run_onnxruntime, transformer_encoder


def _model(
    op: str, shape: list[int], inits: Sequence[onnx.TensorProto] = (), **attrs: object
) -> onnx.ModelProto:
    names = ["x", *[i.name for i in inits]]
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], **attrs)], op,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], list(inits),
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _assert_close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5) -> None:
    """Equal NaNs and infinities; finite values within `rtol` of the largest
    magnitude (and of their own)."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    scale = float(np.nanmax(np.abs(np.where(np.isinf(want), 0, want)), initial=1e-30))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


def _check(model: onnx.ModelProto, x: np.ndarray, rtol: float = 1e-5) -> None:
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = ember.compile(model, threads=1)(x)
    _assert_close(got, want, rtol)


SHAPES = [[64, 1000], [3, 7], [2, 12, 16, 17], [1, 1, 100]]


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_softmax_last_axis(op: str, shape: list[int]) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 4
    _check(_model(op, shape, axis=-1), x)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_other_axes(axis: int) -> None:
    shape = [5, 6, 33]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 4
    _check(_model("Softmax", shape, axis=axis), x)


def test_softmax_masked_and_large() -> None:
    """A causal mask of -inf and one of -10000 (as exporters add them), and
    rows of large values (1e4 apart, 3e38: exp(x - max) must not overflow)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 40)).astype(np.float32)
    causal = np.triu(np.ones((6, 40), bool), k=1)
    x[0][causal[0]] = -np.inf
    x[1][causal[1]] = -1e4
    x[2] *= 1e4
    x[3] = 3e38
    x[4, :20] = -3e38
    x[5, ::2] = -np.inf
    _check(_model("Softmax", [6, 40], axis=-1), x)
    _check(_model("LogSoftmax", [6, 40], axis=-1), x)


@pytest.mark.parametrize("shape", [[128, 768], [2, 5, 33], [1, 3]], ids=str)
def test_layer_norm(shape: list[int]) -> None:
    rng = np.random.default_rng(3)
    scale = numpy_helper.from_array(rng.standard_normal(shape[-1]).astype(np.float32), "s")
    bias = numpy_helper.from_array(rng.standard_normal(shape[-1]).astype(np.float32), "b")
    model = _model("LayerNormalization", shape, [scale, bias], axis=-1)
    x = (rng.standard_normal(shape) * 30 + 100).astype(np.float32)
    _check(model, x, rtol=1e-4)


def test_layer_norm_over_two_axes() -> None:
    rng = np.random.default_rng(4)
    shape = [3, 8, 20]
    scale = numpy_helper.from_array(rng.standard_normal(shape[1:]).astype(np.float32), "s")
    model = _model("LayerNormalization", shape, [scale], axis=1)
    _check(model, rng.standard_normal(shape).astype(np.float32), rtol=1e-4)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate: str) -> None:
    x = np.concatenate([np.linspace(-12, 12, 4001, dtype=np.float32),
                        np.float32([0, -0.0, 1e-30, -1e-30, 50, -50, 3e38, -3e38])])  # fmt: skip
    _check(_model("Gelu", [x.size], approximate=approximate), x)


@pytest.mark.parametrize("op", ["Sigmoid", "Tanh", "Exp", "Erf"])
def test_elementwise_transcendentals(op: str) -> None:
    x = np.linspace(-120, 120, 9601, dtype=np.float32)
    _check(_model(op, [x.size]), x)


def test_small_gpt_block() -> None:
    """Pre-LayerNorm causal attention, tanh-GELU MLP (Pow by 3, Tanh)."""
    model = gpt_block(seq=16, hidden=64, heads=4, ffn=128)
    x = np.random.default_rng(5).standard_normal((1, 16, 64)).astype(np.float32)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = ember.compile(model, threads=1).run({"x": x})
    _assert_close(got, want, rtol=1e-4)


def test_small_encoder_two_threads() -> None:
    """Masked attention, erf-GELU FFN, LayerNorms; the reductions' rows
    split among threads."""
    model = transformer_encoder(seq=16, hidden=64, heads=4, ffn=128)
    rng = np.random.default_rng(6)
    inputs = {"hidden": rng.standard_normal((1, 16, 64)).astype(np.float32),
              "mask": (rng.random((1, 16)) > 0.3).astype(np.int64)}  # fmt: skip
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model, threads=2).run(inputs)
    _assert_close(got, want, rtol=1e-4)


@pytest.mark.slow
def test_gpt_block() -> None:
    """The full-size GPT block (seq 128, hidden 768), as benchmarks/suite.py runs it."""
    model = gpt_block()
    x = np.random.default_rng(7).standard_normal((1, 128, 768)).astype(np.float32)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = ember.compile(model).run({"x": x})
    _assert_close(got, want, rtol=1e-4)
