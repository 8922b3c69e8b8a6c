"""Edge cases of numerics (docs/semantics.md): compiled code never traps,
agrees with the reference interpreter, and with onnxruntime where
onnxruntime gives one deterministic result."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ember
from ember.errors import CompileError, EmberError
from ember.reference import run as run_reference
from tests.support.models import run_onnxruntime

NAN, INF = np.nan, np.inf
SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]


def _info(name: str, dtype: type, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(
        name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape
    )


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    out_dtype: type,
    out_shape: list[int],
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "numerics", [_info(n, a.dtype.type, list(a.shape)) for n, a in inputs.items()],
        [_info("y", out_dtype, out_shape)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _compiled_and_reference(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The compiled result, after checking that the reference gives the same bits."""
    (compiled,) = ember.compile(model).run(inputs)
    (reference,) = run_reference(ember.import_onnx(model), inputs)
    np.testing.assert_array_equal(compiled, reference)
    return compiled


# ----------------------------------------------------- integer division


def _division_operands(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    if info.min < 0:
        return (np.array([7, -7, info.min, info.min, 5, -5, 0], dtype),
                np.array([2, 2, -1, 1, 0, 0, 0], dtype))  # fmt: skip
    return np.array([7, 3, info.max, 5, 0], dtype), np.array([2, 2, 1, 0, 0], dtype)


@pytest.mark.parametrize("dtype", SIGNED + UNSIGNED, ids=lambda d: d.__name__)
@pytest.mark.parametrize(("op", "fmod"), [("Div", None), ("Mod", 0), ("Mod", 1)])
def test_integer_division_by_zero_and_overflow_never_traps(
    dtype: type, op: str, fmod: int | None
) -> None:
    """x / 0 = 0, x % 0 = 0, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0 (NumPy's
    results; onnxruntime raises for a zero divisor)."""
    a, b = _division_operands(dtype)
    attrs = {} if fmod is None else {"fmod": fmod}
    model = _model([helper.make_node(op, ["a", "b"], ["y"], **attrs)], {"a": a, "b": b},
                   dtype, [len(a)])  # fmt: skip
    y = _compiled_and_reference(model, {"a": a, "b": b})
    zero = b == 0
    assert np.all(y[zero] == 0)
    overflow = (a == np.iinfo(dtype).min) & (b.astype(np.int64) == -1)
    assert np.all(y[overflow] == (np.iinfo(dtype).min if op == "Div" else 0))
    safe = ~zero
    if dtype != np.int64:  # onnxruntime's int64 INT_MIN / -1 raises SIGFPE itself
        (expected,) = run_onnxruntime(
            _model([helper.make_node(op, ["a", "b"], ["y"], **attrs)],
                   {"a": a[safe], "b": b[safe]}, dtype, [int(safe.sum())]),
            {"a": a[safe], "b": b[safe]},
        )  # fmt: skip
        np.testing.assert_array_equal(y[safe], expected)


# ------------------------------------------------------ float -> integer


def _cast_inputs(dtype: type) -> np.ndarray:
    if dtype == np.float16:
        values = [NAN, INF, -INF, 60000, -60000, 3.7, -3.7, 300, -300, -1, 0.5, -0.0]
    else:
        values = [NAN, INF, -INF, 1e20, -1e20, 3.7, -3.7, 2.5e9, -2.5e9, 300, -300, 70000, -1,
                  2**31, -(2**31), 2**31 - 256, 2**63, -(2**63), 4e9, 5e9, 1e19, 0.5, -0.0]  # fmt: skip
    return np.array(values, dtype)


@pytest.mark.parametrize("source", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("target", SIGNED + UNSIGNED, ids=lambda d: d.__name__)
def test_float_to_int_cast_matches_onnxruntime(source: type, target: type) -> None:
    """NaN, infinities and out-of-range values: onnxruntime's results (INT_MIN of
    a 32- or 64-bit conversion, wrapped), not LLVM's saturation."""
    x = _cast_inputs(source)
    to = helper.np_dtype_to_tensor_dtype(np.dtype(target))
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=to)], {"x": x}, target, [len(x)])
    y = _compiled_and_reference(model, {"x": x})
    (expected,) = run_onnxruntime(model, {"x": x})
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("source", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_cast_of_nan_and_infinity_to_int32_is_int_min(source: type) -> None:
    x = np.array([NAN, INF, -INF, 1e20], source)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)], {"x": x},
                   np.int32, [4])  # fmt: skip
    y = _compiled_and_reference(model, {"x": x})
    assert np.all(y == np.iinfo(np.int32).min)


