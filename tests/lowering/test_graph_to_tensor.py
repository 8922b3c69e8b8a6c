"""convert-graph-to-tensor keeps the meaning of every op it lowers.

Each case is a single-node ONNX model: it is imported, shape-inferred and
constant-folded, run by the `graph` reference interpreter, lowered, verified
(no `graph` op but `graph.constant` may remain) and run by the tensor-level
interpreter; both results must agree. The light model zoo (random weights),
the MLP and the transformer encoder go through the same check.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.utils.exceptions import DiagnosticException

import ember
from ember.dialects.graph import IMPORTABLE_OPS, OPS_BY_TYPE, ConstantOp, FusedOp
from ember.dialects.graph.spec import IMPORTED_DOMAINS
from ember.dialects.loop import KernelOp
from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass, lowerable_op_types
from ember.passes.graph.fold_constants import FoldConstantsPass
from ember.passes.graph.infer_shapes import InferShapesPass
from ember.passes.graph.optimize import graph_passes
from ember.reference.tensor_level import run_tensor_module
from tests.reference.test_domain_kernels import forest_input, random_forest
from tests.support.models import (
    SLOW_IN_PASS_TESTS,
    light_model_params,
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    transformer_encoder,
    with_random_weights,
)

F32 = np.float32
TOL = (1e-5, 1e-6)
LINALG_TOL = (1e-4, 1e-4)


@dataclass(frozen=True)
class Const:
    """An operand given as an initializer (a `graph.constant` after import)."""

    value: np.ndarray


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def randn(*shape: int, scale: float = 1.0, key: object = None) -> np.ndarray:
    return (_rng("randn", shape, scale, key).standard_normal(shape) * scale).astype(F32)


def uniform(low: float, high: float, *shape: int) -> np.ndarray:
    return _rng("uniform", low, high, shape).uniform(low, high, shape).astype(F32)


def ints(low: int, high: int, *shape: int, dtype: Any = np.int32) -> np.ndarray:
    return _rng("ints", low, high, shape, dtype).integers(low, high, shape).astype(dtype)


def bools(*shape: int, key: object = None) -> np.ndarray:
    return _rng("bools", shape, key).integers(0, 2, shape).astype(bool)


def i64(*values: int) -> Const:
    return Const(np.array(values, dtype=np.int64))


def single_node_model(
    op_type: str, inputs: list[Any], attrs: dict[str, Any], outputs: int, opset: int
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A one-node model: arrays are graph inputs, Const operands initializers,
    None a missing optional input. An op of another ONNX domain (ai.onnx.ml)
    is a node of that domain, in a model that imports only that domain."""
    names, graph_inputs, inits, feeds = [], [], [], {}
    for index, value in enumerate(inputs):
        name = f"in{index}"
        if value is None:
            names.append("")
            continue
        names.append(name)
        if isinstance(value, Const):
            inits.append(numpy_helper.from_array(value.value, name))
        else:
            dtype = helper.np_dtype_to_tensor_dtype(value.dtype)
            graph_inputs.append(helper.make_tensor_value_info(name, dtype, value.shape))
            feeds[name] = value
    onnx_attrs = {k: numpy_helper.from_array(v) if isinstance(v, np.ndarray) else v
                  for k, v in attrs.items()}  # fmt: skip
    out_names = [f"out{i}" for i in range(outputs)]
    spec_domain = OPS_BY_TYPE[op_type].SPEC.domain if op_type in OPS_BY_TYPE else ""
    domain = spec_domain if spec_domain in IMPORTED_DOMAINS else ""
    node = helper.make_node(op_type, names, out_names, domain=domain, **onnx_attrs)
    graph = helper.make_graph(
        [node],
        op_type,
        graph_inputs,
        [helper.make_empty_tensor_value_info(o) for o in out_names],
        inits,
    )
    version = IMPORTED_DOMAINS[domain][1] if domain else opset
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, version)],
                              ir_version=10)  # fmt: skip
    return model, feeds


def lower(module: Any, *, fold: bool = True) -> None:
    ctx = Context()
    InferShapesPass().apply(ctx, module)
    if fold:
        FoldConstantsPass().apply(ctx, module)
    ConvertGraphToTensorPass().apply(ctx, module)


def leftover_graph_ops(module: Any) -> list[str]:
    return [op.name for op in module.walk()
            if op.name.startswith("graph.") and op.name != "graph.constant"]  # fmt: skip


def check_lowering(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray], tol: tuple[float, float] = TOL,
    *, fold: bool = True,
) -> None:  # fmt: skip
    module = ember.import_onnx(model)
    if fold:
        FoldConstantsPass().apply(Context(), module)
    expected = ember.reference.run(module, feeds)
    lower(module, fold=fold)
    module.verify()
    assert leftover_graph_ops(module) == []
    got = run_tensor_module(module, feeds)
    assert len(got) == len(expected)
    rtol, atol = tol
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        assert g.shape == e.shape, (g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)


def case(
    op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, *,
    id: str = "", outputs: int = 1, tol: tuple[float, float] = TOL, opset: int = 21,
    fold: bool = True,
) -> Any:  # fmt: skip
    name = f"{op_type}-{id}" if id else op_type
    return pytest.param(op_type, inputs, attrs or {}, outputs, tol, opset, fold, id=name)


# ------------------------------------------------------------------ cases


def _halves() -> np.ndarray:
    x = randn(2, 3, 4, scale=3.0)
    x.flat[:8] = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.0]
    return x


def _with_zeros_and_nan() -> np.ndarray:
    x = randn(3, 4, key="zn")
    x[0, :2] = 0.0
    x[1, 1] = np.nan
    return x


def _with_nan() -> np.ndarray:
    x = randn(3, 4, key="nan")
    x[1, 2] = x[0, 0] = np.nan
    return x


_X = randn(2, 3, 4, scale=2.0)
_POSITIVE = uniform(0.05, 5.0, 2, 3, 4)
_UNIT = uniform(-0.95, 0.95, 2, 3, 4)
_NONZERO = np.where(_X >= 0, _X + 0.2, _X - 0.2).astype(F32)

UNARY_CASES = [
    case(op, [x])
    for op, x in [
        ("Abs", _X),
        ("Neg", _X),
        ("Relu", _X),
        ("Sign", _with_zeros_and_nan()),
        ("Identity", _X),
        ("Sigmoid", randn(2, 3, 4, scale=8.0)),
        ("Tanh", _X),
        ("Exp", _X),
        ("Log", _POSITIVE),
        ("Sqrt", _POSITIVE),
        ("Reciprocal", _NONZERO),
        ("Floor", _X),
        ("Ceil", _X),
        ("Round", _halves()),
        ("Erf", _X),
        ("Sin", _X),
        ("Cos", _X),
        ("Tan", _UNIT),
        ("Asin", _UNIT),
        ("Acos", _UNIT),
        ("Atan", _X),
        ("Sinh", _X),
        ("Cosh", _X),
        ("Softplus", randn(2, 3, 4, scale=30.0)),
        ("Softsign", _X),
        ("HardSwish", randn(2, 3, 4, scale=5.0)),
        ("Mish", randn(2, 3, 4, scale=5.0)),
        ("IsNaN", _with_nan()),
        ("Not", bools(3, 4)),
    ]
] + [
    case("LeakyRelu", [_X], {"alpha": 0.2}),
    case("Elu", [_X], {"alpha": 0.5}),
    case("Celu", [_X], {"alpha": 2.0}),
    case("ThresholdedRelu", [_X], {"alpha": 0.5}),
    case("Selu", [_X]),
    case("HardSigmoid", [randn(2, 3, 4, scale=5.0)], {"alpha": 0.3, "beta": 0.4}),
    case("Gelu", [_X], id="erf"),
    case("Gelu", [_X], {"approximate": "tanh"}, id="tanh"),
    case("Abs", [ints(-50, 50, 4, 5)], id="i32"),
    case("Neg", [ints(-50, 50, 4, 5, dtype=np.int64)], id="i64"),
    case("Relu", [ints(-50, 50, 4, 5)], id="i32"),
    case("Sign", [ints(-3, 3, 4, 5)], id="i32"),
    case("Dropout", [_X]),
    # training_mode at run time: SplitMix64 masks (bit for bit, reference and lowering)
    case(
        "Dropout", [_X, np.array(0.3, F32), np.array(True)], {"seed": 5}, outputs=2, id="training"
    ),
    case("Dropout", [_X, np.array(0.3, F32), np.array(False)], outputs=2, id="not-training"),
    case("Dropout", [_X, None, np.array(True)], outputs=2, id="training-default-ratio"),
    case(
        "Dropout",
        [_X.astype(np.float16), np.array(0.25, np.float64), np.array(True)],
        {"seed": -3},
        id="training-f16",
    ),
]

