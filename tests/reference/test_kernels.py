"""The NumPy reference kernels against onnxruntime, one single-node opset-21 model per case."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import TensorProto, helper, numpy_helper

from ember.dialects.graph import OPS
from ember.dialects.graph.spec import IMPORTED_DOMAINS, ONNX_DOMAIN
from ember.reference.kernels import KERNELS, schema_defaults

OPSET = 21
F32 = np.float32

_SESSION_OPTIONS = ort.SessionOptions()
_SESSION_OPTIONS.intra_op_num_threads = 1
_SESSION_OPTIONS.inter_op_num_threads = 1
_SESSION_OPTIONS.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL


def run_ort(
    op_type: str,
    inputs: Sequence[np.ndarray | None],
    attrs: dict[str, Any] | None = None,
    n_outputs: int = 1,
    opset: int = OPSET,
) -> list[np.ndarray]:
    """Build a single-node model (opset 21 unless `opset`; None inputs become "") and run it
    in onnxruntime."""
    names = ["" if x is None else f"in{i}" for i, x in enumerate(inputs)]
    onnx_attrs = {
        k: numpy_helper.from_array(v) if isinstance(v, np.ndarray) else v
        for k, v in (attrs or {}).items()
    }
    outputs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, **onnx_attrs)
    graph_inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
        for n, x in zip(names, inputs, strict=True)
        if x is not None
    ]
    graph_outputs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    graph = helper.make_graph([node], op_type, graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    session = ort.InferenceSession(
        model.SerializeToString(), _SESSION_OPTIONS, providers=["CPUExecutionProvider"]
    )
    feeds = {n: x for n, x in zip(names, inputs, strict=True) if x is not None}
    return [np.asarray(y) for y in session.run(None, feeds)]


def run_kernel(
    op_type: str, inputs: Sequence[np.ndarray | None], attrs: dict[str, Any] | None = None,
    n_outputs: int = 1,
) -> list[np.ndarray]:  # fmt: skip
    """Run the reference kernel with the schema defaults merged under ``attrs``,
    asking for `n_outputs` (``__num_results__``)."""
    defaults = schema_defaults(op_type, OPSET)
    return KERNELS[op_type](inputs, {**defaults, **(attrs or {}), "__num_results__": n_outputs})


def assert_same(got: Sequence[np.ndarray], expected: Sequence[np.ndarray], tol: float) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert isinstance(g, np.ndarray)
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        assert g.shape == e.shape, (g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def check(
    op_type: str,
    inputs: Sequence[np.ndarray | None],
    attrs: dict[str, Any] | None = None,
    *,
    n_outputs: int = 1,
    tol: float = 1e-5,
    opset: int = OPSET,
) -> list[np.ndarray]:
    """Compare the kernel with onnxruntime on one node; returns the kernel's outputs."""
    inputs = [None if x is None else np.asarray(x) for x in inputs]  # 0-d arrays, not scalars
    expected = run_ort(op_type, inputs, attrs, n_outputs, opset)
    got = run_kernel(op_type, inputs, attrs, n_outputs)
    assert_same(got, expected, tol)
    return got


