"""Adversarial inputs for the vectorised transcendentals and row reductions
(`loop-expand-math`, reductions with their contiguous axis innermost):
NaN and infinities inside rows, rows that are all -inf, constant rows,
subnormals, values near f32's limits and odd row lengths that leave
vector remainders. The results match onnxruntime's, NaN for NaN."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.support.models import run_onnxruntime

ROW = 37  # not a multiple of any vector width: every loop has a remainder


def _model(
    op: str, rows: int, inits: Sequence[onnx.TensorProto] = (), **attrs: object
) -> onnx.ModelProto:
    names = ["x", *[i.name for i in inits]]
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], **attrs)], op,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, ROW])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, ROW])], list(inits),
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _rows() -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((10, ROW)).astype(np.float32)
    x[0] = -np.inf  # all masked
    x[1, 5] = np.nan
    x[2, 7] = np.inf
    x[3] = 2.5  # constant
    x[4] = rng.standard_normal(ROW).astype(np.float32) * 1e-40  # subnormal
    x[5] = np.float32(3.4e38) * np.sign(rng.standard_normal(ROW)).astype(np.float32)
    x[6, ::3] = -np.inf
    x[7] = np.float32(1e-45)
    x[8] = rng.standard_normal(ROW).astype(np.float32) * 80
    x[9, -1] = -np.inf
    return x


def _compare(model: onnx.ModelProto, x: np.ndarray, *, per_element: bool) -> None:
    """NaN and inf where onnxruntime has them; finite values within 1e-5 of
    their own magnitude (`per_element`) or of each row's largest (where the
    op's formula cancels: GELU's 1 + erf(x) for x far below 0)."""
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = ember.compile(model, threads=1)(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    magnitude = np.abs(np.where(finite, want, 0))
    scale = magnitude if per_element else magnitude.max(axis=-1, keepdims=True)
    error = np.abs(np.where(finite, got, 0) - np.where(finite, want, 0))
    assert np.all(error <= 1e-5 * scale + 1e-37)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_rows(op: str) -> None:
    _compare(_model(op, 10, axis=-1), _rows(), per_element=True)


def test_layer_norm_rows() -> None:
    """NaN and inf spread to their row; a constant row normalises to the bias."""
    x = _rows()
    x[5] /= 1e20  # the squares of 3.4e38 overflow in both engines alike otherwise
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal(ROW).astype(np.float32), name)
             for name in ("s", "b")]  # fmt: skip
    model = _model("LayerNormalization", 10, inits, axis=-1, epsilon=1e-5)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = ember.compile(model, threads=1)(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("op", ["Exp", "Tanh", "Erf", "Sigmoid", "Gelu"])
def test_elementwise_edges(op: str) -> None:
    _compare(_model(op, 10), _rows(), per_element=op in ("Exp", "Tanh", "Erf"))