BINARY_CASES = [
    case("Add", [randn(2, 3, 4), randn(3, 1)], id="broadcast"),
    case("Sub", [randn(4), randn(2, 3, 4)], id="broadcast-first"),
    case("Mul", [randn(2, 1, 4), randn(1, 3, 1)], id="both"),
    case("Div", [randn(2, 3, 4), _NONZERO[0, 0]], id="vector"),
    case("Div", [ints(-20, 20, 3, 4), np.array([3, -3, 7, -2], np.int32)], id="int-truncates"),
    case("Add", [ints(0, 250, 3, 4, dtype=np.uint8), ints(0, 250, 4, dtype=np.uint8)], id="u8"),
    case("Mul", [ints(-9, 9, 3, 4, dtype=np.int64), np.array(3, np.int64)], id="scalar"),
    case("Equal", [ints(0, 3, 3, 4), ints(0, 3, 4)]),
    case("Equal", [np.round(randn(3, 4)), np.array([0.0], F32)], id="f32"),
    case("Less", [randn(3, 4), randn(3, 1)]),
    case("Less", [ints(0, 255, 3, 4, dtype=np.uint8), ints(0, 255, 4, dtype=np.uint8)], id="u8"),
    case("LessOrEqual", [np.round(randn(3, 4)), np.round(randn(4))]),
    case("Greater", [_with_nan(), randn(3, 4)], id="nan"),
    case("GreaterOrEqual", [ints(-5, 5, 3, 4, dtype=np.int64), ints(-5, 5, 1, 4, dtype=np.int64)]),
    case("And", [bools(3, 4), bools(4, key=1)]),
    case("Or", [bools(3, 4), bools(3, 1, key=1)]),
    case("Xor", [bools(3, 4), bools(3, 4, key=1)]),
    case("Pow", [_POSITIVE, randn(2, 3, 4)], id="float"),
    case("Pow", [randn(3, 4), np.array([2, 3, 0, 1], np.int64)], id="float-int"),
    case("Pow", [ints(-4, 5, 3, 4), np.array([2, 3, 0, 1], np.int32)], id="int"),
    case("Pow", [ints(1, 5, 3, 4, dtype=np.int64), uniform(0, 2, 4)], id="int-float"),
    case("Pow", [np.array([[-3, -2, -1, 1], [2, 3, 4, 1], [1, 2, -1, 3]], np.int32),
                 np.array([2, -1, 3, -2], np.int32)], id="int-negative-exponents"),
    case("Mod", [ints(-20, 20, 3, 4), np.array([3, -3, 7, -7], np.int32)], id="python"),
    case("Mod", [ints(-20, 20, 3, 4), np.array([3, -3, 7, -7], np.int32)], {"fmod": 1},
         id="fmod-int"),
    case("Mod", [randn(3, 4, scale=20), np.array([3.5, -3.0, 0.7, -7.25], F32)], {"fmod": 1},
         id="fmod-float"),
    case("Mod", [randn(3, 4, scale=20), np.array([3.5, -3.0, 0.7, -7.25], F32)],
         id="float-python"),
    case("Mod", [np.array([1e7, -3e6, 123456.7, -0.0, 5.5, 7.0], F32),
                 np.array([0.1, 0.7, -1e-3, 2.0, -5.5, 7.0], F32)], {"fmod": 1},
         id="fmod-large-quotients", tol=(0, 0)),
    case("PRelu", [randn(2, 3, 4), randn(3, 1)]),
    case("PRelu", [randn(2, 3, 4), randn(4)], id="last-dim"),
    case("Where", [bools(3, 1), randn(2, 3, 4), randn(4)]),
]  # fmt: skip

_CAST_SOURCES: dict[Any, np.ndarray] = {
    F32: _with_zeros_and_nan() * 50,
    np.float64: randn(3, 4, scale=50).astype(np.float64),
    np.float16: randn(3, 4, scale=10).astype(np.float16),
    np.int64: ints(-300, 300, 3, 4, dtype=np.int64),
    np.int32: ints(-300, 300, 3, 4, dtype=np.int32),
    np.int8: ints(-128, 128, 3, 4, dtype=np.int8),
    np.uint8: ints(0, 256, 3, 4, dtype=np.uint8),
    np.bool_: bools(3, 4),
}

CASTS = [
    (F32, TensorProto.INT32), (F32, TensorProto.INT64), (F32, TensorProto.DOUBLE),
    (F32, TensorProto.FLOAT16), (F32, TensorProto.BOOL), (np.float64, TensorProto.FLOAT),
    (np.float16, TensorProto.FLOAT), (np.int64, TensorProto.FLOAT), (np.int64, TensorProto.INT32),
    (np.int32, TensorProto.INT64), (np.int32, TensorProto.INT8), (np.int8, TensorProto.UINT8),
    (np.uint8, TensorProto.INT32), (np.uint8, TensorProto.FLOAT), (np.uint8, TensorProto.INT8),
    (np.bool_, TensorProto.FLOAT), (np.bool_, TensorProto.INT64), (np.int32, TensorProto.BOOL),
]  # fmt: skip


def _cast_input(src: Any, to: int) -> np.ndarray:
    x = _CAST_SOURCES[src]
    if np.dtype(src).kind == "f" and to not in (
        TensorProto.FLOAT,
        TensorProto.DOUBLE,
        TensorProto.FLOAT16,
        TensorProto.BOOL,
    ):
        x = np.nan_to_num(x)  # float -> int of NaN is undefined
    if np.dtype(src).kind == "f" and to == TensorProto.UINT8:
        x = np.abs(x)
    return x


OTHER_ELEMENTWISE_CASES = [
    case("Cast", [_cast_input(src, to)], {"to": to},
         id=f"{np.dtype(src).name}-{TensorProto.DataType.Name(to).lower()}")
    for src, to in CASTS
] + [
    case("Cast", [np.abs(_CAST_SOURCES[F32]) * 3], {"to": TensorProto.UINT8}, id="f32-u8"),
    case("Clip", [_X, Const(np.array(-0.5, F32)), Const(np.array(0.7, F32))]),
    case("Clip", [_X, Const(np.array([-0.5], F32))], id="min-only"),
    case("Clip", [_X, None, np.array(0.7, F32)], id="max-input"),
    case("Clip", [_X], id="no-bounds"),
    case("Clip", [_with_nan(), Const(np.array(0.5, F32)), Const(np.array(-0.5, F32))],
         id="nan-min-above-max"),
    case("Clip", [ints(-9, 9, 3, 4), Const(np.array(-2, np.int32)), Const(np.array(5, np.int32))],
         id="int"),
    case("Sum", [randn(2, 3, 4), randn(3, 1), randn(4)]),
    case("Sum", [randn(2, 3)], id="one"),
    case("Max", [_with_nan(), randn(3, 4), randn(4)]),
    case("Max", [ints(-9, 9, 3, 4), ints(-9, 9, 4)], id="int"),
    case("Min", [_with_nan(), randn(1, 4)]),
    case("Mean", [randn(2, 3, 4), randn(3, 1), randn(2, 1, 1)]),
]  # fmt: skip


def _with_ties_and_nan() -> np.ndarray:
    """Rounded values (ties in most windows), a NaN beside a value, and a
    window of NaN alone."""
    x = np.round(randn(1, 2, 5, 5, key="ties"))
    x[0, 0, 1, 1] = x[0, 1, 2, 3] = np.nan
    x[0, 1, 3:, :2] = np.nan
    return x.astype(F32)


_IMAGE = randn(2, 4, 9, 9)
_SIGNAL = randn(2, 3, 11)
_VOLUME = randn(1, 2, 5, 6, 7)