def rng_for(*key: object) -> np.random.Generator:
    """A generator seeded from the test's parameters (stable across runs and processes)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def randn(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape) * scale, dtype=F32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


# ----------------------------------------------------------------------------- elementwise

_POSITIVE, _UNIT, _NONZERO = "positive", "unit", "nonzero"
UNARY_DOMAIN = {
    "Abs": None, "Neg": None, "Relu": None, "Sigmoid": None, "Tanh": None, "Exp": None,
    "Log": _POSITIVE, "Sqrt": _POSITIVE, "Reciprocal": _NONZERO, "Floor": None, "Ceil": None,
    "Sign": None, "Erf": None, "Sin": None, "Cos": None, "Tan": _UNIT, "Asin": _UNIT,
    "Acos": _UNIT, "Atan": None, "Sinh": None, "Cosh": None, "Softplus": None,
    "Softsign": None, "HardSwish": None, "Mish": None,
}  # fmt: skip


def unary_input(op: str) -> np.ndarray:
    rng = rng_for(op)
    domain = UNARY_DOMAIN[op]
    if domain == _POSITIVE:
        return rng.uniform(0.05, 5.0, (3, 4, 5)).astype(F32)
    if domain == _UNIT:
        return rng.uniform(-0.99, 0.99, (3, 4, 5)).astype(F32)
    if domain == _NONZERO:
        return (rng.choice([-1.0, 1.0], (3, 4, 5)) * rng.uniform(0.2, 3, (3, 4, 5))).astype(F32)
    x = randn(rng, 3, 4, 5, scale=2.5)
    x[0, 0, :3] = 0.0
    return x


@pytest.mark.parametrize("op", sorted(UNARY_DOMAIN))
def test_unary_float(op: str) -> None:
    check(op, [unary_input(op)])


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
@pytest.mark.parametrize("op", ["Sigmoid", "Exp", "Tanh", "Relu", "Sqrt", "Log", "Round", "Sin"])
def test_unary_other_float_dtypes(op: str, dtype: Any) -> None:
    # Results stay in the input dtype (computed in float64, rounded once).
    x = (np.abs(randn(rng_for(op, dtype), 3, 4, scale=2.0)) + 0.1).astype(dtype)
    check(op, [x], tol=1e-3 if dtype == np.float16 else 1e-9)


@pytest.mark.parametrize("op", ["Abs", "Neg", "Sign", "Relu"])
def test_unary_int(op: str) -> None:
    check(op, [rng_for(op).integers(-50, 50, (4, 5)).astype(np.int32)])


def test_round_half_to_even() -> None:
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.7, 0.2, 7.5], dtype=F32)
    got = check("Round", [x])
    np.testing.assert_array_equal(got[0], [-2, -2, -0, 0, 2, 2, 4, -4, 0, 8])


def test_not_isnan() -> None:
    check("Not", [rng_for("Not").integers(0, 2, (3, 4)).astype(bool)])
    x = randn(rng_for("IsNaN"), 3, 4)
    x[1, 2] = x[0, 0] = np.nan
    check("IsNaN", [x])


ACTIVATIONS = [
    ("LeakyRelu", {}),
    ("LeakyRelu", {"alpha": 0.2}),
    ("Elu", {}),
    ("Elu", {"alpha": 0.5}),
    ("Selu", {}),
    ("Selu", {"alpha": 1.5, "gamma": 0.8}),
    ("HardSigmoid", {}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("Gelu", {}),
    ("Gelu", {"approximate": "tanh"}),
    ("Celu", {}),
    ("Celu", {"alpha": 2.0}),
    ("ThresholdedRelu", {}),
    ("ThresholdedRelu", {"alpha": 0.5}),
]


@pytest.mark.parametrize(("op", "attrs"), ACTIVATIONS)
def test_activation(op: str, attrs: dict[str, Any]) -> None:
    check(op, [randn(rng_for(op, attrs), 2, 3, 7, scale=3.0)], attrs)


CASTS = [
    (F32, TensorProto.INT32),
    (F32, TensorProto.INT64),
    (F32, TensorProto.FLOAT16),
    (F32, TensorProto.DOUBLE),
    (F32, TensorProto.BOOL),
    (np.float64, TensorProto.FLOAT),
    (np.int64, TensorProto.FLOAT),
    (np.int32, TensorProto.INT8),
    (np.uint8, TensorProto.INT64),
    (np.bool_, TensorProto.FLOAT),
    (np.int64, TensorProto.BOOL),
]


@pytest.mark.parametrize(("src", "to"), CASTS)
def test_cast(src: Any, to: int) -> None:
    rng = rng_for(src, to)
    if np.dtype(src).kind == "f":
        x = (rng.standard_normal((3, 5)) * 40).astype(src)
        x[0, :2] = 0.0
    elif np.dtype(src) == np.bool_:
        x = rng.integers(0, 2, (3, 5)).astype(bool)
    else:
        x = rng.integers(0, 100, (3, 5)).astype(src)
    check("Cast", [x], {"to": to})


@pytest.mark.parametrize("saturate", [0, 1])
def test_cast_float8_e4m3fn(saturate: int) -> None:
    # onnxruntime returns float8 tensors as their uint8 bit patterns.
    x = np.array([0.1, 1.7, -3.3, 500, 1e6, -1e6, np.inf, -np.inf, np.nan, 0, -0.0, 1e-9], F32)
    attrs = {"to": TensorProto.FLOAT8E4M3FN, "saturate": saturate}
    (expected,) = run_ort("Cast", [x], attrs)
    (got,) = run_kernel("Cast", [x], attrs)
    assert got.dtype == helper.tensor_dtype_to_np_dtype(TensorProto.FLOAT8E4M3FN)
    np.testing.assert_array_equal(got.view(np.uint8), expected)


@pytest.mark.parametrize(
    ("to", "saturate", "expected"),
    [
        (TensorProto.FLOAT8E5M2, 1, [57344, -57344, 57344, -57344, 1.75]),
        (TensorProto.FLOAT8E5M2, 0, [np.inf, -np.inf, np.inf, -np.inf, 1.75]),
        # Saturating, infinities become the largest value even without infinities
        # in the type (FNUZ): onnx's reference and its conformance data (the spec's
        # table says NaN).
        (TensorProto.FLOAT8E4M3FNUZ, 1, [240, -240, 240, -240, 1.75]),
        (TensorProto.FLOAT8E5M2FNUZ, 1, [57344, -57344, 57344, -57344, 1.75]),
        (TensorProto.FLOAT8E5M2FNUZ, 0, [np.nan, np.nan, np.nan, np.nan, 1.75]),
    ],
)
def test_cast_float8_table(to: int, saturate: int, expected: list[float]) -> None:
    # onnxruntime cannot return these float8 types to numpy: check the Cast spec's table
    # (as onnx's reference reads it).
    x = np.array([np.inf, -np.inf, 1e6, -1e6, 1.7], F32)
    (got,) = run_kernel("Cast", [x], {"to": to, "saturate": saturate})
    assert got.dtype == helper.tensor_dtype_to_np_dtype(to)
    np.testing.assert_array_equal(got.astype(F32), np.array(expected, F32))


@pytest.mark.parametrize("variant", ["both", "min", "max", "none", "int"])
def test_clip(variant: str) -> None:
    x = randn(rng_for("Clip", variant), 4, 6, scale=3.0)
    lo, hi = np.array(-1.0, F32), np.array(1.5, F32)
    if variant == "int":
        x, lo, hi = (x * 10).astype(np.int32), np.array(-5, np.int32), np.array(7, np.int32)
    inputs = {
        "both": [x, lo, hi],
        "min": [x, lo],
        "max": [x, None, hi],
        "none": [x],
        "int": [x, lo, hi],
    }[variant]
    check("Clip", inputs)


def test_dropout() -> None:
    """Deterministic unless training with a nonzero ratio: the identity, mask all true."""
    x = randn(rng_for("Dropout"), 3, 4)
    check("Dropout", [x])
    check("Dropout", [x, np.array(0.3, F32), np.array(False)], n_outputs=2)
    check("Dropout", [x, np.array(0.0, F32), np.array(True)], n_outputs=2)


@pytest.mark.parametrize("ratio", [0.1, 0.5, 0.75])
def test_dropout_training(ratio: float) -> None:
    """Random masks (no run of onnxruntime's generator to compare with): the
    share dropped is the ratio (within 5 standard deviations of a binomial),
    kept elements are scaled by 1 / (1 - ratio), the rest are 0, and the
    mask depends on the seed only."""
    x = randn(rng_for("DropoutTraining"), 100, 100) + 10  # no zeros among the inputs
    inputs = [x, np.array(ratio, F32), np.array(True)]
    y, mask = run_kernel("Dropout", inputs, {"seed": 3}, n_outputs=2)
    spread = 5 * math.sqrt(ratio * (1 - ratio) / x.size)
    assert abs((1 - mask.mean()) - ratio) < spread
    np.testing.assert_array_equal(y, np.where(mask, x * (F32(1) / (F32(1) - F32(ratio))), 0))
    again, other = (
        run_kernel("Dropout", inputs, {"seed": seed}, n_outputs=2)[1] for seed in (3, 4)
    )
    np.testing.assert_array_equal(again, mask)
    assert (other != mask).any()


BROADCAST_SHAPES = [((3, 4, 5), (4, 1)), ((2, 1), (1, 3)), ((5,), ()), ((), ())]


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES)
def test_binary_arith_float(op: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    rng = rng_for(op, shapes)
    a = randn(rng, *shapes[0])
    b = (rng.uniform(0.5, 2.0, shapes[1]) * rng.choice([-1, 1], shapes[1])).astype(F32)
    check(op, [a, b])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_binary_arith_int(op: str, dtype: Any) -> None:
    rng = rng_for(op, dtype)
    a = rng.integers(-50, 50, (4, 6)).astype(dtype)
    b = (rng.integers(1, 8, (6,)) * rng.choice([-1, 1], (6,))).astype(dtype)
    check(op, [a, b])  # integer Div truncates toward zero


def test_pow() -> None:
    rng = rng_for("Pow")
    base = rng.uniform(0.1, 3.0, (3, 4)).astype(F32)
    check("Pow", [base, rng.uniform(-2, 2, (4,)).astype(F32)])
    check("Pow", [randn(rng, 3, 4), np.array([0, 1, 2, 3], np.int32)])
    check("Pow", [rng.integers(-5, 5, (3, 4)).astype(np.int32), np.array(3, np.int32)])
    check("Pow", [rng.integers(-5, 5, (3, 4)).astype(np.int64), np.array(2.0, F32)])


@pytest.mark.parametrize(
    ("dtype", "fmod"), [(np.int32, 0), (np.int64, 0), (np.int32, 1), (F32, 1), (np.float64, 1)]
)
def test_mod(dtype: Any, fmod: int) -> None:
    rng = rng_for("Mod", dtype, fmod)
    a = (rng.standard_normal((4, 5)) * 20).astype(dtype)
    b = (rng.integers(1, 7, (5,)) * rng.choice([-1, 1], (5,))).astype(dtype)
    if np.dtype(dtype).kind == "f":
        b = b * np.asarray(1.3, dtype)
    check("Mod", [a, b], {"fmod": fmod})


@pytest.mark.parametrize("slope_shape", [(3, 1, 1), (1,), (5,)])
def test_prelu(slope_shape: tuple[int, ...]) -> None:
    rng = rng_for("PRelu", slope_shape)
    check("PRelu", [randn(rng, 2, 3, 4, 5), randn(rng, *slope_shape)])


@pytest.mark.parametrize("op", ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"])
@pytest.mark.parametrize("dtype", [F32, np.int64])
def test_compare(op: str, dtype: Any) -> None:
    rng = rng_for(op, dtype)
    check(op, [rng.integers(-3, 3, (4, 5)).astype(dtype), rng.integers(-3, 3, (5,)).astype(dtype)])


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logical(op: str) -> None:
    rng = rng_for(op)
    check(op, [rng.integers(0, 2, (3, 4)).astype(bool), rng.integers(0, 2, (4,)).astype(bool)])


@pytest.mark.parametrize("op", ["Sum", "Max", "Min", "Mean"])
@pytest.mark.parametrize("arity", [1, 3])
def test_variadic(op: str, arity: int) -> None:
    rng = rng_for(op, arity)
    shapes = [(2, 3, 4), (3, 1), (4,)][:arity]
    check(op, [randn(rng, *s) for s in shapes])


def test_variadic_int() -> None:
    rng = rng_for("variadic_int")
    for op in ["Max", "Min"]:  # ONNX Sum/Mean are float-only
        check(op, [rng.integers(-9, 9, (3, 4)).astype(np.int32) for _ in range(2)])


def test_where() -> None:
    rng = rng_for("Where")
    cond = rng.integers(0, 2, (3, 1, 5)).astype(bool)
    check("Where", [cond, randn(rng, 4, 5), randn(rng, 3, 4, 1)])
    check("Where", [cond, rng.integers(0, 9, (5,)).astype(np.int64), np.array(-1, np.int64)])


# ----------------------------------------------------------------------------- nn

CONV_CASES: list[tuple[tuple[int, ...], tuple[int, ...], dict[str, Any], bool]] = [
    ((1, 3, 8, 8), (4, 3, 3, 3), {}, True),
    ((2, 3, 9, 9), (4, 3, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}, True),
    ((1, 2, 10, 9), (3, 2, 3, 3), {"dilations": [2, 2], "pads": [1, 0, 2, 1]}, False),
    ((2, 4, 7, 7), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, True),
    ((1, 4, 6, 6), (4, 1, 3, 3), {"group": 4, "strides": [2, 1]}, True),
    ((1, 2, 7, 7), (3, 2, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, True),
    ((1, 2, 6, 6), (3, 2, 2, 2), {"auto_pad": "SAME_UPPER"}, False),
    ((1, 2, 6, 6), (3, 2, 2, 2), {"auto_pad": "SAME_LOWER"}, False),
    ((1, 2, 7, 8), (3, 2, 4, 3), {"auto_pad": "SAME_LOWER", "strides": [3, 2]}, True),
    ((1, 2, 8, 8), (3, 2, 3, 3), {"auto_pad": "VALID", "strides": [2, 3]}, False),
    ((2, 3, 10), (4, 3, 3), {"strides": [2], "pads": [1, 2], "dilations": [2]}, True),
    ((1, 2, 5, 5, 5), (2, 2, 3, 3, 3), {"pads": [1, 1, 1, 1, 1, 1]}, True),
    ((1, 3, 8, 8), (4, 3, 3, 1), {"kernel_shape": [3, 1], "strides": [1, 2]}, False),
    ((2, 8, 5, 5), (16, 8, 1, 1), {}, True),
]


@pytest.mark.parametrize(("xs", "ws", "attrs", "bias"), CONV_CASES)
def test_conv(xs: tuple[int, ...], ws: tuple[int, ...], attrs: dict[str, Any], bias: bool) -> None:
    rng = rng_for("Conv", xs, ws, attrs)
    inputs = [randn(rng, *xs), randn(rng, *ws)] + ([randn(rng, ws[0])] if bias else [])
    check("Conv", inputs, attrs, tol=1e-4)


@pytest.mark.parametrize(
    ("auto_pad", "pads"), [("SAME_UPPER", [2, 2, 2, 3]), ("SAME_LOWER", [2, 3, 2, 2])]
)
def test_conv_same_dilated(auto_pad: str, pads: list[int]) -> None:
    # onnxruntime rejects auto_pad SAME with dilations, so compare with the explicit pads that
    # the ONNX rule gives: total = (ceil(in / stride) - 1) * stride + (k - 1) * d + 1 - in.
    rng = rng_for("ConvSameDilated", auto_pad)
    x, w = randn(rng, 1, 2, 8, 8), randn(rng, 3, 2, 3, 3)
    attrs = {"dilations": [2, 3], "strides": [1, 2]}
    expected = run_ort("Conv", [x, w], {**attrs, "pads": pads})
    assert_same(run_kernel("Conv", [x, w], {**attrs, "auto_pad": auto_pad}), expected, 1e-4)


POOL_CASES: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((1, 2, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((2, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 7, 6), {"kernel_shape": [3, 2], "pads": [1, 0, 2, 1]}),
    ((1, 2, 8, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 2, 5, 5), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1],
                    "ceil_mode": 1}),
    ((1, 1, 10, 9), {"kernel_shape": [3, 3], "strides": [3, 2], "pads": [2, 1, 0, 0],
                     "ceil_mode": 1}),
    ((1, 2, 9, 9), {"kernel_shape": [3, 3], "dilations": [2, 2]}),
    ((1, 2, 10, 10), {"kernel_shape": [2, 3], "dilations": [2, 1], "strides": [2, 2],
                      "ceil_mode": 1}),
    ((1, 2, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 6, 6), {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 6, 6), {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 8, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID"}),
    ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ((1, 2, 5, 6, 4), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1]}),
]  # fmt: skip


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize(("xs", "attrs"), POOL_CASES)
def test_pool(op: str, xs: tuple[int, ...], attrs: dict[str, Any]) -> None:
    check(op, [randn(rng_for(op, xs, attrs), *xs)], attrs)


@pytest.mark.parametrize(("xs", "attrs"), [c for c in POOL_CASES if "pads" in c[1]])
def test_average_pool_count_include_pad(xs: tuple[int, ...], attrs: dict[str, Any]) -> None:
    x = randn(rng_for("AvgPoolCIP", xs, attrs), *xs)
    check("AveragePool", [x], {**attrs, "count_include_pad": 1})


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize(("xs", "attrs"), POOL_CASES)
def test_max_pool_indices(xs: tuple[int, ...], attrs: dict[str, Any], storage_order: int) -> None:
    """Rounded values, so that windows hold ties: the first maximum's index counts."""
    x = np.round(randn(rng_for("MaxPoolIndices", xs, attrs), *xs, scale=2.0))
    check("MaxPool", [x], {**attrs, "storage_order": storage_order}, n_outputs=2, tol=0)


def test_max_pool_int() -> None:
    x = rng_for("MaxPoolInt").integers(-100, 100, (1, 2, 6, 6)).astype(np.int8)
    check("MaxPool", [x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]})


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("xs", [(2, 3, 5, 6), (2, 3, 7), (1, 2, 3, 4, 5)])
def test_global_pool(op: str, xs: tuple[int, ...]) -> None:
    check(op, [randn(rng_for(op, xs), *xs)])


