"""RandomUniform, RandomNormal, their Like forms and Bernoulli: the compiled
code draws the reference interpreter's numbers bit for bit (one SplitMix64
generator), seeds repeat and differ, and the numbers have the moments
asked for (100,000 samples, bounds of 6 standard errors: the generator is
deterministic, so each check either always or never holds)."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ember
import ember.reference

SHAPE = (250, 400)
"""100,000 samples."""


def _model(op: str, *, input_type: int = TensorProto.FLOAT, out: int = TensorProto.FLOAT,
           shape: tuple[int, ...] = SHAPE, **attrs: object) -> onnx.ModelProto:  # fmt: skip
    """One node of `op` on an input x (of `input_type`) of `shape`, or, for the ops
    without an input, of the `shape` attribute."""
    takes_input = op.endswith("Like") or op == "Bernoulli"
    if not takes_input:
        attrs = {"shape": list(shape), **attrs}
    node = helper.make_node(op, ["x"] if takes_input else [], ["y"], **attrs)
    inputs = [helper.make_tensor_value_info("x", input_type, list(shape))] if takes_input else []
    graph = helper.make_graph([node], "random", inputs,
                              [helper.make_tensor_value_info("y", out, list(shape))])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _probabilities(shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Rows of probabilities 0, 0.05, ..., 0.95 (10,000 samples each in SHAPE)."""
    return np.repeat(np.arange(20, dtype=np.float32) / 20, math.prod(shape) // 20).reshape(shape)


def _run(model: onnx.ModelProto, x: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(compiled, reference) outputs."""
    feeds = {} if x is None else {"x": x}
    compiled = ember.compile(model).run(feeds)[0]
    reference = ember.reference.run(ember.import_onnx(model), feeds)[0]
    return compiled, reference


CASES = [
    ("RandomUniformLike", {"low": -2.0, "high": 3.0, "seed": 5.0}),
    ("RandomNormalLike", {"mean": 1.0, "scale": 2.0, "seed": 7.0}),
    ("RandomUniformLike", {}),
    ("RandomNormalLike", {"mean": -3.0, "scale": 0.5}),
    ("Bernoulli", {"seed": 11.0}),
    ("Bernoulli", {}),
]


@pytest.mark.parametrize(("op", "attrs"), CASES, ids=[f"{op}-{len(a)}" for op, a in CASES])
def test_compiled_matches_reference_bit_for_bit(op: str, attrs: dict[str, float]) -> None:
    x = _probabilities() if op == "Bernoulli" else np.zeros(SHAPE, np.float32)
    compiled, reference = _run(_model(op, **attrs), x)
    assert compiled.dtype == reference.dtype == np.float32
    assert compiled.shape == reference.shape == SHAPE
    np.testing.assert_array_equal(compiled.view(np.uint32), reference.view(np.uint32))


@pytest.mark.parametrize("op", ["RandomUniform", "RandomNormal"])
def test_like_forms_draw_the_numbers_of_the_shaped_forms(op: str) -> None:
    """RandomUniform and RandomNormal (no input: `graph-fold-constants`
    folds them to the reference's numbers at compile time) give what their
    Like forms' compiled code draws."""
    attrs = {
        "seed": 3.0,
        **({"low": 1.0, "high": 2.0} if op == "RandomUniform" else {"scale": 4.0}),
    }
    shaped, shaped_reference = _run(_model(op, **attrs), None)
    like = ember.compile(_model(op + "Like", **attrs))(np.zeros(SHAPE, np.float32))[0]
    np.testing.assert_array_equal(shaped.view(np.uint32), like.view(np.uint32))
    np.testing.assert_array_equal(shaped_reference.view(np.uint32), like.view(np.uint32))


@pytest.mark.parametrize(
    ("op", "dtype", "out", "attrs", "want"),
    [
        ("RandomUniform", None, TensorProto.DOUBLE, {"dtype": TensorProto.DOUBLE}, np.float64),
        ("RandomNormal", None, TensorProto.FLOAT16, {"dtype": TensorProto.FLOAT16}, np.float16),
        ("RandomUniformLike", TensorProto.DOUBLE, TensorProto.DOUBLE, {}, np.float64),
        ("RandomNormalLike", TensorProto.FLOAT16, TensorProto.FLOAT16, {}, np.float16),
        ("RandomUniformLike", TensorProto.FLOAT, TensorProto.BFLOAT16,
         {"dtype": TensorProto.BFLOAT16}, ml_dtypes.bfloat16),
        ("RandomNormalLike", TensorProto.INT32, TensorProto.FLOAT, {"dtype": 1}, np.float32),
        ("Bernoulli", TensorProto.DOUBLE, TensorProto.DOUBLE, {}, np.float64),
        ("Bernoulli", TensorProto.FLOAT, TensorProto.INT64, {"dtype": TensorProto.INT64},
         np.int64),
        ("Bernoulli", TensorProto.FLOAT16, TensorProto.BOOL, {"dtype": TensorProto.BOOL}, bool),
    ],
)  # fmt: skip
def test_shapes_and_dtypes(op: str, dtype: int | None, out: int, attrs: dict[str, int],
                           want: type) -> None:  # fmt: skip
    shape = (3, 4, 5)
    model = _model(op, input_type=dtype or TensorProto.FLOAT, out=out, shape=shape, **attrs)
    x = None
    if dtype is not None:
        x = _probabilities((4, 5, 3)).reshape(shape).astype(helper.tensor_dtype_to_np_dtype(dtype))
    compiled, reference = _run(model, x)
    assert compiled.dtype == reference.dtype == want
    assert compiled.shape == reference.shape == shape
    np.testing.assert_array_equal(compiled, reference)


def test_seeded_runs_repeat_and_seeds_differ() -> None:
    x = np.zeros((64,), np.float32)
    runs = [ember.compile(_model("RandomNormalLike", shape=(64,), seed=seed))(x)[0]
            for seed in (1.0, 1.0, 2.0)]  # fmt: skip
    np.testing.assert_array_equal(runs[0], runs[1])
    assert (runs[0] != runs[2]).mean() > 0.99
    unseeded = ember.compile(_model("RandomNormalLike", shape=(64,)))
    np.testing.assert_array_equal(unseeded(x)[0], unseeded(x)[0])


def _within(value: float, want: float, standard_error: float) -> None:
    assert abs(value - want) < 6 * standard_error, (value, want, standard_error)


@pytest.mark.parametrize("seed", [0.0, 1.0, 123.0])
def test_uniform_moments(seed: float) -> None:
    low, high, n = -1.0, 3.0, math.prod(SHAPE)
    y = ember.reference.run(ember.import_onnx(
        _model("RandomUniform", low=low, high=high, seed=seed)), {})[0].astype(np.float64)  # fmt: skip
    assert y.min() >= low and y.max() < high
    width = high - low
    _within(y.mean(), (low + high) / 2, width / math.sqrt(12 * n))
    _within(y.var(), width**2 / 12, width**2 * math.sqrt(1 / 80 - 1 / 144) / math.sqrt(n))


@pytest.mark.parametrize("seed", [0.0, 1.0, 123.0])
def test_normal_moments(seed: float) -> None:
    mean, scale, n = 2.0, 3.0, math.prod(SHAPE)
    y = ember.reference.run(ember.import_onnx(
        _model("RandomNormal", mean=mean, scale=scale, seed=seed)), {})[0].astype(np.float64)  # fmt: skip
    _within(y.mean(), mean, scale / math.sqrt(n))
    _within(y.var(), scale**2, math.sqrt(2) * scale**2 / math.sqrt(n))
    # Box-Muller from 24-bit uniforms: |z| <= sqrt(48 ln 2).
    assert np.abs(y - mean).max() <= scale * math.sqrt(48 * math.log(2)) * (1 + 1e-6)


def test_bernoulli_frequency_per_probability() -> None:
    p = _probabilities()
    y = ember.compile(_model("Bernoulli", seed=4.0))(p)[0]
    assert set(np.unique(y)) <= {0.0, 1.0}
    for row_p, draws in zip(p.reshape(20, -1)[:, 0], y.reshape(20, -1)):
        n = draws.size
        _within(draws.mean(), float(row_p), max(math.sqrt(row_p * (1 - row_p) / n), 1e-12))


@functools.cache
def _bernoulli_cases() -> dict[str, Any]:
    """ONNX's Bernoulli node cases (and their expansions) by name."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c for c in collect_testcases(None) if "bernoulli" in c.name}


@pytest.mark.parametrize("case", ["test_bernoulli_seed", "test_bernoulli_double"])
def test_bernoulli_and_its_onnx_expansion_draw_the_same_uniforms(case: str) -> None:
    """ONNX's function body of Bernoulli draws RandomUniformLike in [0, 1),
    the same uniforms as Bernoulli, but casts Greater(uniform, p): 1 where
    the uniform is above p, the complement of Bernoulli's uniform < p (no
    uniform equals these p, which are not multiples of 2^-24)."""
    cases = _bernoulli_cases()
    dtype = np.asarray(cases[case].data_sets[0][0][0]).dtype
    p = (np.arange(10) / 10 + 0.03).astype(dtype)
    direct = ember.compile(cases[case].model)(p)[0]
    expanded = ember.compile(cases[case + "_expanded"].model)(p)[0]
    assert direct.dtype == expanded.dtype
    assert 0 < direct.sum() < 10
    np.testing.assert_array_equal(direct, 1 - expanded)


def _multinomial_model(rows: int, classes: int, samples: int, **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=samples, **attrs)
    out = int(attrs.get("dtype", TensorProto.INT32))  # type: ignore[call-overload]
    graph = helper.make_graph([node], "multinomial",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, classes])],
                              [helper.make_tensor_value_info("y", out, [rows, samples])])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


@pytest.mark.parametrize(("attrs", "want"), [({"seed": 2.0}, np.int32),
                                             ({"dtype": TensorProto.INT64}, np.int64)])  # fmt: skip
def test_multinomial_matches_reference_and_its_probabilities(attrs: dict, want: type) -> None:
    """Bit for bit with the reference; each class's frequency within 6
    standard errors of softmax(x) (25,000 samples per row)."""
    logits = np.array([[0.0, 1.0, -1.0, 2.0, 0.5], [3.0, -2.0, 0.0, 0.0, -np.inf]], np.float32)
    samples = 25_000
    compiled, reference = _run(_multinomial_model(2, 5, samples, **attrs), logits)
    assert compiled.dtype == reference.dtype == want
    assert compiled.shape == (2, samples)
    np.testing.assert_array_equal(compiled, reference)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    for row, row_p in zip(compiled, p):
        for k, pk in enumerate(row_p):
            _within((row == k).mean(), float(pk), max(math.sqrt(pk * (1 - pk) / samples), 1e-12))


def test_multinomial_of_many_classes_matches_reference() -> None:
    """1,000 classes: the compiled totals and running sums are added left to
    right, as the reference's (the same bits, so the same choices)."""
    logits = np.random.default_rng(1).standard_normal((8, 1000)).astype(np.float32)
    compiled, reference = _run(_multinomial_model(8, 1000, 64, seed=9.0), logits)
    np.testing.assert_array_equal(compiled, reference)