WINDOW_CASES = [
    case("ConvTranspose", [randn(1, 4, 6, 6), Const(randn(4, 5, 3, 3)), randn(5)],
         {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, tol=LINALG_TOL),
    case("ConvTranspose", [randn(2, 4, 5, 6), randn(4, 3, 3, 2)],
         {"strides": [2, 3], "dilations": [1, 2]}, tol=LINALG_TOL, id="weights-input"),
    case("ConvTranspose", [randn(1, 4, 7, 7), Const(randn(4, 2, 4, 4))],
         {"strides": [2, 2], "group": 2, "pads": [1, 1, 1, 1]}, tol=LINALG_TOL, id="groups"),
    case("ConvTranspose", [randn(1, 3, 5, 5), Const(randn(3, 2, 3, 3))], {"pads": [3, 0, 3, 0]},
         tol=LINALG_TOL, id="cropped"),
    case("ConvTranspose", [randn(1, 2, 9), Const(randn(2, 3, 3))],
         {"strides": [2], "auto_pad": "SAME_UPPER"}, tol=LINALG_TOL, id="1d-same"),
    case("ConvTranspose", [randn(2, 3, 4, 5), Const(randn(3, 2, 1, 2))], {"strides": [2, 3]},
         tol=LINALG_TOL, id="kernel-shorter-than-stride"),
    case("ConvTranspose", [randn(1, 2, 3, 4, 4), Const(randn(2, 2, 2, 2, 2))],
         {"strides": [1, 2, 2], "output_shape": [3, 8, 9]}, tol=LINALG_TOL, id="3d-output-shape"),
    case("ConvTranspose", [randn(2, 6, 7), Const(randn(6, 2, 3)), randn(6)],
         {"group": 3, "strides": [2], "dilations": [2], "auto_pad": "SAME_UPPER"}, tol=LINALG_TOL,
         id="1d-groups"),
    case("ConvTranspose", [randn(1, 4, 3, 4, 3), randn(4, 1, 2, 3, 2)],
         {"group": 2, "strides": [2, 1, 2], "output_padding": [1, 0, 1]}, tol=LINALG_TOL,
         id="3d-groups"),
    case("Conv", [randn(1, 3, 8, 8), randn(5, 3, 3, 3)], tol=LINALG_TOL),
    case("Conv", [randn(2, 3, 8, 8), randn(5, 3, 3, 3), randn(5)], {"pads": [1, 1, 1, 1]},
         id="pads-bias", tol=LINALG_TOL),
    case("Conv", [randn(1, 4, 11, 10), randn(6, 2, 3, 2)],
         {"strides": [2, 1], "dilations": [2, 2], "group": 2, "pads": [0, 1, 2, 1]},
         id="strided-dilated-grouped", tol=LINALG_TOL),
    case("Conv", [randn(1, 4, 7, 7), randn(4, 1, 3, 3)], {"group": 4, "auto_pad": "SAME_UPPER"},
         id="depthwise-same-upper", tol=LINALG_TOL),
    case("Conv", [randn(1, 2, 8, 7), randn(3, 2, 4, 4)],
         {"auto_pad": "SAME_LOWER", "strides": [2, 2]}, id="same-lower", tol=LINALG_TOL),
    case("Conv", [randn(1, 2, 8, 7), randn(3, 2, 3, 3)], {"auto_pad": "VALID", "strides": [2, 3]},
         id="valid", tol=LINALG_TOL),
    case("MaxPool", [_IMAGE], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    case("MaxPool", [_IMAGE], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
         id="ceil"),
    case("MaxPool", [_IMAGE], {"kernel_shape": [2, 3], "dilations": [2, 1]}, id="dilated"),
    case("MaxPool", [_IMAGE], {"kernel_shape": [3, 3], "strides": [2, 2],
                               "auto_pad": "SAME_UPPER"}, id="same-upper"),
    case("MaxPool", [ints(-128, 127, 1, 2, 6, 6, dtype=np.int8)],
         {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]}, id="i8"),
    # Indices: flat positions in X, the first maximum of each window
    case("MaxPool", [_IMAGE], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
         outputs=2, id="indices"),
    case("MaxPool", [_IMAGE], {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1,
                               "dilations": [2, 1], "storage_order": 1},
         outputs=2, id="indices-column-major-ceil-dilated"),
    case("MaxPool", [_with_ties_and_nan()], {"kernel_shape": [2, 2], "pads": [1, 0, 0, 1]},
         outputs=2, id="indices-ties-nan"),
    case("MaxPool", [ints(-3, 3, 1, 2, 6, 6, dtype=np.int8)],
         {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]}, outputs=2, id="indices-i8-ties"),
    case("AveragePool", [_IMAGE], {"kernel_shape": [3, 3]}),
    case("AveragePool", [_IMAGE], {"kernel_shape": [3, 3], "strides": [2, 2],
                                   "pads": [1, 1, 1, 1]}, id="exclude-pad"),
    case("AveragePool", [_IMAGE], {"kernel_shape": [3, 3], "strides": [2, 2],
                                   "pads": [1, 0, 1, 2], "count_include_pad": 1},
         id="include-pad"),
    case("AveragePool", [_IMAGE], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
         id="ceil"),
    case("AveragePool", [_IMAGE], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1,
                                   "pads": [1, 1, 1, 1], "count_include_pad": 1},
         id="ceil-include-pad"),
    # 1-D: lowered as 2-D over N x C x 1 x L
    case("Conv", [randn(2, 3, 12), randn(4, 3, 3), randn(4)], {"pads": [1, 2]}, id="1d-pads-bias",
         tol=LINALG_TOL),
    case("Conv", [randn(1, 4, 13), randn(6, 2, 3)],
         {"strides": [2], "dilations": [2], "group": 2, "pads": [0, 1]},
         id="1d-strided-dilated-grouped", tol=LINALG_TOL),
    case("Conv", [randn(1, 2, 9), randn(3, 2, 4)], {"auto_pad": "SAME_LOWER", "strides": [2]},
         id="1d-same-lower", tol=LINALG_TOL),
    case("Conv", [randn(1, 3, 10), randn(3, 1, 3)], {"group": 3, "auto_pad": "SAME_UPPER"},
         id="1d-depthwise-same-upper", tol=LINALG_TOL),
    case("MaxPool", [_SIGNAL], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}, id="1d"),
    case("MaxPool", [_SIGNAL], {"kernel_shape": [2], "strides": [2], "ceil_mode": 1,
                                "dilations": [2]}, id="1d-ceil-dilated"),
    case("MaxPool", [_SIGNAL], {"kernel_shape": [4], "strides": [3], "auto_pad": "SAME_UPPER"},
         id="1d-same-upper"),
    case("MaxPool", [_SIGNAL], {"kernel_shape": [3], "strides": [2], "pads": [1, 1],
                                "storage_order": 1}, outputs=2, id="1d-indices"),
    case("AveragePool", [_SIGNAL], {"kernel_shape": [3]}, id="1d"),
    case("AveragePool", [_SIGNAL], {"kernel_shape": [3], "strides": [2], "pads": [1, 2]},
         id="1d-exclude-pad"),
    case("AveragePool", [_SIGNAL], {"kernel_shape": [3], "strides": [2], "pads": [2, 1],
                                    "count_include_pad": 1, "ceil_mode": 1},
         id="1d-ceil-include-pad"),
    # 3-D: one generic
    case("Conv", [randn(1, 2, 5, 6, 5), randn(3, 2, 2, 3, 2)], id="3d", tol=LINALG_TOL),
    case("Conv", [randn(2, 4, 6, 5, 7), randn(6, 2, 3, 2, 3), randn(6)],
         {"strides": [2, 1, 2], "dilations": [1, 2, 1], "group": 2, "pads": [1, 0, 1, 0, 1, 2]},
         id="3d-strided-dilated-grouped-bias", tol=LINALG_TOL),
    case("Conv", [randn(1, 3, 5, 5, 4), randn(3, 1, 3, 3, 3)],
         {"group": 3, "auto_pad": "SAME_UPPER", "strides": [2, 1, 1]},
         id="3d-depthwise-same-upper", tol=LINALG_TOL),
    case("MaxPool", [_VOLUME], {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1],
                                "pads": [1, 1, 0, 0, 1, 1]}, id="3d"),
    case("MaxPool", [_VOLUME], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1,
                                "dilations": [1, 2, 1]}, id="3d-ceil-dilated"),
    case("MaxPool", [_VOLUME], {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1],
                                "pads": [1, 1, 0, 0, 1, 1], "storage_order": 1},
         outputs=2, id="3d-indices-column-major"),
    case("AveragePool", [_VOLUME], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}, id="3d"),
    case("AveragePool", [_VOLUME], {"kernel_shape": [3, 2, 3], "strides": [2, 1, 2],
                                    "pads": [1, 0, 1, 1, 1, 0], "ceil_mode": 1},
         id="3d-ceil-exclude-pad"),
    case("AveragePool", [_VOLUME], {"kernel_shape": [3, 3, 2], "auto_pad": "SAME_LOWER",
                                    "count_include_pad": 1}, id="3d-same-lower-include-pad"),
    case("GlobalAveragePool", [_IMAGE]),
    case("GlobalAveragePool", [randn(2, 3, 5)], id="1d"),
    case("GlobalMaxPool", [_IMAGE]),
]  # fmt: skip

NN_CASES = [
    case("Gemm", [randn(4, 5), randn(5, 3)], tol=LINALG_TOL),
    case("Gemm", [randn(5, 4), randn(3, 5), randn(4, 3)], {"transA": 1, "transB": 1},
         id="trans-both-c", tol=LINALG_TOL),
    case("Gemm", [randn(4, 5), randn(3, 5), Const(randn(3))], {"transB": 1, "alpha": 0.5,
                                                                "beta": 2.0},
         id="transB-alpha-beta", tol=LINALG_TOL),
    case("Gemm", [randn(4, 5), randn(5, 3), randn(1)], {"alpha": 1.5}, id="scalar-c",
         tol=LINALG_TOL),
    case("Gemm", [randn(4, 5), randn(5, 3)], {"alpha": -2.0}, id="alpha", tol=LINALG_TOL),
    case("Gemm", [randn(4, 5), randn(5, 3), randn(4, 1)], {"beta": 0.5}, id="column-c",
         tol=LINALG_TOL),
    case("MatMul", [randn(4, 5), randn(5, 3)], tol=LINALG_TOL),
    case("MatMul", [randn(5), randn(5, 3)], id="1d-2d", tol=LINALG_TOL),
    case("MatMul", [randn(4, 5), randn(5)], id="2d-1d", tol=LINALG_TOL),
    case("MatMul", [randn(5), randn(5)], id="1d-1d", tol=LINALG_TOL),
    case("MatMul", [randn(2, 4, 5), randn(2, 5, 3)], id="batched", tol=LINALG_TOL),
    case("MatMul", [randn(2, 3, 4, 5), randn(5, 6)], id="4d-2d", tol=LINALG_TOL),
    case("MatMul", [randn(2, 1, 3, 4), randn(5, 4, 2)], id="broadcast", tol=LINALG_TOL),
    case("MatMul", [randn(3, 4, 5), randn(5)], id="3d-1d", tol=LINALG_TOL),
    case("MatMul", [randn(5), randn(2, 5, 3)], id="1d-3d", tol=LINALG_TOL),
    case("BatchNormalization", [_IMAGE, randn(4), randn(4), randn(4), uniform(0.5, 2, 4)],
         {"epsilon": 1e-3}),
    case("BatchNormalization", [_IMAGE, randn(4), randn(4), randn(4), uniform(0.5, 2, 4)],
         {"training_mode": 1, "momentum": 0.75}, outputs=3, opset=15, tol=(1e-5, 1e-5),
         id="training"),
    case("BatchNormalization", [randn(6, 3, key="bn"), randn(3), randn(3), randn(3),
                                uniform(0.5, 2, 3)],
         {"training_mode": 1}, outputs=3, opset=15, tol=(1e-5, 1e-5), id="training-2d"),
    case("InstanceNormalization", [_IMAGE, randn(4), randn(4)]),
    case("LayerNormalization", [randn(2, 3, 8), randn(8), randn(8)]),
    case("LayerNormalization", [randn(2, 3, 8), randn(3, 8)], {"axis": 1, "epsilon": 1e-3},
         id="axis1-no-bias"),
    case("LayerNormalization", [randn(2, 3, 8).astype(np.float16), randn(8).astype(np.float16)],
         id="f16", tol=(2e-3, 2e-3)),
    case("LRN", [_IMAGE], {"size": 3}),
    case("LRN", [randn(1, 6, 3, 3)], {"size": 4, "alpha": 0.01, "beta": 0.5, "bias": 2.0},
         id="even"),
    case("Softmax", [randn(2, 3, 5, scale=5)]),
    case("Softmax", [randn(2, 3, 5, scale=5)], {"axis": 1}, id="axis1"),
    case("Softmax", [randn(7, scale=5)], id="1d"),
    case("LogSoftmax", [randn(2, 3, 5, scale=5)]),
    case("LogSoftmax", [randn(4, 5, scale=5)], {"axis": 0}, id="axis0"),
    case("Flatten", [randn(2, 3, 4)]),
    case("Flatten", [randn(2, 3, 4)], {"axis": 0}, id="axis0"),
    case("Flatten", [randn(2, 3, 4)], {"axis": -1}, id="axis-1"),
]  # fmt: skip

