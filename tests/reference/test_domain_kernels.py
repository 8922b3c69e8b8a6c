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
from onnx import ModelProto, helper, numpy_helper
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
    tensors = {k: numpy_helper.from_array(v) if isinstance(v, np.ndarray) else v
               for k, v in attrs.items()}  # fmt: skip
    node = helper.make_node(op_type, names, outputs, domain=domain, **tensors)
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


# ---------------------------------------------------------------- TreeEnsemble


def random_forest(trees: int, depth: int, features: int, targets: int, *, key: object,
                  splits_dtype: Any = F32, member: bool = True) -> dict[str, Any]:  # fmt: skip
    """TreeEnsemble attributes of `trees` random trees of `depth` levels, every
    split mode among them (MEMBER too, with `member`), some splits sending
    NaN to their true branch, leaves spread over `targets`."""
    rng = rng_for("forest", trees, depth, features, targets, key)
    nodes: dict[str, list] = {k: [] for k in ("splits", "features", "modes", "true", "false",
                                              "true_leaf", "false_leaf", "missing")}  # fmt: skip
    weights: list[float] = []
    leaf_targets: list[int] = []
    members: list[float] = []

    def leaf() -> int:
        weights.append(float(rng.uniform(-5, 5)))
        leaf_targets.append(int(rng.integers(0, targets)))
        return len(weights) - 1

    def split(level: int) -> int:
        index = len(nodes["modes"])
        mode = int(rng.integers(0, 7 if member else 6))
        for name, value in (("splits", float(np.round(rng.uniform(-3, 3) * 2) / 2)),
                            ("features", int(rng.integers(0, features))), ("modes", mode),
                            ("missing", int(rng.integers(0, 2))), ("true", 0), ("false", 0),
                            ("true_leaf", 0), ("false_leaf", 0)):  # fmt: skip
            nodes[name].append(value)
        if mode == 6:  # of feature 0, whole numbers (see forest_input)
            nodes["splits"][index] = np.nan
            nodes["features"][index] = 0
            # onnxruntime takes whole members only
            members.extend([*rng.integers(-3, 4, 3).astype(float).tolist(), np.nan])
        for side in ("true", "false"):
            is_leaf = level + 1 == depth or rng.random() < 0.2
            nodes[side][index] = leaf() if is_leaf else split(level + 1)
            nodes[f"{side}_leaf"][index] = int(is_leaf)
        return index

    roots = [split(0) for _ in range(trees)]
    attrs = {
        "nodes_splits": np.array(nodes["splits"], splits_dtype),
        "nodes_featureids": nodes["features"],
        "nodes_modes": np.array(nodes["modes"], np.uint8),
        "nodes_truenodeids": nodes["true"], "nodes_falsenodeids": nodes["false"],
        "nodes_trueleafs": nodes["true_leaf"], "nodes_falseleafs": nodes["false_leaf"],
        "nodes_missing_value_tracks_true": nodes["missing"],
        "leaf_weights": np.array(weights, splits_dtype), "leaf_targetids": leaf_targets,
        "tree_roots": roots, "n_targets": targets,
    }  # fmt: skip
    if members:
        attrs["membership_values"] = np.array(members, splits_dtype)
    return attrs


def forest_input(rows: int, features: int, dtype: Any = F32) -> np.ndarray:
    """Values on the splits' grid of halves, some NaN; feature 0, which MEMBER
    splits test, takes whole numbers (onnxruntime truncates it to an integer
    before it looks it up: -1.5 is a member of {-1})."""
    x = np.round(rng_for("forest-x", rows, features).uniform(-3, 3, (rows, features)) * 2) / 2
    x[:, 0] = np.round(x[:, 0])
    x[::5, 0] = np.nan
    return x.astype(dtype)


FOREST_CASES = [
    pytest.param(random_forest(1, 3, 2, 2, key=0), F32, id="one-tree"),
    pytest.param(random_forest(4, 4, 3, 3, key=1), F32, id="sum"),
    pytest.param(
        {**random_forest(3, 3, 3, 2, key=2, splits_dtype=F64), "aggregate_function": 0},
        F64,
        id="average-f64",
    ),
    pytest.param({**random_forest(5, 3, 2, 1, key=3), "aggregate_function": 2}, F32, id="min"),
    pytest.param({**random_forest(5, 3, 2, 1, key=4), "aggregate_function": 3}, F32, id="max"),
]


@pytest.mark.parametrize(("attrs", "dtype"), FOREST_CASES)
def test_tree_ensemble(attrs: dict[str, Any], dtype: Any) -> None:
    """Against onnxruntime, and ONNX's reference where it has no MEMBER split
    (its reader of membership_values stops at a member equal to 0)."""
    x = forest_input(20, 3, dtype)
    model = model_of("TreeEnsemble", [x], attrs, 1)
    got = run_kernel("TreeEnsemble", [x], attrs)
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"in0": x})
    assert_same(got, expected, 1e-6)
    if "membership_values" not in attrs:
        assert_same(got, ReferenceEvaluator(model).run(None, {"in0": x}), 1e-6)


@pytest.mark.parametrize("aggregate", [2, 3])
def test_tree_ensemble_targets_no_tree_reaches(aggregate: int) -> None:
    """MIN and MAX over no weight give 0, as onnxruntime (ONNX's reference
    gives the largest or lowest finite value)."""
    attrs = {**random_forest(2, 2, 2, 4, key=5, member=False), "aggregate_function": aggregate}
    x = forest_input(6, 2)
    model = model_of("TreeEnsemble", [x], attrs, 1)
    got = run_kernel("TreeEnsemble", [x], attrs)
    assert_same(got, ort.InferenceSession(model.SerializeToString()).run(None, {"in0": x}), 1e-6)
    reference = ReferenceEvaluator(model).run(None, {"in0": x})[0]
    untouched = np.abs(reference) == np.finfo(F32).max
    assert untouched.any() and (got[0][untouched] == 0).all()