# ------------------------------------------------------------ NaN in max


ROWS = [[NAN, 1, 2, 3], [1, NAN, 2, 3], [1, 2, 3, NAN], [NAN, NAN, NAN, NAN],
        [-INF, NAN, -INF, -INF], [NAN, 5, NAN, 0]]  # fmt: skip


def _nanmax_rows(x: np.ndarray, is_max: bool) -> np.ndarray:
    """What a NaN-skipping max/min gives per row (NaN for an all-NaN row)."""
    ufunc = np.fmax if is_max else np.fmin
    return ufunc.reduce(x, axis=-1)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_reduce_max_min_skip_nan(dtype: type, op: str) -> None:
    x = np.array(ROWS, dtype)
    axes = helper.make_node("Constant", [], ["axes"],
                            value=helper.make_tensor("v", TensorProto.INT64, [1], [1]))  # fmt: skip
    nodes = [axes, helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)]
    y = _compiled_and_reference(_model(nodes, {"x": x}, dtype, [len(ROWS)]), {"x": x})
    np.testing.assert_array_equal(y, _nanmax_rows(x, op == "ReduceMax"))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_max_pool_skips_nan(dtype: type, rank: int) -> None:
    """Windows of 2 along the last axis, stride 1, with one padded element at
    each end (the padding is skipped too)."""
    x = np.array(ROWS, dtype).reshape(1, len(ROWS), *[1] * (rank - 1), 4)
    kernel = [1] * (rank - 1) + [2]
    pads = [0] * (rank - 1) + [1] + [0] * (rank - 1) + [1]
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=kernel, pads=pads)
    out = [1, len(ROWS), *[1] * (rank - 1), 5]
    y = _compiled_and_reference(_model([node], {"x": x}, dtype, out), {"x": x})
    padded = np.pad(np.array(ROWS, dtype), [(0, 0), (1, 1)], constant_values=NAN)
    expected = np.fmax(padded[:, :-1], padded[:, 1:])
    np.testing.assert_array_equal(y.reshape(len(ROWS), 5), expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=lambda d: d.__name__)
def test_global_max_pool_skips_nan(dtype: type) -> None:
    x = np.array(ROWS, dtype).reshape(1, len(ROWS), 2, 2)
    node = helper.make_node("GlobalMaxPool", ["x"], ["y"])
    y = _compiled_and_reference(_model([node], {"x": x}, dtype, [1, len(ROWS), 1, 1]), {"x": x})
    np.testing.assert_array_equal(y.reshape(-1), _nanmax_rows(np.array(ROWS, dtype), True))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_max_min_with_nan_match_onnxruntime(dtype: type, op: str, last: int) -> None:
    x = np.array(ROWS + [[3, 3, NAN, 3], [-1, NAN, -1, 7]], dtype)
    node = helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0, select_last_index=last)
    model = _model([node], {"x": x}, np.int64, [len(x)])
    y = _compiled_and_reference(model, {"x": x})
    (expected,) = run_onnxruntime(model, {"x": x})
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("op", ["Max", "Min"])
def test_elementwise_max_min_propagate_nan_as_onnxruntime(dtype: type, op: str) -> None:
    a = np.array([NAN, 1, NAN, -INF, 2, NAN], dtype)
    b = np.array([1, NAN, NAN, NAN, -INF, 0], dtype)
    model = _model([helper.make_node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, dtype, [6])
    y = _compiled_and_reference(model, {"a": a, "b": b})
    (expected,) = run_onnxruntime(model, {"a": a, "b": b})
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize(("low", "high"), [(0, 1), (NAN, NAN), (NAN, 1), (0, NAN), (2, 1)])
def test_clip_with_nan_matches_onnxruntime(dtype: type, low: float, high: float) -> None:
    x = np.array([NAN, -1, 2, 0.5, INF, -INF], dtype)
    feeds = {"x": x, "lo": np.array(low, dtype), "hi": np.array(high, dtype)}
    model = _model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], feeds, dtype, [6])
    y = _compiled_and_reference(model, feeds)
    (expected,) = run_onnxruntime(model, feeds)
    np.testing.assert_array_equal(y, expected)