_SHAPE_CHAIN_DATA = randn(2, 3)

TENSOR_CASES = [
    case("Shape", [randn(2, 3, 4)]),
    case("Shape", [randn(2, 3, 4)], {"start": 1, "end": -1}, id="start-end"),
    case("Size", [randn(2, 3, 4)]),
    case("ConstantOfShape", [i64(2, 3)], {"value": np.array([7], np.int32)}, fold=False),
    case("Range", [Const(np.array(1, np.int64)), Const(np.array(10, np.int64)),
                   Const(np.array(3, np.int64))], fold=False),
    case("Reshape", [randn(2, 3, 4), i64(0, -1, 2)]),
    case("Transpose", [randn(2, 3, 4)]),
    case("Transpose", [randn(2, 3, 4, 5)], {"perm": [2, 0, 3, 1]}, id="perm"),
    case("Squeeze", [randn(1, 3, 1, 4)]),
    case("Squeeze", [randn(1, 3, 1, 4), i64(-2)], id="axes"),
    case("Squeeze", [randn(1, 1)], id="to-scalar"),
    case("Unsqueeze", [randn(3, 4), i64(0, -1)]),
    case("Expand", [randn(3, 1), i64(2, 3, 4)]),
    case("Expand", [randn(2, 1, 4), i64(3, 1)], id="bidirectional"),
    case("Tile", [randn(2, 3), i64(2, 3)]),
    case("Tile", [randn(2, 1, 3), i64(1, 4, 1)], id="one"),
    case("Tile", [ints(0, 9, 3), i64(3)], id="1d-int"),
    case("DepthToSpace", [randn(1, 8, 2, 3)], {"blocksize": 2}),
    case("DepthToSpace", [randn(1, 8, 2, 3)], {"blocksize": 2, "mode": "CRD"}, id="crd"),
    case("Concat", [randn(2, 3, 4), randn(2, 1, 4), randn(2, 2, 4)], {"axis": 1}),
    case("Concat", [randn(2, 3), randn(2, 5)], {"axis": -1}, id="last"),
    case("Split", [randn(2, 6, 3)], {"axis": 1, "num_outputs": 3}, outputs=3),
    case("Split", [randn(2, 7), i64(2, 5)], {"axis": 1}, outputs=2, id="sizes"),
    case("Split", [randn(5, 2)], {"num_outputs": 2}, outputs=2, id="uneven"),
    case("Slice", [randn(5, 6, 4), i64(1, -4), i64(4, 100), i64(0, 1)]),
    case("Slice", [randn(5, 6), i64(0, 1), i64(5, 6), i64(0, 1), i64(2, 3)], id="steps"),
    case("Slice", [randn(5, 6), i64(-1, 4), i64(-100, 0), i64(0, 1), i64(-1, -2)],
         id="negative-steps"),
    case("Slice", [randn(5, 6), i64(4), i64(1), i64(1), i64(-2)], id="one-negative"),
    case("Slice", [randn(5, 6, 3), i64(1, -1), i64(4, -100), i64(0, 1), i64(1, -2)],
         id="mixed"),
    case("Gather", [randn(5, 3), i64(4, 0, -1, 2)]),
    case("Gather", [randn(2, 5, 3), Const(np.array([[1, 0], [4, -2]], np.int64))], {"axis": 1},
         id="2d-indices"),
    case("Gather", [randn(2, 5, 3), Const(np.array(2, np.int64))], {"axis": -1}, id="scalar"),
    case("Gather", [randn(6), Const(np.array(-1, np.int64))], id="1d-scalar"),
    case("Pad", [randn(2, 3, 4), i64(0, 1, 2, 1, 0, 3)]),
    case("Pad", [randn(2, 3, 4), i64(1, -1, 2, 0), Const(np.array(1.5, F32)), i64(0, 2)],
         id="axes-negative-value"),
    case("Pad", [ints(0, 9, 3, 4), i64(1, 1, 1, 1), Const(np.array(-7, np.int32))], id="int"),
    *[case("Pad", [randn(3, 4, 5), i64(0, 2, 1, 1, 3, 2)], {"mode": mode}, id=mode)
      for mode in ("edge", "reflect", "wrap")],
    *[case("Pad", [randn(2, 3, 4), i64(-1, 2, 1, -1), Const(np.array(9.0, F32)), i64(1, -1)],
           {"mode": mode}, id=f"{mode}-axes-crop") for mode in ("edge", "reflect", "wrap")],
    # Reflect pads must be smaller than the axis (as onnxruntime demands):
    # tests/robustness/test_frontend.py checks that wider ones are refused.
    *[case("Pad", [randn(2, 3), i64(5, 7, 4, 6)], {"mode": mode}, id=f"{mode}-wide")
      for mode in ("edge", "wrap")],
    case("Pad", [randn(3, 4), i64(2, 3, 2, 3)], {"mode": "reflect"}, id="reflect-widest"),
    case("Pad", [ints(0, 9, 2, 4, dtype=np.int64), i64(1, 1, 1, 3)], {"mode": "reflect"},
         id="reflect-int"),
    case("Pad", [ints(0, 9, 3, 4), i64(0, 1, 0, 2)], {"mode": "edge"}, id="edge-int"),
]  # fmt: skip


def _tuples_of(*extents: int, count: int, key: str) -> np.ndarray:
    """`count` index tuples into axes of `extents`, negatives among them."""
    rng = _rng("tuples", extents, count, key)
    return np.stack([rng.integers(-n, n, count) for n in extents], -1).astype(np.int64)


def _distinct_rows(extent: int, count: int, width: int) -> np.ndarray:
    """For a scatter without a reduction: each column's indices distinct."""
    rng = _rng("distinct", extent, count, width)
    return np.stack([rng.permutation(extent)[:count] - extent * (c % 2)
                     for c in range(width)], -1).astype(np.int64)  # fmt: skip