@pytest.mark.parametrize(("xs", "eps"), [((2, 3, 4, 5), 1e-5), ((4, 3), 1e-3), ((2, 3, 6), 0.1)])
def test_batch_normalization(xs: tuple[int, ...], eps: float) -> None:
    rng = rng_for("BN", xs)
    c = xs[1]
    params = [randn(rng, c), randn(rng, c), randn(rng, c), rng.uniform(0.5, 2, c).astype(F32)]
    check("BatchNormalization", [randn(rng, *xs), *params], {"epsilon": eps})


@pytest.mark.parametrize(("xs", "momentum"), [((2, 3, 4, 5), 0.9), ((4, 3), 0.5), ((2, 3, 6), 0.0)])
def test_batch_normalization_training(xs: tuple[int, ...], momentum: float) -> None:
    """The batch's statistics normalise; running_mean and running_var blend
    them into the given ones with weight 1 - momentum (opset 15)."""
    rng = rng_for("BNTraining", xs)
    c = xs[1]
    params = [randn(rng, c), randn(rng, c), randn(rng, c), rng.uniform(0.5, 2, c).astype(F32)]
    check("BatchNormalization", [randn(rng, *xs, scale=3.0), *params],
          {"training_mode": 1, "momentum": momentum}, n_outputs=3, opset=15)  # fmt: skip