# --------------------------------------------------------------- Gather


def _gather_model(indices: list[int], constant: bool) -> onnx.ModelProto:
    data = _info("x", np.float32, [3, 4])
    out = _info("y", np.float32, [len(indices), 4])
    if constant:
        tensor = helper.make_tensor("v", TensorProto.INT64, [len(indices)], indices)
        nodes = [helper.make_node("Constant", [], ["i"], value=tensor),
                 helper.make_node("Gather", ["x", "i"], ["y"], axis=0)]  # fmt: skip
        graph = helper.make_graph(nodes, "gather", [data], [out])
    else:
        node = helper.make_node("Gather", ["x", "i"], ["y"], axis=0)
        graph = helper.make_graph([node], "gather", [data, _info("i", np.int64, [len(indices)])],
                                  [out])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("indices", [[3], [-4], [100_000_000], [0, 5], [-4] * 100])
def test_constant_gather_index_out_of_range_is_a_compile_error(indices: list[int]) -> None:
    with pytest.raises(
        CompileError,
        match=r"graph\.gather .*constant index -?\d+ of %y is out of range for axis 0 of size 3",
    ):
        ember.compile(_gather_model(indices, constant=True))


def test_run_time_gather_index_is_wrapped_then_clamped() -> None:
    """Run-time indices never read outside the data: a negative one counts from
    the end once, then the index is clamped into [0, s - 1]."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.array([0, -1, 3, -4, 1 << 40, -(1 << 40), 2], np.int64)
    (y,) = ember.compile(_gather_model(list(indices), constant=False))(x, indices)
    rows = np.clip(np.where(indices < 0, indices + 3, indices), 0, 2)
    np.testing.assert_array_equal(y, x[rows])


# ------------------------------------------------------------ ai.onnx.ml


def _ml_model(
    node: onnx.NodeProto, inputs: dict[str, np.ndarray], out_shape: list[int]
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "numerics", [_info(n, a.dtype.type, list(a.shape)) for n, a in inputs.items()],
        [_info("y", np.float32, out_shape)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 1)])


def test_binarizer_of_nan_is_zero() -> None:
    x = np.array([NAN, -np.inf, np.inf, 0.5, 0.25], np.float32)
    node = helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.25)
    y = _compiled_and_reference(_ml_model(node, {"x": x}, [5]), {"x": x})
    np.testing.assert_array_equal(y, [0, 0, 1, 1, 0])


def test_array_feature_extractor_index_is_wrapped_then_clamped() -> None:
    """A negative index counts from the end once (the reference interpreter
    agrees); compiled code clamps what is still outside."""
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    indices = np.array([-1, 2, -4], np.int64)
    y = _compiled_and_reference(_ml_model(node, {"x": x, "i": indices}, [2, 3]),
                                {"x": x, "i": indices})  # fmt: skip
    np.testing.assert_array_equal(y, x[:, [3, 2, 0]])
    beyond = np.array([7, -9], np.int64)
    model = _ml_model(node, {"x": x, "i": beyond}, [2, 2])
    (y,) = ember.compile(model).run({"x": x, "i": beyond})
    np.testing.assert_array_equal(y, x[:, [3, 0]])


def _forest_model(x: np.ndarray, aggregate: int, mode: int, split: float,
                  members: list[float] | None) -> onnx.ModelProto:  # fmt: skip
    """One split of feature 0: its true branch a leaf of target 0, its false
    branch one of target 1 (of two targets, or three: the third no leaf names)."""
    attrs: dict = {"aggregate_function": aggregate, "tree_roots": [0], "n_targets": 3,
                   "nodes_featureids": [0], "nodes_truenodeids": [0], "nodes_falsenodeids": [1],
                   "nodes_trueleafs": [1], "nodes_falseleafs": [1], "leaf_targetids": [0, 1]}  # fmt: skip
    tensors = {"nodes_modes": np.array([mode], np.uint8),
               "nodes_splits": np.array([split], np.float32),
               "leaf_weights": np.array([2.0, -3.0], np.float32)}  # fmt: skip
    if members is not None:
        tensors["membership_values"] = np.array([*members, NAN], np.float32)
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", **attrs,
                            **{k: onnx.numpy_helper.from_array(v) for k, v in tensors.items()})  # fmt: skip
    graph = helper.make_graph([node], "numerics", [_info("x", np.float32, list(x.shape))],
                              [_info("y", np.float32, [x.shape[0], 3])])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 5)])


@pytest.mark.parametrize("aggregate", [2, 3])
def test_tree_ensemble_min_max_of_no_leaf_is_zero(aggregate: int) -> None:
    x = np.array([[0.0], [1.0]], np.float32)
    y = _compiled_and_reference(_forest_model(x, aggregate, 0, 0.5, None), {"x": x})
    np.testing.assert_array_equal(y, [[2, 0, 0], [0, -3, 0]])


def test_tree_ensemble_member_is_compared_exactly() -> None:
    x = np.array([[-1.5], [-1.0], [NAN]], np.float32)
    y = _compiled_and_reference(_forest_model(x, 1, 6, NAN, [-1.0, 3.0]), {"x": x})
    np.testing.assert_array_equal(y, [[0, -3, 0], [2, 0, 0], [0, -3, 0]])


# ------------------------------------------------------------ TfIdfVectorizer


def _tfidf_node(
    mode: str, indexes: list[int], weights: list[float], pool: list[int]
) -> onnx.NodeProto:
    return helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="vectorize", mode=mode,
                            min_gram_length=1, max_gram_length=1, max_skip_count=0,
                            ngram_counts=[0], ngram_indexes=indexes, pool_int64s=pool,
                            weights=weights)  # fmt: skip


@pytest.mark.parametrize("mode", ["IDF", "TFIDF"])
def test_tfidf_weights_belong_to_ngrams_not_columns(mode: str) -> None:
    """weights[i] weighs the i-th n-gram wherever ngram_indexes puts it, as
    onnxruntime reads it (ONNX's reference evaluator reads the i-th column's)."""
    x = np.array([1, 2, 3, 3], np.int32)
    model = _model([_tfidf_node(mode, [2, 0, 1], [10.0, 20.0, 30.0], [1, 2, 3])], {"x": x},
                   np.float32, [3])  # fmt: skip
    y = _compiled_and_reference(model, {"x": x})
    np.testing.assert_array_equal(y, run_onnxruntime(model, {"x": x})[0])
    np.testing.assert_array_equal(y, [20, 30, 10] if mode == "IDF" else [20, 60, 10])


@pytest.mark.parametrize(("indexes", "pool", "message"), [
    ([0, 0, 1], [1, 2, 3], "mode IDF: the n-grams of column 0 have different weights"),
    ([0, 1, 2], [1, 2, 1], "pool_int64s repeats the 1-gram [1]"),
])  # fmt: skip
def test_tfidf_ambiguous_pools_are_refused(
    indexes: list[int], pool: list[int], message: str
) -> None:
    """onnxruntime gives a column of IDF n-grams with different weights the
    weight of its last match, and refuses a repeated n-gram; Ember refuses both."""
    x = np.array([1, 2, 3], np.int32)
    model = _model([_tfidf_node("IDF", indexes, [10.0, 20.0, 30.0], pool)], {"x": x},
                   np.float32, [2])  # fmt: skip
    with pytest.raises(EmberError, match=re.escape(message)):
        ember.compile(model)