# Indices read at run time (graph inputs), negatives and repeats among them.
INDEXED_CASES = [
    case("GatherElements", [randn(3, 4), ints(-3, 3, 2, 4, dtype=np.int64)], id="axis0"),
    case("GatherElements", [randn(3, 4, 5), ints(-4, 4, 2, 6, 3, dtype=np.int64)],
         {"axis": 1}, id="smaller-indices"),
    case("GatherElements", [ints(0, 99, 2, 5), ints(-5, 5, 2, 3, dtype=np.int32)],
         {"axis": -1}, id="int32"),
    case("GatherND", [randn(4, 5, 3), _tuples_of(4, 5, count=6, key="a").reshape(2, 3, 2)],
         id="pairs"),
    case("GatherND", [randn(4, 5), _tuples_of(4, 5, count=3, key="b")], id="scalars"),
    case("GatherND", [randn(2, 5, 3, 2), _tuples_of(5, 3, count=8, key="c").reshape(2, 4, 2)],
         {"batch_dims": 1}, id="batch"),
    case("ScatterElements", [randn(4, 3), _distinct_rows(4, 2, 3), randn(2, 3)], id="none"),
    *[case("ScatterElements", [randn(3, 5), ints(-5, 5, 3, 4, dtype=np.int64), randn(3, 4)],
           {"axis": 1, "reduction": how}, id=how) for how in ("add", "mul", "max", "min")],
    case("ScatterElements", [ints(0, 9, 4, 3), ints(-4, 4, 5, 3, dtype=np.int64),
                             ints(0, 9, 5, 3)], {"reduction": "add"}, id="int-repeats"),
    case("ScatterND", [randn(5, 3), _distinct_rows(5, 3, 1), randn(3, 3)], id="rows"),
    case("ScatterND", [randn(4, 5), _tuples_of(4, 5, count=7, key="d"), randn(7)],
         {"reduction": "add"}, id="elements-add"),
    *[case("ScatterND", [randn(4, 2, 3), ints(-4, 4, 2, 3, 1, dtype=np.int64), randn(2, 3, 2, 3)],
           {"reduction": how}, id=how) for how in ("mul", "max", "min")],
    case("Trilu", [randn(2, 4, 6)]),
    case("Trilu", [randn(5, 3), np.array(-1, np.int64)], {"upper": 0}, id="lower-k-input"),
    case("Trilu", [randn(3, 4, 4), Const(np.array(2, np.int64))], id="k-constant"),
    case("Trilu", [bools(6, 6), Const(np.array(1, np.int64))], {"upper": 1}, id="bool-mask"),
    case("Trilu", [ints(-9, 9, 4, 7), np.array(9, np.int64)], {"upper": 0}, id="k-past-end"),
    case("Resize", [randn(1, 2, 3, 4), None, Const(np.array([1, 1, 2, 1.5], F32))],
         {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, id="nearest"),
    case("Resize", [randn(2, 3, 5), None, None, i64(4, 7)], {"axes": [2, 1], "mode": "linear"},
         id="linear-axes"),
    case("Resize", [randn(1, 1, 6, 6), None, Const(np.array([1, 1, 0.6, 1.3], F32))],
         {"mode": "cubic", "exclude_outside": 1}, id="cubic"),
    case("Resize", [randn(1, 1, 4, 5), Const(np.array([0.1, -0.2, 0.8, 1.1], F32)), None,
                    i64(3, 4)],
         {"axes": [2, 3], "mode": "linear", "extrapolation_value": -1.0,
          "coordinate_transformation_mode": "tf_crop_and_resize"}, id="crop"),
    case("Resize", [ints(0, 9, 2, 6), None, None, i64(3, 4)], id="int"),
]  # fmt: skip


def _recurrent(op_type: str, gates: int, directions: int, *, layout: int = 0, lens: bool = False,
               states: int = 0, peepholes: bool = False, constant: bool = True,
               attrs: dict[str, Any] | None = None, id: str) -> Any:  # fmt: skip
    """T=4, B=3, I=5, H=2; W, R and B constants or inputs."""
    steps, batch, hidden = 4, 3, 2

    def weight(*shape: int) -> Any:
        value = randn(*shape, scale=0.6, key=(op_type, id, shape))
        return Const(value) if constant else value

    state = [batch, directions, hidden] if layout else [directions, batch, hidden]
    inputs = [randn(batch, steps, 5) if layout else randn(steps, batch, 5),
              weight(directions, gates * hidden, 5), weight(directions, gates * hidden, hidden),
              weight(directions, 2 * gates * hidden),
              np.array([4, 1, 3], np.int32) if lens else None,
              *[randn(*state, key=(id, k)) for k in range(states)]]  # fmt: skip
    if peepholes:
        inputs += [None] * (7 - len(inputs)) + [weight(directions, 3 * hidden)]
    direction = "bidirectional" if directions == 2 else (attrs or {}).get("direction", "forward")
    return case(op_type, inputs, {"hidden_size": hidden, "layout": layout, **(attrs or {}),
                                  "direction": direction},
                id=id, outputs=3 if op_type == "LSTM" else 2, opset=22)  # fmt: skip


QUANTIZE_CASES = [
    case("QuantizeLinear", [_X * 20, Const(np.array(0.05, F32)), Const(np.array(-3, np.int8))],
         id="int8-saturating"),
    case("QuantizeLinear", [_X, Const(np.array(0.02, F32))], id="uint8-default"),
    case("QuantizeLinear", [_X, np.array(0.03, F32), np.array(120, np.uint8)], id="inputs"),
    case("QuantizeLinear", [_X, Const(np.array([0.01, 0.02, 0.04], F32)),
                            Const(np.array([0, 5, -5], np.int8))], {"axis": 1}, id="per-axis"),
    case("QuantizeLinear", [_X, Const(np.array(0.001, F32)), Const(np.array(-100, np.int16))],
         id="int16"),
    case("DequantizeLinear", [ints(-128, 128, 2, 3, 4, dtype=np.int8), Const(np.array(0.1, F32)),
                              Const(np.array(7, np.int8))], id="int8"),
    case("DequantizeLinear", [ints(0, 256, 2, 3, 4, dtype=np.uint8), np.array(0.5, F32),
                              np.array(128, np.uint8)], id="uint8-inputs"),
    case("DequantizeLinear", [ints(-70000, 70000, 12), Const(np.array(0.001, F32))],
         id="int32-bias"),
    case("DequantizeLinear", [ints(-128, 128, 2, 3, 4, dtype=np.int8),
                              Const(np.array([0.5, 0.25, 0.125, 1.0], F32))], {"axis": -1},
         id="per-axis-last"),
]  # fmt: skip

RECURRENT_CASES = [
    _recurrent("RNN", 1, 1, id="forward"),
    _recurrent("RNN", 1, 2, lens=True, states=1, constant=False, id="bidirectional-lens-inputs"),
    _recurrent("RNN", 1, 1, attrs={"direction": "reverse", "activations": ["Relu"], "clip": 1.5},
               id="reverse-relu-clip"),
    _recurrent("GRU", 3, 2, lens=True, id="bidirectional-lens"),
    _recurrent("GRU", 3, 1, layout=1, states=1, attrs={"linear_before_reset": 1},
               id="batch-first-linear-before-reset"),
    _recurrent("GRU", 3, 1, constant=False, attrs={"activations": ["HardSigmoid", "Softsign"],
               "activation_alpha": [0.3], "activation_beta": [0.4]}, id="activations-inputs"),
    _recurrent("LSTM", 4, 1, states=2, peepholes=True, id="peepholes"),
    _recurrent("LSTM", 4, 2, layout=1, lens=True, states=2, id="batch-first-bidirectional-lens"),
    _recurrent("LSTM", 4, 1, constant=False, peepholes=True,
               attrs={"input_forget": 1, "clip": 0.7, "direction": "reverse",
                      "activations": ["Sigmoid", "Elu", "ScaledTanh"],
                      "activation_alpha": [0.9, 1.2], "activation_beta": [0.8]},
               id="reverse-input-forget-inputs"),
]  # fmt: skip

TRANSFORMER_CASES = [
    case("Attention", [randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 6)],
         {"is_causal": 1}, id="4d-causal", opset=23),
    case("Attention", [randn(2, 4, 32), randn(2, 5, 16), randn(2, 5, 16),
                       randn(4, 5) > 0], {"q_num_heads": 4, "kv_num_heads": 2, "softcap": 3.0},
         id="3d-gqa-bool-mask", opset=23),
    case("RMSNormalization", [randn(2, 3, 8), randn(8)], opset=23),
    case("RotaryEmbedding", [randn(1, 2, 3, 8), randn(1, 3, 4), randn(1, 3, 4)],
         {"interleaved": 1}, opset=23),
    case("SwiGLU", [randn(2, 6), randn(2, 6)], {"alpha": 1.702}, opset=28),
    case("TensorScatter", [randn(2, 6, 4), randn(2, 2, 4), Const(np.array([1, 5], np.int64))],
         {"mode": "circular"}, opset=24),
    case("LayerNormalization", [randn(2, 3, 8), randn(8), randn(8)], outputs=3, id="statistics"),
    case("CausalConvWithState", [randn(2, 3, 5), randn(3, 1, 3), randn(3), randn(2, 3, 2)],
         {"activation": "silu"}, outputs=2, opset=27),
    case("LinearAttention", [randn(2, 3, 8), randn(2, 3, 4), randn(2, 3, 6), randn(2, 2, 2, 3),
                             randn(2, 3, 2) - 1, uniform(0, 1, 2, 3, 1)],
         {"q_num_heads": 4, "kv_num_heads": 2}, outputs=2, opset=27),
]  # fmt: skip

_R = randn(2, 3, 4, scale=2.0)

REDUCE_CASES = [
    case(op, [_R, i64(1)], id="axis1") for op in (
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
        "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp",
    )
] + [
    case("ReduceSum", [_R], id="all"),
    case("ReduceMean", [_R, i64(0, -1)], {"keepdims": 0}, id="axes-no-keepdims"),
    case("ReduceLogSumExp", [randn(2, 3, scale=30), i64(-1)], {"keepdims": 0}, id="large"),
    case("ReduceMax", [ints(-9, 9, 3, 4), i64(1)], id="int"),
    case("ReduceSum", [ints(-9, 9, 3, 4, dtype=np.int64)], {"keepdims": 0}, id="int-all"),
    case("ReduceMean", [ints(-9, 9, 3, 4), i64(1)], id="int"),
    case("ReduceSumSquare", [_R], {"noop_with_empty_axes": 1}, id="noop"),
    case("ReduceL2", [_R, Const(np.zeros(0, np.int64))], {"noop_with_empty_axes": 1},
         id="noop-empty-axes"),
    case("ReduceMin", [_with_nan(), i64(0)], id="nan"),
    case("ArgMax", [_R]),
    case("ArgMax", [np.round(_R), ], {"axis": 2, "keepdims": 0, "select_last_index": 1},
         id="last-ties"),
    case("ArgMin", [np.round(_R)], {"axis": -1}, id="ties"),
    case("ArgMin", [np.round(_R)], {"axis": 1, "select_last_index": 1}, id="last"),
    case("ArgMax", [_with_nan()], {"axis": 1}, id="nan"),
    case("ArgMin", [_with_nan()], {"axis": 0, "select_last_index": 1}, id="nan-last"),
    case("ArgMax", [ints(-3, 3, 3, 4)], {"axis": 1, "select_last_index": 1}, id="int"),
    case("ArgMin", [randn(6)], {"keepdims": 0}, id="1d"),
]  # fmt: skip

SIGNAL_CASES = [
    case("DFT", [randn(2, 6, 5, 1), None, i64(1)], id="real-axis1"),
    case("DFT", [randn(2, 6, 5, 2), Const(np.array(8, np.int64)), i64(-3)], {"inverse": 1},
         id="inverse-padded"),
    case("DFT", [randn(2, 6, 5, 1), Const(np.array(4, np.int64)), i64(2)], {"onesided": 1},
         id="onesided-cut"),
    case("DFT", [randn(1, 4, 3, 2)], {"inverse": 1, "onesided": 1}, id="irfft"),
    case("STFT", [randn(2, 30, 1), Const(np.array(4, np.int64)), randn(8)], opset=17,
         id="window"),
    case("STFT", [randn(1, 20, 2), Const(np.array(3, np.int64)), None,
                  Const(np.array(6, np.int64))], {"onesided": 0}, opset=17, id="complex"),
    *(case(op, [Const(np.array(10, np.int32))], {"periodic": periodic}, opset=17, fold=False,
           id=f"periodic{periodic}")
      for op in ("HannWindow", "HammingWindow", "BlackmanWindow") for periodic in (0, 1)),
    case("MelWeightMatrix", [Const(np.array(v, dtype)) for v, dtype in
                             ((8, np.int32), (32, np.int32), (8000, np.int32),
                              (100, F32), (3500, F32))], opset=17, fold=False),
]  # fmt: skip


def _grid(*shape: int) -> np.ndarray:
    """Normalised positions, some outside [-1, 1]."""
    return uniform(-1.4, 1.4, *shape)


_ROIS = np.array([[0, 0, 8, 7], [1.5, 2.2, 10.7, 6.1], [-3, -2, 4, 12]], F32)
"""Regions of interest [x1, y1, x2, y2], one reaching outside the image."""