@pytest.mark.parametrize("xs", [(2, 3, 4, 5), (2, 3, 7)])
def test_instance_normalization(xs: tuple[int, ...]) -> None:
    rng = rng_for("IN", xs)
    check("InstanceNormalization", [randn(rng, *xs), randn(rng, xs[1]), randn(rng, xs[1])])


@pytest.mark.parametrize(
    ("axis", "bias", "attrs"),
    [(-1, True, {}), (1, True, {"epsilon": 1e-3}), (2, False, {}), (-2, True, {"stash_type": 1})],
)
def test_layer_normalization(axis: int, bias: bool, attrs: dict[str, Any]) -> None:
    rng = rng_for("LN", axis, bias)
    x = randn(rng, 2, 3, 4, 5, scale=2.0)
    norm_shape = x.shape[axis:]
    inputs = [x, randn(rng, *norm_shape)] + ([randn(rng, *norm_shape)] if bias else [])
    check("LayerNormalization", inputs, {"axis": axis, **attrs}, n_outputs=3)


@pytest.mark.parametrize(
    "attrs",
    [{"size": 3}, {"size": 5, "alpha": 0.01, "beta": 0.5, "bias": 2.0}, {"size": 1}],
)
def test_lrn(attrs: dict[str, Any]) -> None:
    check("LRN", [randn(rng_for("LRN", attrs), 2, 6, 4, 3, scale=3.0)], attrs)


