"""The kernels of the ai.onnx.ml and ai.onnx.preview.training ops against
ONNX's reference implementation (onnxruntime has no training ops, and
refuses negative ArrayFeatureExtractor indices and NaN Binarizer inputs,
which ONNX's reference reads) and, where it has the op, onnxruntime."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import ModelProto, helper
from onnx.reference import ReferenceEvaluator

import ember
from ember.dialects.graph import OPS_BY_TYPE
from ember.dialects.graph.spec import IMPORTED_DOMAINS, TRAINING_DOMAIN
from ember.reference.kernels import KERNELS, schema_defaults
from tests.reference.test_kernels import assert_same, rng_for

F32, F64 = np.float32, np.float64


def model_of(op_type: str, inputs: Sequence[np.ndarray], attrs: dict[str, Any],
             n_outputs: int) -> ModelProto:  # fmt: skip
    """One node of the op's domain, in a model that imports only that domain."""
    domain = OPS_BY_TYPE[op_type].SPEC.domain
    names = [f"in{i}" for i in range(len(inputs))]
    outputs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, domain=domain, **attrs)
    graph = helper.make_graph(
        [node], op_type,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for n, x in zip(names, inputs, strict=True)],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
    )  # fmt: skip
    opset = helper.make_opsetid(domain, IMPORTED_DOMAINS[domain][1])
    return helper.make_model(graph, opset_imports=[opset], ir_version=8)


def run_kernel(op_type: str, inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> list:
    domain = OPS_BY_TYPE[op_type].SPEC.domain
    return KERNELS[op_type](inputs, {**schema_defaults(op_type, domain=domain), **attrs})


def check_onnx_reference(op_type: str, inputs: list[np.ndarray], attrs: dict[str, Any],
                         n_outputs: int, tol: float = 1e-6) -> list[np.ndarray]:  # fmt: skip
    model = model_of(op_type, inputs, attrs, n_outputs)
    feeds = {f"in{i}": x for i, x in enumerate(inputs)}
    expected = [np.asarray(y) for y in ReferenceEvaluator(model).run(None, feeds)]
    got = run_kernel(op_type, inputs, attrs)
    if OPS_BY_TYPE[op_type].SPEC.domain == TRAINING_DOMAIN:
        # Each result has its tensor's type (ONNX's reference Adam of one
        # tensor gives float64 for float32).
        assert all(g.dtype == inputs[2].dtype for g in got)
        expected = [e.astype(inputs[2].dtype) for e in expected]
    assert_same(got, expected, tol)
    return got


# ------------------------------------------------------------------ ai.onnx.ml


def _x(dtype: Any, *shape: int) -> np.ndarray:
    return (rng_for("ml", dtype, shape).standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("dtype", [F32, F64, np.int64, np.int32])
@pytest.mark.parametrize("threshold", [0.0, 0.5, -1.5])
def test_binarizer(dtype: Any, threshold: float) -> None:
    x = _x(dtype, 3, 4)
    x.flat[0] = np.asarray(threshold).astype(dtype)  # exactly at the threshold: 0
    check_onnx_reference("Binarizer", [x], {"threshold": threshold}, 1)


def test_binarizer_agrees_with_onnxruntime() -> None:
    x = _x(F32, 2, 3, 5)
    model = model_of("Binarizer", [x], {"threshold": 0.25}, 1)
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"in0": x})
    assert_same(run_kernel("Binarizer", [x], {"threshold": 0.25}), expected, 0)


def test_binarizer_nan_is_zero() -> None:
    x = np.array([np.nan, 2.0, -np.inf, np.inf], F32)
    got = check_onnx_reference("Binarizer", [x], {"threshold": 1.0}, 1)
    np.testing.assert_array_equal(got[0], [0, 1, 0, 1])


EXTRACTOR_CASES = [
    (_x(F32, 3, 4), np.array([2, 0], np.int64)),
    (_x(F64, 6), np.array([5, 1, 1], np.int64)),
    (_x(np.int64, 2, 3, 4), np.array([[3, 0], [2, 2]], np.int64)),
    (_x(np.int32, 2, 5), np.array([[4]], np.int64)),
]


@pytest.mark.parametrize(("x", "indices"), EXTRACTOR_CASES)
def test_array_feature_extractor(x: np.ndarray, indices: np.ndarray) -> None:
    got = check_onnx_reference("ArrayFeatureExtractor", [x, indices], {}, 1)
    model = model_of("ArrayFeatureExtractor", [x, indices], {}, 1)
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"in0": x, "in1": indices})
    assert_same(got, expected, 0)


def test_array_feature_extractor_negative_index_counts_from_the_end() -> None:
    x = _x(F32, 2, 4)
    got = check_onnx_reference("ArrayFeatureExtractor", [x, np.array([-1, 0], np.int64)], {}, 1)
    np.testing.assert_array_equal(got[0], x[:, [3, 0]])


# ----------------------------------------------------- ai.onnx.preview.training


def optimizer_inputs(count: int, groups: int, step: int, dtype: Any = F32) -> list[np.ndarray]:
    """R, T, then `groups` groups of `count` tensors; the last group (a squared
    gradient) non-negative."""
    rng = rng_for("optimizer", count, groups, step, dtype)
    tensors = [rng.standard_normal(2 * i + 1).astype(dtype)
               for _ in range(groups) for i in range(count)]  # fmt: skip
    tensors[-count:] = [np.abs(t) for t in tensors[-count:]]
    return [np.array(0.1, dtype), np.array(step, np.int64), *tensors]


ADAM = {"alpha": 0.95, "beta": 0.85, "epsilon": 0.01, "norm_coefficient": 0.001}
TRAINING_CASES = [
    ("Adagrad", 1, {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.001}),
    ("Adagrad", 3, {}),
    ("Adam", 1, ADAM),
    ("Adam", 2, {**ADAM, "norm_coefficient_post": 0.02}),
    ("Adam", 1, {}),
    ("Momentum", 1, {"alpha": 0.95, "beta": 0.1, "mode": "standard", "norm_coefficient": 0.001}),
    ("Momentum", 2, {"alpha": 0.9, "beta": 0.5, "mode": "nesterov", "norm_coefficient": 0.01}),
]
GROUPS = {"Adagrad": 3, "Adam": 4, "Momentum": 3}


@pytest.mark.parametrize("step", [0, 4])
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize(("op_type", "count", "attrs"), TRAINING_CASES)
def test_update_rule(op_type: str, count: int, attrs: dict[str, Any], dtype: Any,
                     step: int) -> None:  # fmt: skip
    """T = 0 takes the first-step forms (no bias correction, beta 1). (ONNX's
    reference rounds some coefficients, 1 - alpha, to float32 even for float64
    tensors, where Ember's kernel computes in float64: hence one tolerance.)"""
    groups = GROUPS[op_type]
    inputs = optimizer_inputs(count, groups, step, dtype)
    check_onnx_reference(op_type, inputs, attrs, count * (groups - 1), 1e-6)


@pytest.mark.parametrize(("op_type", "count", "attrs"), TRAINING_CASES[1::2])
def test_update_rule_compiled(op_type: str, count: int, attrs: dict[str, Any]) -> None:
    groups = GROUPS[op_type]
    inputs = optimizer_inputs(count, groups, 3)
    model = model_of(op_type, inputs, attrs, count * (groups - 1))
    expected = run_kernel(op_type, inputs, attrs)
    assert_same(ember.compile(model)(*inputs), expected, 1e-6)