VISION_CASES = [
    case("GridSample", [randn(2, 3, 5, 4), _grid(2, 3, 6, 2)], id="linear-zeros"),
    case("GridSample", [randn(1, 2, 4, 5), _grid(1, 4, 3, 2)],
         {"mode": "nearest", "padding_mode": "reflection", "align_corners": 1},
         id="nearest-reflection-aligned"),
    case("GridSample", [randn(1, 2, 4, 5), _grid(1, 4, 3, 2)],
         {"mode": "cubic", "padding_mode": "border"}, id="cubic-border"),
    case("GridSample", [randn(1, 2, 4, 5), _grid(1, 4, 3, 2)],
         {"mode": "cubic", "padding_mode": "reflection"}, id="cubic-reflection"),
    case("GridSample", [randn(1, 2, 3, 4, 5), _grid(1, 2, 3, 4, 3)],
         {"padding_mode": "reflection", "align_corners": 1}, id="volumetric"),
    case("AffineGrid", [randn(2, 2, 3), i64(2, 3, 4, 5)], id="2d"),
    case("AffineGrid", [randn(1, 3, 4), i64(1, 1, 2, 3, 4)], {"align_corners": 1}, id="3d"),
    case("Col2Im", [randn(2, 3 * 4, 12), i64(7, 8), i64(2, 2)],
         {"strides": [2, 3], "pads": [1, 0, 1, 2], "dilations": [2, 1]}, id="strided"),
    case("Col2Im", [randn(1, 10, 12), i64(3, 4, 5), i64(1, 1, 5)], id="3d"),
    *(case("RoiAlign", [randn(2, 3, 8, 9), _ROIS, np.array([0, 1, 1], np.int64)],
           {"mode": mode, "coordinate_transformation_mode": transform, "sampling_ratio": 2,
            "output_height": 3, "output_width": 2, "spatial_scale": 0.8},
           id=f"{mode}-{transform}")
      for mode, transform in (("avg", "half_pixel"), ("max", "output_half_pixel"))),
    case("DeformConv", [randn(1, 1, 3, 3), randn(1, 1, 2, 2), randn(1, 8, 4, 4)],
         {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}, id="padded"),
    case("DeformConv", [randn(2, 4, 6, 5), randn(6, 2, 3, 2), randn(2, 24, 3, 2), randn(6),
                        randn(2, 12, 3, 2)],
         {"group": 2, "offset_group": 2, "strides": [2, 2], "dilations": [1, 2],
          "pads": [1, 0, 0, 1]}, id="groups-mask-bias", tol=LINALG_TOL),
]  # fmt: skip

_SCORES = randn(4, 5, 3, scale=2.0)
_TARGETS = np.array([[0, 4, 2], [1, 1, 3], [4, 0, -1], [2, 3, 0]], np.int64)
_CLASS_WEIGHTS = uniform(0.2, 2.0, 5)
_SHIFT_INPUT = np.array([[-8, 4, -1, 64, -128], [16, 1, 127, -3, 5]], np.int8)
_SHIFTS = np.array([[8, -1, 100, 1, 7], [2, 0, 7, 1, 3]], np.int8)
_SPECIAL = np.array([-np.inf, -1.5, 0.0, np.nan, 2.0, np.inf], F32)

LOSS_CASES = [
    case("NegativeLogLikelihoodLoss", [_SCORES, np.abs(_TARGETS)], id="mean"),
    case(
        "NegativeLogLikelihoodLoss",
        [_SCORES, _TARGETS, _CLASS_WEIGHTS],
        {"reduction": "none", "ignore_index": -1},
        id="none-weighted-ignored",
    ),
    case(
        "NegativeLogLikelihoodLoss",
        [_SCORES, np.abs(_TARGETS).astype(np.int32), _CLASS_WEIGHTS],
        {"reduction": "mean", "ignore_index": 4},
        id="mean-weighted-ignored",
    ),
    case(
        "SoftmaxCrossEntropyLoss",
        [_SCORES, np.abs(_TARGETS)],
        {"reduction": "sum"},
        outputs=2,
        id="sum-log-prob",
    ),
    case(
        "SoftmaxCrossEntropyLoss",
        [_SCORES[:, :, 0], np.abs(_TARGETS[:, 0]), _CLASS_WEIGHTS],
        id="mean-2d-weighted",
    ),
]

BIT_CASES = [
    case(op, [ints(-1000, 1000, 3, 4), ints(-1000, 1000, 4)])
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor")
] + [
    case(
        "BitwiseAnd",
        [ints(0, 255, 3, 4, dtype=np.uint8), ints(0, 255, 3, 1, dtype=np.uint8)],
        id="u8",
    ),
    case("BitwiseNot", [ints(-1000, 1000, 3, 4, dtype=np.int64)]),
    case("BitwiseNot", [ints(0, 60000, 3, 4, dtype=np.uint16)], id="u16"),
    *[
        case("BitShift", [_SHIFT_INPUT, _SHIFTS], {"direction": d}, opset=28, id=d.lower())
        for d in ("LEFT", "RIGHT")
    ],
    case(
        "BitShift",
        [_SHIFT_INPUT.view(np.uint8), _SHIFTS.view(np.uint8)],
        {"direction": "RIGHT"},
        opset=28,
        id="right-u8",
    ),
    case("BitCast", [randn(3, 4)], {"to": TensorProto.INT32}, opset=26),
    case("BitCast", [bools(3, 4)], {"to": TensorProto.UINT8}, opset=26, id="bool-u8"),
    case(
        "BitCast",
        [ints(-100, 100, 3, dtype=np.int64)],
        {"to": TensorProto.DOUBLE},
        opset=26,
        id="i64-f64",
    ),
]

NEW_NN_CASES = [
    case("MaxUnpool", [randn(1, 2, 2, 2), np.array([[[[0, 3], [9, 14]], [[17, 22], [24, 31]]]],
                                                    np.int64)],
         {"kernel_shape": [2, 2], "strides": [2, 2]}),
    case("MaxUnpool", [randn(1, 1, 2, 2), np.array([[[[5, 7], [13, 15]]]], np.int64),
                       Const(np.array([1, 1, 5, 5], np.int64))],
         {"kernel_shape": [2, 2], "strides": [2, 2]}, id="output-shape"),
    case("MeanVarianceNormalization", [randn(3, 3, 3, 1)]),
    case("MeanVarianceNormalization", [randn(2, 3, 4)], {"axes": [1, 2]}, id="axes"),
    case("Det", [randn(2, 2)], id="2x2"),
    case("Det", [randn(3, 3, 3)], id="batch-3x3"),
    case("Det", [randn(2, 1, 4, 4)], id="4x4"),
    case("GroupNormalization", [randn(3, 4, 2, 2), randn(4), randn(4)], {"num_groups": 2}),
    case("GroupNormalization", [randn(2, 6, 5), randn(6), randn(6)],
         {"num_groups": 3, "epsilon": 1e-2}, id="1d"),
    case("CenterCropPad", [randn(20, 8, 3), i64(10, 11, 3)], opset=18),
    case("CenterCropPad", [randn(3, 7, 4), i64(4, 9)], {"axes": [-2, -1]}, opset=18, id="axes"),
    case("Einsum", [randn(5, 2, 3), randn(5, 3, 4)], {"equation": "bij, bjk -> bik"}, opset=12,
         id="batch-matmul"),
    case("Einsum", [randn(3, 5, 5)], {"equation": "...ii->...i"}, opset=12, id="batch-diagonal"),
    case("Einsum", [randn(3, 4), randn(4)], {"equation": "ij,j"}, opset=12, id="implicit"),
    case("Einsum", [randn(2, 1, 3), randn(4, 3)], {"equation": "...k,jk->...j"}, opset=12,
         id="broadcast-ellipsis"),
    case("Einsum", [randn(3, 4)], {"equation": "ij->"}, opset=12, id="sum-all"),
    case("LpPool", [_IMAGE], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    case("LpPool", [_SIGNAL], {"kernel_shape": [3], "p": 3, "auto_pad": "SAME_UPPER"}, id="1d-p3"),
    case("LpPool", [_IMAGE], {"kernel_shape": [2, 2], "p": 1, "dilations": [2, 2],
                              "ceil_mode": 1, "strides": [2, 2]}, id="p1-dilated-ceil"),
    case("ReduceLogSum", [uniform(0.1, 3.0, 3, 4, 5), i64(0, 2)]),
    case("ReduceLogSum", [uniform(0.1, 3.0, 3, 4, 5)], {"keepdims": 0}, id="all"),
    *[case("SpaceToDepth", [randn(2, 3, 4, 6)], {"blocksize": 2, "mode": mode}, opset=28,
           id=mode) for mode in ("DCR", "CRD")],
    case("LpNormalization", [_with_zeros_and_nan()[:, :2]], {"p": 1, "axis": 0}, id="l1"),
    case("LpNormalization", [randn(2, 3, 4)], {"p": 2, "axis": 1}, id="l2"),
]  # fmt: skip

NEW_ELEMENTWISE_CASES = [
    case("Acosh", [uniform(1.0, 9.0, 3, 4)]),
    case("Asinh", [_X]),
    case("Atanh", [_UNIT]),
    case("Swish", [randn(3, 4, scale=4.0)], {"alpha": 0.7}, opset=24),
    case("Shrink", [_X], {"lambd": 0.7, "bias": 0.3}),
    case("Shrink", [ints(-5, 6, 3, 4)], {"lambd": 1.5, "bias": 1.0}, id="int"),
    case("IsInf", [_SPECIAL]),
    case("IsInf", [_SPECIAL], {"detect_positive": 0}, id="negative"),
]  # fmt: skip

_TIES = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, 0.5, 0.5, 0.5, 0.5], [-1.0, 4.0, 2.0, 4.0, 0.0]],
                 F32)  # fmt: skip