@pytest.mark.parametrize("size", [2, 4])
def test_lrn_even_size(size: int) -> None:
    # onnxruntime only implements odd sizes; check the ONNX formula directly: the window of
    # channel c is [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)].
    x = randn(rng_for("LRNeven", size), 2, 5, 3)
    attrs = {"size": size, "alpha": 0.02, "beta": 0.6, "bias": 1.5}
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    x64 = x.astype(np.float64)
    square_sum = np.stack(
        [(x64[:, max(0, c - lo) : c + hi + 1] ** 2).sum(1) for c in range(x.shape[1])], axis=1
    )
    expected = (x64 / (1.5 + 0.02 / size * square_sum) ** 0.6).astype(F32)
    assert_same(run_kernel("LRN", [x], attrs), [expected], 1e-5)


GEMM_CASES: list[tuple[dict[str, Any], tuple[int, ...] | None]] = [
    ({}, (4, 5)),
    ({}, None),
    ({"transA": 1}, (5,)),
    ({"transB": 1}, (1, 5)),
    ({"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}, (4, 1)),
    ({"alpha": -1.5}, ()),
]


@pytest.mark.parametrize(("attrs", "c_shape"), GEMM_CASES)
def test_gemm(attrs: dict[str, Any], c_shape: tuple[int, ...] | None) -> None:
    rng = rng_for("Gemm", attrs, c_shape)
    a = randn(rng, *((3, 4) if attrs.get("transA") else (4, 3)))
    b = randn(rng, *((5, 3) if attrs.get("transB") else (3, 5)))
    inputs = [a, b] + ([] if c_shape is None else [randn(rng, *c_shape)])
    check("Gemm", inputs, attrs, tol=1e-4)


@pytest.mark.parametrize(
    ("a", "b"),
    [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 6))],
)
def test_matmul(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    rng = rng_for("MatMul", a, b)
    check("MatMul", [randn(rng, *a), randn(rng, *b)], tol=1e-4)
    check(
        "MatMul", [rng.integers(-5, 5, a).astype(np.int32), rng.integers(-5, 5, b).astype(np.int32)]
    )


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("attrs", [{}, {"axis": 0}, {"axis": 1}, {"axis": -2}])
def test_softmax(op: str, attrs: dict[str, Any]) -> None:
    check(op, [randn(rng_for(op, attrs), 3, 4, 5, scale=4.0)], attrs)


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten(axis: int) -> None:
    check("Flatten", [randn(rng_for("Flatten"), 2, 3, 4)], {"axis": axis})


# ----------------------------------------------------------------------------- tensor

CONSTANT_ATTRS: list[dict[str, Any]] = [
    {"value": np.arange(6, dtype=F32).reshape(2, 3)},
    {"value": np.array(7, dtype=np.int64)},
    {"value_float": 2.5},
    {"value_floats": [1.0, -2.0, 3.5]},
    {"value_int": 3},
    {"value_ints": [4, 5, -6]},
]


@pytest.mark.parametrize("attrs", CONSTANT_ATTRS)
def test_constant(attrs: dict[str, Any]) -> None:
    check("Constant", [], attrs)


@pytest.mark.parametrize(
    ("shape", "attrs"),
    [
        (i64(2, 3), {}),
        (i64(4), {"value": np.array([5], np.int64)}),
        (i64(), {"value": np.array([1.5], np.float64)}),
        (i64(2, 0, 3), {"value": np.array([1], np.int32)}),
    ],
)
def test_constant_of_shape(shape: np.ndarray, attrs: dict[str, Any]) -> None:
    check("ConstantOfShape", [shape], attrs)


@pytest.mark.parametrize(
    "attrs", [{}, {"start": 1}, {"end": -1}, {"start": -2, "end": 10}, {"start": 3, "end": 1}]
)
def test_shape(attrs: dict[str, Any]) -> None:
    check("Shape", [np.zeros((2, 3, 4, 5), F32)], attrs)


def test_size() -> None:
    check("Size", [np.zeros((2, 3, 4), F32)])
    check("Size", [np.zeros((), np.int64)])


@pytest.mark.parametrize(
    ("xs", "shape", "allowzero"),
    [
        ((2, 3, 4), i64(4, -1), 0),
        ((2, 3, 4), i64(0, 0, 2, 2), 0),
        ((2, 3, 4), i64(-1), 0),
        ((2, 0, 4), i64(0, -1), 0),
        ((0, 3), i64(3, 0), 1),
        ((2, 3, 4), i64(2, 12), 1),
    ],
)
def test_reshape(xs: tuple[int, ...], shape: np.ndarray, allowzero: int) -> None:
    check("Reshape", [randn(rng_for("Reshape", xs), *xs), shape], {"allowzero": allowzero})


@pytest.mark.parametrize("attrs", [{}, {"perm": [0, 2, 1, 3]}, {"perm": [3, 0, 1, 2]}])
def test_transpose(attrs: dict[str, Any]) -> None:
    check("Transpose", [randn(rng_for("Transpose"), 2, 3, 4, 5)], attrs)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis: int) -> None:
    rng = rng_for("Concat", axis)
    shapes = [[2, 3, 4] for _ in range(3)]
    for i, s in enumerate(shapes):
        s[axis] = i + 1
    check("Concat", [randn(rng, *s) for s in shapes], {"axis": axis})