POSITION_CASES = [
    *[case(op, [randn(3, 4, 2), i64(1)], {"exclusive": exclusive, "reverse": reverse},
           opset=26, id=f"exclusive{exclusive}-reverse{reverse}")
      for op in ("CumSum", "CumProd") for exclusive in (0, 1) for reverse in (0, 1)],
    case("CumSum", [ints(-9, 9, 3, 4), Const(np.array(-2, np.int32))], id="int-negative-axis"),
    case("TopK", [_TIES, i64(3)], outputs=2, id="largest-ties"),
    case("TopK", [_TIES, i64(2)], {"largest": 0, "axis": 0}, outputs=2, id="smallest-axis0"),
    case("TopK", [ints(0, 5, 3, 6, dtype=np.uint64), i64(4)], outputs=2, id="u64"),
    case("Hardmax", [_TIES]),
    case("Hardmax", [_TIES], {"axis": 0}, id="axis0"),
    case("OneHot", [Const(np.array([[0, 3, -1], [5, -6, 2]], np.int64)),
                    Const(np.array(5, np.int64)), np.array([-1.0, 2.5], F32)], id="last-axis"),
    case("EyeLike", [randn(4, 5)], {"k": 1}),
    case("EyeLike", [ints(0, 3, 3, 3)], {"k": -1, "dtype": TensorProto.DOUBLE}, id="dtype"),
    case("ReverseSequence", [randn(4, 4, 2), np.array([4, 1, 3, 2], np.int64)]),
    case("ReverseSequence", [randn(3, 5), np.array([5, 0, 2], np.int64)],
         {"batch_axis": 0, "time_axis": 1}, id="batch-first"),
    case("OneHot", [np.array([1.7, -2.2, 4.0], F32), Const(np.array(5.0, F32)),
                    np.array([0, 7], np.int32)], {"axis": 0}, id="float-indices-axis0"),
]  # fmt: skip


def _binarizer_input() -> np.ndarray:
    x = randn(3, 4, key="binarizer")
    x.flat[:3] = [0.25, np.nan, -np.inf]  # at the threshold, NaN, -inf
    return x


ML_CASES = [
    case("Binarizer", [_binarizer_input()], {"threshold": 0.25}),
    case("Binarizer", [randn(2, 5).astype(np.float64)], id="f64"),
    case("Binarizer", [ints(-4, 4, 3, 4, dtype=np.int64)], {"threshold": -1.5}, id="i64"),
    case("Binarizer", [ints(-4, 4, 6)], {"threshold": 3e9}, id="i32-beyond-range"),
    case("ArrayFeatureExtractor", [randn(3, 4), np.array([2, -1, 0], np.int64)]),
    case("ArrayFeatureExtractor", [randn(5), np.array([[4, 1]], np.int64)], id="1d"),
    case("ArrayFeatureExtractor", [ints(0, 9, 2, 3, 4, dtype=np.int64),
                                   np.array([[3, 0], [1, 1]], np.int64)], id="3d-i64"),
    case("TreeEnsemble", [forest_input(12, 3)], random_forest(3, 4, 3, 3, key="sum")),
    case("TreeEnsemble", [forest_input(12, 2, np.float64)],
         {**random_forest(3, 3, 2, 2, key="avg", splits_dtype=np.float64),
          "aggregate_function": 0}, id="average-f64"),
    *[case("TreeEnsemble", [forest_input(12, 2)],
           {**random_forest(3, 3, 2, 3, key=name), "aggregate_function": number}, id=name)
      for name, number in (("min", 2), ("max", 3))],
]  # fmt: skip


_TFIDF = {"min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 1,
          "ngram_counts": [0, 3], "ngram_indexes": [4, 0, 1, 2, 3, 1],
          "pool_int64s": [0, 1, 3, 1, 2, 2, 2, 3, 0]}  # fmt: skip

TEXT_CASES = [
    case("TfIdfVectorizer", [ints(0, 4, 2, 7)], {**_TFIDF, "mode": "TF"}, id="tf"),
    case("TfIdfVectorizer", [ints(0, 4, 9, dtype=np.int64)],
         {**_TFIDF, "mode": "TFIDF", "weights": [0.5, 2.0, 1.5, 0.25, 3.0, 1.0]}, id="tfidf-1d"),
    case("TfIdfVectorizer", [ints(0, 4, 3, 5)], {**_TFIDF, "mode": "IDF"}, id="idf"),
]  # fmt: skip


RANDOM_CASES = [
    case("RandomUniform", [], {"shape": [3, 5], "low": -1.0, "high": 2.0, "seed": 4.0},
         fold=False),
    case("RandomUniformLike", [_X], {"dtype": TensorProto.DOUBLE}, id="f64"),
    case("RandomNormal", [], {"shape": [7], "mean": 1.0, "scale": 3.0}, fold=False),
    case("RandomNormalLike", [_X], {"seed": 2.0}),
    case("Bernoulli", [np.linspace(0, 1, 12, dtype=F32).reshape(3, 4)], {"seed": 1.0}),
    case("Bernoulli", [np.linspace(0, 1, 12).reshape(3, 4)], {"dtype": TensorProto.INT32},
         id="int32"),
    case("Multinomial", [randn(3, 6)], {"sample_size": 50, "seed": 3.0}),
]  # fmt: skip


def _optimizer_inputs(count: int, groups: int, step: int, dtype: Any = F32) -> list[Any]:
    """R, T, then `groups` groups of `count` tensors (sizes 1, 3, ...); the
    last group (a squared-gradient state) non-negative."""
    tensors = [randn(2 * i + 1, key=("opt", k, i)).astype(dtype)
               for k in range(groups) for i in range(count)]  # fmt: skip
    for i in range(count):
        tensors[-count + i] = np.abs(tensors[-count + i])
    return [np.array(0.1, dtype), np.array(step, np.int64), *tensors]


TRAINING_CASES = [
    case("Adagrad", _optimizer_inputs(1, 3, 3),
         {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.001}, outputs=2),
    case("Adagrad", _optimizer_inputs(2, 3, 0, np.float64), outputs=4, id="two-f64"),
    case("Adam", _optimizer_inputs(2, 4, 5),
         {"alpha": 0.95, "beta": 0.85, "epsilon": 0.01, "norm_coefficient": 0.001,
          "norm_coefficient_post": 0.01}, outputs=6),
    case("Adam", _optimizer_inputs(1, 4, 0), outputs=3, id="first-step"),
    case("Momentum", _optimizer_inputs(2, 3, 2),
         {"alpha": 0.95, "beta": 0.1, "mode": "standard", "norm_coefficient": 0.001},
         outputs=4),
    case("Momentum", _optimizer_inputs(1, 3, 0),
         {"alpha": 0.95, "beta": 0.1, "mode": "nesterov", "norm_coefficient": 0.01},
         outputs=2, id="nesterov-first-step"),
]  # fmt: skip

ALL_CASES = (UNARY_CASES + BINARY_CASES + OTHER_ELEMENTWISE_CASES + WINDOW_CASES + NN_CASES
             + TENSOR_CASES + INDEXED_CASES + REDUCE_CASES + RECURRENT_CASES
             + TRANSFORMER_CASES + QUANTIZE_CASES + SIGNAL_CASES + VISION_CASES + LOSS_CASES
             + BIT_CASES + NEW_ELEMENTWISE_CASES + NEW_NN_CASES + POSITION_CASES + TEXT_CASES
             + RANDOM_CASES + ML_CASES + TRAINING_CASES)  # fmt: skip


@pytest.mark.parametrize(("op_type", "inputs", "attrs", "outputs", "tol", "opset", "fold"),
                         ALL_CASES)  # fmt: skip
def test_single_op(
    op_type: str, inputs: list[Any], attrs: dict[str, Any], outputs: int,
    tol: tuple[float, float], opset: int, fold: bool,
) -> None:  # fmt: skip
    model, feeds = single_node_model(op_type, inputs, attrs, outputs, opset)
    check_lowering(model, feeds, tol, fold=fold)


NAMED_OP_CASES = [p for p in WINDOW_CASES + NN_CASES
                  if p.values[0] in ("Conv", "MaxPool", "AveragePool", "Gemm", "MatMul")]  # fmt: skip


@pytest.mark.parametrize(("op_type", "inputs", "attrs", "outputs", "tol", "opset", "fold"),
                         NAMED_OP_CASES)  # fmt: skip
def test_named_ops_agree_with_their_generic_form(
    op_type: str, inputs: list[Any], attrs: dict[str, Any], outputs: int,
    tol: tuple[float, float], opset: int, fold: bool,
) -> None:  # fmt: skip
    """The interpreter's NumPy `linalg.matmul` and `linalg.conv_2d_nchw_fchw`
    agree with evaluating the generics they generalise to."""
    model, feeds = single_node_model(op_type, inputs, attrs, outputs, opset)
    module = ember.import_onnx(model)
    lower(module, fold=fold)
    direct = run_tensor_module(module, feeds)
    generic = run_tensor_module(module, feeds, generalize=True)
    for d, g in zip(direct, generic, strict=True):
        assert d.dtype == g.dtype
        np.testing.assert_allclose(g, d, rtol=1e-5, atol=1e-5)


def test_every_lowerable_op_is_tested() -> None:
    """(Ember's own layout ops are tested in test_graph_to_tensor_layout.py.)"""
    tested = {p.values[0] for p in ALL_CASES}
    importable = {op_type for _, op_type in IMPORTABLE_OPS}
    assert (lowerable_op_types() & importable) - tested == set()