SPLIT_CASES: list[tuple[tuple[int, ...], np.ndarray | None, dict[str, Any], int]] = [
    ((6, 4), i64(2, 4), {}, 2),
    ((3, 7), i64(1, 0, 6), {"axis": -1}, 3),
    ((6, 4), None, {"num_outputs": 3}, 3),
    ((7, 4), None, {"num_outputs": 3}, 3),
    ((2, 10), None, {"axis": 1, "num_outputs": 4}, 4),
]


@pytest.mark.parametrize(("xs", "split", "attrs", "n"), SPLIT_CASES)
def test_split(
    xs: tuple[int, ...], split: np.ndarray | None, attrs: dict[str, Any], n: int
) -> None:
    x = randn(rng_for("Split", xs, attrs), *xs)
    inputs = [x] if split is None else [x, split]
    check("Split", inputs, attrs, n_outputs=n)


def test_split_num_results() -> None:
    # Neither `split` nor `num_outputs`: onnxruntime rejects this at opset 21, so compare with
    # numpy's equal split into `__num_results__` (the node's output count) parts.
    x = randn(rng_for("SplitN"), 2, 9)
    got = run_kernel("Split", [x], {"axis": 1}, n_outputs=3)
    assert_same(got, np.split(x, 3, axis=1), 0.0)


INT_MAX, INT_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
SLICE_CASES: list[tuple[Any, ...]] = [
    (i64(1, 0), i64(3, 10), None, None),
    (i64(0), i64(-1), i64(1), None),
    (i64(-3), i64(INT_MAX), i64(-1), None),
    (i64(10, -100), i64(0, 100), i64(0, 2), i64(-2, 1)),
    (i64(INT_MAX), i64(INT_MIN), i64(1), i64(-1)),
    (i64(-1, 4), i64(-10, 0), i64(0, 2), i64(-3, -2)),
    (i64(1, 2, 0), i64(3, 5, 6), i64(2, 1, 0), i64(1, 2, 3)),
    (i64(5), i64(2), i64(0), i64(1)),
    (i64(0), i64(INT_MIN), i64(-2), i64(-1)),
    (i64(4, 0), i64(0, 5), None, i64(-1, 2)),
]


@pytest.mark.parametrize(("starts", "ends", "axes", "steps"), SLICE_CASES)
def test_slice(starts: Any, ends: Any, axes: Any, steps: Any) -> None:
    x = randn(rng_for("Slice"), 5, 6, 7)
    inputs = [x, starts, ends, axes, steps]
    while inputs[-1] is None:
        inputs.pop()
    check("Slice", inputs)
    run_kernel("Slice", [x, starts, ends, axes, steps])  # explicit trailing Nones also work


def test_slice_int_max_end_negative_step() -> None:
    # ONNX clamps end into [-1, dim - 1] for negative steps, so end = INT64_MAX acts as dim - 1
    # (as in numpy and the ONNX reference); onnxruntime instead treats it as "slice to the
    # start". The kernel follows the ONNX spec, checked against numpy.
    x = np.arange(5, dtype=F32)
    (got,) = run_kernel("Slice", [x, i64(3), i64(INT_MAX), i64(0), i64(-1)])
    np.testing.assert_array_equal(got, x[3:4:-1])
    assert got.shape == (0,)


@pytest.mark.parametrize(
    ("axis", "indices"),
    [(0, i64(0, -1, 2)), (1, np.array([[0, 3], [-2, 1]], np.int32)), (-1, i64(-1)[0]), (2, i64())],
)
def test_gather(axis: int, indices: np.ndarray) -> None:
    check("Gather", [randn(rng_for("Gather"), 3, 4, 5), np.asarray(indices)], {"axis": axis})