def test_opset17_model() -> None:
    """Opset-17 spellings (ReduceMean axes as an attribute) lower too."""
    n = helper.make_node
    nodes = [
        n("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
        n("Sub", ["x", "m"], ["d"]),
        n("Split", ["d", "sizes"], ["a", "b"], axis=2),
        n("Concat", ["b", "a"], ["y"], axis=2),
        n("Softmax", ["y"], ["z"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 3], np.int64), "sizes")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    check_lowering(model, {"x": randn(2, 3, 4)})


COMPILED_CASES = [
    *INDEXED_CASES,
    *[p for p in ML_CASES if p.values[0] == "ArrayFeatureExtractor" and p.id != p.values[0]],
    *[p for p in ML_CASES if p.id == "TreeEnsemble"],
    *TEXT_CASES,
    # onnxruntime refuses negative indices and a NaN input to Binarizer; Ember reads
    # them as ONNX's reference does (counted from the end; 0).
    case("ArrayFeatureExtractor", [randn(3, 4), np.array([2, 3, 0], np.int64)], id="2d"),
    case("Binarizer", [randn(3, 4, key="binarizer")], {"threshold": 0.25}, id="no-nan"),
    *LOSS_CASES,
    *[p for p in NEW_NN_CASES if p.values[0] == "MaxUnpool" and "output-shape" not in p.id],
    *[p for p in NEW_NN_CASES if p.values[0] == "Einsum"],
    *[p for p in POSITION_CASES if p.values[0] in ("TopK", "Hardmax") and "u64" not in p.id],
    *[p for p in WINDOW_CASES if p.values[0] == "ConvTranspose"],
    case("Conv", [randn(1, 4, 13), randn(6, 2, 3), randn(6)],
         {"strides": [2], "group": 2, "pads": [1, 0]}, id="1d"),
    case("AveragePool", [_SIGNAL], {"kernel_shape": [3], "strides": [2], "pads": [1, 2]},
         id="1d"),
    case("Conv", [randn(2, 4, 6, 5, 7), randn(6, 2, 3, 2, 3), randn(6)],
         {"strides": [2, 1, 2], "dilations": [1, 2, 1], "group": 2, "pads": [1, 0, 1, 0, 1, 2]},
         id="3d"),
    case("MaxPool", [_VOLUME], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1},
         id="3d"),
    case("AveragePool", [_VOLUME], {"kernel_shape": [3, 2, 3], "strides": [2, 1, 2],
                                    "pads": [1, 0, 1, 1, 1, 0]}, id="3d"),
    *[case("Pad", [randn(2, 3, 4), i64(-1, 2, 1, -1), Const(np.array(9.0, F32)), i64(1, -1)],
           {"mode": mode}, id=mode) for mode in ("edge", "reflect", "wrap")],
]  # fmt: skip


@pytest.mark.parametrize(("op_type", "inputs", "attrs", "outputs", "tol", "opset", "fold"),
                         COMPILED_CASES)  # fmt: skip
def test_compiled_agrees_with_onnxruntime(
    op_type: str, inputs: list[Any], attrs: dict[str, Any], outputs: int,
    tol: tuple[float, float], opset: int, fold: bool,
) -> None:  # fmt: skip
    """1-D and 3-D windows, transposed convolutions, the edge/reflect/wrap Pad modes, and gathers,
    scatters and triangles with indices read at run time, compiled end to end."""
    model, feeds = single_node_model(op_type, inputs, attrs, outputs, opset)
    expected = run_onnxruntime(model, feeds)
    got = ember.compile(model).run(feeds)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape, (g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------ models


def _check_model(model: onnx.ModelProto, tol: tuple[float, float]) -> None:
    check_lowering(model, random_inputs(model), tol)


@pytest.mark.parametrize("name", light_model_params(SLOW_IN_PASS_TESTS))
def test_light_model(name: str) -> None:
    model = with_random_weights(onnx.load(light_model_path(name)))
    _check_model(model, LINALG_TOL)


def test_mlp() -> None:
    _check_model(mlp(batch=8, sizes=(64, 128, 10)), LINALG_TOL)


def test_transformer_encoder_small() -> None:
    model = transformer_encoder(seq=16, hidden=64, heads=4, ffn=128)
    mask = np.ones((1, 16), np.int64)
    mask[0, 12:] = 0
    check_lowering(model, {"hidden": randn(1, 16, 64), "mask": mask}, LINALG_TOL)


def test_default_mlp_and_transformer_encoder() -> None:
    _check_model(mlp(), LINALG_TOL)
    model = transformer_encoder()
    mask = np.ones((1, 128), np.int64)
    mask[0, 100:] = 0
    check_lowering(model, {"hidden": randn(1, 128, 768), "mask": mask}, LINALG_TOL)


# ------------------------------------------------------------ diagnostics


def _import(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None,
            shapes: dict[str, list[int]] | None = None) -> Any:  # fmt: skip
    model, _ = single_node_model(op_type, inputs, attrs or {}, 1, 21)
    return ember.import_onnx(model, shapes)


def test_run_time_broadcast_is_reported() -> None:
    # A symbol against 2 may be 1 (broadcast) or 2: not lowered.
    module = _import("Add", [randn(2, 4), randn(2, 4)], shapes={"in0": [-1, 4]})
    with pytest.raises(DiagnosticException) as error:
        ConvertGraphToTensorPass().apply(Context(), module)
    assert str(error.value) == (
        "convert-graph-to-tensor: cannot lower 1 op: graph.add (in0_0 broadcast against 2)"
    )


def test_unsupported_ops_are_listed_together() -> None:
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w"], ["c"]),  # lowers, but nothing is rewritten
        n("Pad", ["t", "pads", "v"], ["p"]),
        n("Pad", ["t", "pads", "v"], ["p2"], mode="reflect"),  # the value is not read
        n("Pow", ["u", "u"], ["q"]),
        n("Relu", ["c"], ["r"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4, 4]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 2, 2, 2, 2]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [4, 4]),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("u", TensorProto.UINT8, [3])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("r", "p", "p2")]
        + [helper.make_tensor_value_info("q", TensorProto.UINT8, None)],
        [numpy_helper.from_array(np.array([1, 1, 1, 1], np.int64), "pads")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    module = ember.import_onnx(model)
    before = str(module)
    with pytest.raises(DiagnosticException) as error:
        ConvertGraphToTensorPass().apply(Context(), module)
    assert str(error.value) == (
        "convert-graph-to-tensor: cannot lower 2 ops: "
        "graph.pad (pads, constant_value and axes must be constants); "
        "graph.pow (unsigned integer base)"
    )
    assert str(module) == before  # nothing was rewritten


def test_large_constant_gather_becomes_a_run_time_gather() -> None:
    indices = np.arange(64, -1, -1, dtype=np.int64)
    module = _import("Gather", [randn(100, 3), Const(indices)])
    lower(module)
    assert "ember_linalg.gather" in [op.name for op in module.walk()]


def test_unfolded_constants_are_removed() -> None:
    module = _import("Reshape", [randn(2, 6), i64(3, 4)])
    lower(module)
    assert [op.name for op in module.walk()][2:] == ["arith.constant", "tensor.reshape",
                                                     "func.return"]  # fmt: skip


# ------------------------------------------------------------ the interpreter

_WINDOW_SUM = """
func.func @main(%x: tensor<6xf32>, %w: tensor<3xf32>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xui8>, tensor<4xi64>) {
  %c0 = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<6xf32>, tensor<3xf32>) outs(%zero : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xui8>
  %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (3 - d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%u, %u : tensor<4xui8>, tensor<4xui8>) outs(%e : tensor<4xui8>) {
  ^bb0(%a: ui8, %b: ui8, %o: ui8):
    %big = arith.maxui %a, %b : ui8
    linalg.yield %big : ui8
  } -> tensor<4xui8>
  %ei = tensor.empty() : tensor<4xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%ei : tensor<4xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<4xi64>
  func.return %sum, %m, %iota : tensor<4xf32>, tensor<4xui8>, tensor<4xi64>
}
"""


def test_interpreter_on_handwritten_tensor_ir() -> None:
    """A window sum through `d0 + d1`, an unsigned max of a reversed read and
    an iota from `linalg.index`."""
    from xdsl.parser import Parser

    from ember.context import make_context

    module = Parser(make_context(), _WINDOW_SUM).parse_module()
    module.verify()
    x, w = randn(6), randn(3)
    u = np.array([3, 250, 7, 128], np.uint8)
    window_sum, biggest, iota = run_tensor_module(module, [x, w, u])
    expected = np.array([x[i : i + 3] @ w for i in range(4)], F32)
    np.testing.assert_allclose(window_sum, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(biggest, np.maximum(u, u[::-1]))
    np.testing.assert_array_equal(iota, np.arange(4))


def test_fused_groups_become_kernels() -> None:
    """Each `graph.fused` group becomes one `loop.kernel` with its kind (its
    constants in front of it, nothing of the group left outside), and the
    tensor-level interpreter running the kernels agrees with the graph
    reference on the fused graph."""

    n = helper.make_node
    rng = np.random.default_rng(7)
    weights = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b"),
    ]
    nodes = [
        n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        n("Relu", ["c"], ["r"]),
        n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Sigmoid", ["p"], ["s"]),
        n("Mul", ["s", "p"], ["m"]),
        n("ReduceMean", ["m"], ["y"], axes=[2, 3], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes, "fused",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], weights,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"x": rng.standard_normal((1, 3, 6, 6)).astype(np.float32)}
    module = ember.import_onnx(model)
    for graph_pass in graph_passes(2, "none"):
        graph_pass.apply(Context(), module)
    kinds = sorted(op.kind.data for op in module.walk() if isinstance(op, FusedOp))
    assert len(kinds) >= 2, kinds
    expected = ember.reference.run(module, feeds)
    ConvertGraphToTensorPass().apply(Context(), module)
    module.verify()
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert sorted(k.kind.data for k in kernels if k.kind is not None) == kinds
    assert all(not isinstance(op, ConstantOp) for k in kernels for op in k.walk())
    got = run_tensor_module(module, feeds)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_large_determinants_are_refused() -> None:
    """Det expands permutations: past 5 x 5 it is a diagnostic naming the op."""
    model, _ = single_node_model("Det", [randn(6, 6)], {}, 1, 21)
    module = ember.import_onnx(model)
    with pytest.raises(DiagnosticException, match=r"graph.det \(matrices larger than 5 x 5\)"):
        lower(module)