@pytest.mark.parametrize("axes", [None, i64(1), i64(-1, 1), i64(0, 1, 3)])
def test_squeeze(axes: np.ndarray | None) -> None:
    x = randn(rng_for("Squeeze"), 1, 1, 3, 1)
    check("Squeeze", [x] if axes is None else [x, axes])


@pytest.mark.parametrize("axes", [i64(0), i64(-1), i64(0, 3), i64(1, -1), i64(-4, 2)])
def test_unsqueeze(axes: np.ndarray) -> None:
    check("Unsqueeze", [randn(rng_for("Unsqueeze"), 3, 4), axes])


@pytest.mark.parametrize(
    ("xs", "shape"),
    [((3, 1), i64(2, 3, 4)), ((2, 3), i64(1)), ((2, 3), i64(3, 1, 1)), ((1,), i64(4)), ((), i64())],
)
def test_expand(xs: tuple[int, ...], shape: np.ndarray) -> None:
    check("Expand", [randn(rng_for("Expand", xs), *xs), shape])


@pytest.mark.parametrize("repeats", [i64(1, 1), i64(2, 3), i64(3, 1), i64(0, 2)])
def test_tile(repeats: np.ndarray) -> None:
    check("Tile", [randn(rng_for("Tile"), 2, 3), repeats])


PAD_CASES: list[tuple[str, np.ndarray, np.ndarray | None, np.ndarray | None]] = [
    ("constant", i64(1, 0, 2, 1, 3, 0), None, None),
    ("constant", i64(1, 2, 0, 0, 1, 3), np.array(1.5, F32), None),
    ("constant", i64(2, 1), np.array(-2.0, F32), i64(-1)),
    ("constant", i64(-1, 1, 0, 1, -1, 2), None, None),
    ("reflect", i64(1, 2, 0, 2, 1, 3), None, None),
    ("reflect", i64(2, 1, 1, 2), None, i64(0, 2)),
    ("edge", i64(2, 0, 1, 1, 3, 2), None, None),
    ("wrap", i64(1, 2, 3, 2, 1, 0), None, None),
    ("wrap", i64(3, 1), None, i64(1)),
]


@pytest.mark.parametrize(("mode", "pads", "value", "axes"), PAD_CASES)
def test_pad(mode: str, pads: np.ndarray, value: Any, axes: Any) -> None:
    x = randn(rng_for("Pad"), 3, 4, 5)
    inputs: list[np.ndarray | None] = [x, pads, value, axes]
    while inputs[-1] is None:
        inputs.pop()
    check("Pad", inputs, {"mode": mode})


def test_pad_int() -> None:
    x = rng_for("PadInt").integers(-9, 9, (3, 4)).astype(np.int32)
    check("Pad", [x, i64(1, 1, 2, 0), np.array(7, np.int32)])


@pytest.mark.parametrize(
    "args",
    [
        (np.array(1, np.int64), np.array(10, np.int64), np.array(3, np.int64)),
        (np.array(10, np.int32), np.array(-3, np.int32), np.array(-4, np.int32)),
        (np.array(0.5, F32), np.array(3.0, F32), np.array(0.3, F32)),
        (np.array(1.0, F32), np.array(-2.0, F32), np.array(-0.5, F32)),
        (np.array(5, np.int64), np.array(1, np.int64), np.array(2, np.int64)),
        # one-element tensors read as scalars (AffineGrid's function splits its limits)
        (np.array(0, np.int64), np.array([4], np.int64), np.array(1, np.int64)),
    ],
)
def test_range(args: tuple[np.ndarray, ...]) -> None:
    check("Range", list(args))


def test_identity() -> None:
    x = randn(rng_for("Identity"), 3, 4)
    (y,) = check("Identity", [x])
    assert y is not x


# ----------------------------------------------------------------------------- reductions

REDUCE_OPS = [
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
    "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp",
]  # fmt: skip
REDUCE_CASES: list[tuple[np.ndarray | None, dict[str, Any]]] = [
    (None, {}),
    (i64(1), {}),
    (i64(-1, 0), {"keepdims": 0}),
    (i64(0, 2), {}),
    (None, {"keepdims": 0}),
    (None, {"noop_with_empty_axes": 1}),
    (i64(), {"noop_with_empty_axes": 1}),
    (i64(), {}),
]


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize(("axes", "attrs"), REDUCE_CASES)
def test_reduce(op: str, axes: np.ndarray | None, attrs: dict[str, Any]) -> None:
    rng = rng_for(op, axes, attrs)
    x = rng.uniform(0.5, 1.5, (3, 4, 5)).astype(F32) * rng.choice([-1, 1], (3, 4, 5)).astype(F32)
    check(op, [x] if axes is None else [x, axes], attrs)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceMean"])
def test_reduce_int(op: str) -> None:
    x = rng_for(op, "int").integers(-4, 5, (3, 4)).astype(np.int64)
    check(op, [x, i64(1)])
    check(op, [x.astype(np.int32)], {"keepdims": 0})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"axis": 1},
        {"axis": -1, "keepdims": 0},
        {"select_last_index": 1},
        {"axis": 2, "select_last_index": 1, "keepdims": 0},
    ],
)
def test_arg_reduce(op: str, attrs: dict[str, Any]) -> None:
    x = rng_for(op, attrs).integers(0, 3, (3, 4, 5)).astype(F32)  # many ties
    check(op, [x], attrs)


# ----------------------------------------------------------------------------- contract


def test_schema_defaults_are_native() -> None:
    assert schema_defaults("Gelu") == {"approximate": "none"}
    assert schema_defaults("Conv") == {"group": 1, "auto_pad": "NOTSET"}
    assert schema_defaults("ConstantOfShape") == {}
    assert schema_defaults("LeakyRelu")["alpha"] == pytest.approx(0.01)
    assert schema_defaults("ReduceMean") == {"keepdims": 1, "noop_with_empty_axes": 0}


def test_every_kernel_has_an_opset21_schema() -> None:
    """(Ember's own layout ops, domain `ember`, and onnxruntime's contrib ops
    have none; the ops of ONNX's other domains have their domain's.)"""
    other = {op.SPEC.onnx_type: op.SPEC.domain for op in OPS if op.SPEC.domain != ONNX_DOMAIN}
    assert other.keys() <= KERNELS.keys()
    for op in KERNELS.keys() - other.keys():
        schema_defaults(op)  # raises for an unknown op_type
    for op, domain in other.items():
        if domain in IMPORTED_DOMAINS:
            schema_defaults(op, domain=domain)


# ----------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None, database=None)
@given(
    op=st.sampled_from(["Add", "Sub", "Mul", "Div", "Pow", "Greater", "Max"]),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
    seed=st.integers(0, 2**16),
)
def test_property_binary_broadcasting(op: str, shapes: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shapes.input_shapes[0]).astype(F32)
    b = rng.uniform(0.5, 2.0, shapes.input_shapes[1]).astype(F32)
    check(op, [a, b])


@st.composite
def slice_params(draw: st.DrawFn) -> tuple[tuple[int, ...], list[np.ndarray]]:
    shape = draw(st.lists(st.integers(0, 6), min_size=1, max_size=3).map(tuple))
    axes = draw(st.permutations(range(len(shape))))
    n = draw(st.integers(1, len(shape)))
    bound = st.one_of(st.integers(-9, 9), st.sampled_from([INT_MAX, INT_MIN]))
    starts = [draw(bound) for _ in range(n)]
    ends = [draw(bound) for _ in range(n)]
    steps = [draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in range(n)]
    # onnxruntime reads end == INT64_MAX as "to the end" even for negative steps, whereas
    # ONNX clamps it to dim - 1 (see test_slice_int_max_end_negative_step); avoid that here.
    ends = [INT_MIN if e == INT_MAX and s < 0 else e for e, s in zip(ends, steps, strict=True)]
    negate = draw(st.booleans())
    ax = [a - len(shape) if negate else a for a in axes[:n]]
    return shape, [i64(*starts), i64(*ends), i64(*ax), i64(*steps)]


@settings(max_examples=100, deadline=None, database=None)
@given(params=slice_params())
def test_property_slice(params: tuple[tuple[int, ...], list[np.ndarray]]) -> None:
    shape, args = params
    x = np.arange(int(np.prod(shape)), dtype=F32).reshape(shape)
    check("Slice", [x, *args], tol=0.0)


def _recurrent_inputs(op: str, rng: np.random.Generator, *, steps: int = 5, batch: int = 3,
                      features: int = 4, hidden: int = 6, directions: int = 1,
                      lengths: list[int] | None = None, states: bool = False,
                      peepholes: bool = False, layout: int = 0) -> list[np.ndarray | None]:  # fmt: skip
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op] * hidden
    x = randn(rng, *((batch, steps) if layout else (steps, batch)), features)
    state = (batch, directions, hidden) if layout else (directions, batch, hidden)
    inputs = [x, randn(rng, directions, gates, features, scale=0.5),
              randn(rng, directions, gates, hidden, scale=0.5),
              randn(rng, directions, 2 * gates, scale=0.3),
              None if lengths is None else np.array(lengths, np.int32),
              randn(rng, *state) if states else None]  # fmt: skip
    if op == "LSTM":
        inputs += [randn(rng, *state) if states else None,
                   randn(rng, directions, 3 * hidden, scale=0.3) if peepholes else None]  # fmt: skip
    return inputs


RECURRENT_CASES = [
    pytest.param({}, {}, id="defaults"),
    pytest.param({"direction": "reverse"}, {"lengths": [5, 2, 4], "states": True}, id="reverse-lens"),
    pytest.param({"direction": "bidirectional"}, {"directions": 2, "lengths": [1, 5, 3]},
                 id="bidirectional-lens"),
    pytest.param({"clip": 0.7}, {"states": True}, id="clip"),
    pytest.param({"activations": "per cell", "activation_alpha": [0.3], "activation_beta": [0.4]},
                 {}, id="activations"),
]  # fmt: skip


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("attrs, shape", RECURRENT_CASES)
def test_recurrent(op: str, attrs: dict[str, Any], shape: dict[str, Any]) -> None:
    attrs = dict(attrs)
    per = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    if attrs.get("activations") == "per cell":  # HardSigmoid reads the alpha and beta
        attrs["activations"] = ["HardSigmoid", "Softsign", "Tanh"][:per]
    rng = rng_for("recurrent", op, repr(attrs), repr(shape))
    inputs = _recurrent_inputs(op, rng, **shape)
    check(op, inputs, {**attrs, "hidden_size": 6}, n_outputs=3 if op == "LSTM" else 2, tol=1e-5)


def test_gru_linear_before_reset_and_lstm_peepholes() -> None:
    rng = rng_for("gru-lstm")
    check("GRU", _recurrent_inputs("GRU", rng, states=True),
          {"hidden_size": 6, "linear_before_reset": 1}, n_outputs=2)  # fmt: skip
    check("LSTM", _recurrent_inputs("LSTM", rng, states=True, peepholes=True, lengths=[5, 3, 1]),
          {"hidden_size": 6}, n_outputs=3)  # fmt: skip
