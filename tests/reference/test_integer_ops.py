"""ConvInteger, MatMulInteger and DynamicQuantizeLinear: the reference
kernels against onnxruntime (and, for the per-channel and per-row zero
points onnxruntime refuses, against onnx's reference or NumPy), bit for bit;
and single-node models compiled for the CPU (through `graph-expand-qlinear`)
against the same oracles, the zero points as initializers and as inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import ember
from tests.reference.test_kernels import check, rng_for, run_kernel

U8, I8 = np.uint8, np.int8


def _ints(rng: np.random.Generator, dtype: Any, *shape: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def _model(op_type: str, inputs: dict[str, np.ndarray], constants: dict[str, np.ndarray],
           order: list[str], outputs: list[str], **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    """One node reading `order` ("" for a missing input): `inputs` as graph
    inputs, `constants` as initializers."""
    node = helper.make_node(op_type, order, outputs, **attrs)
    graph = helper.make_graph(
        [node], op_type,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in constants.items()])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(y) for y in session.run(None, feeds)]


def _assert_equal(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


# ------------------------------------------------------------ ConvInteger

_CONV_CASES = {
    "u8-i8-padded": (U8, I8, {"pads": [1, 2, 0, 1], "strides": [2, 1]}),
    "i8-i8-dilated": (I8, I8, {"dilations": [2, 1]}),
    "u8-u8-grouped": (U8, U8, {"group": 2, "auto_pad": "SAME_UPPER"}),
}


@pytest.mark.parametrize("case", list(_CONV_CASES))
@pytest.mark.parametrize("with_points", [False, True])
def test_conv_integer_kernel_matches_onnxruntime(case: str, with_points: bool) -> None:
    x_type, w_type, attrs = _CONV_CASES[case]
    rng = rng_for("ConvInteger", case, with_points)
    x, w = _ints(rng, x_type, 2, 4, 7, 6), _ints(rng, w_type, 6, 4 // attrs.get("group", 1), 3, 3)
    points = [np.asarray(x_type(-3 if x_type is I8 else 131)), np.asarray(w_type(5))]
    (y,) = check("ConvInteger", [x, w, *(points if with_points else [])], attrs, tol=0)
    assert y.dtype == np.int32 and len(np.unique(y)) > 20


def test_conv_integer_kernel_per_output_channel_matches_onnx_reference() -> None:
    """onnxruntime takes one weight zero point only; onnx's reference takes one per channel."""
    rng = rng_for("ConvInteger", "per-channel")
    x, w = _ints(rng, U8, 1, 3, 6, 6), _ints(rng, I8, 4, 3, 3, 3)
    inputs = [x, w, np.asarray(U8(100)), np.array([1, -2, 0, 7], I8)]
    attrs = {"pads": [1, 1, 1, 1]}
    model = _model("ConvInteger", {}, {}, ["x", "w", "xz", "wz"], ["y"], **attrs)
    want = ReferenceEvaluator(model).run(None, dict(zip(["x", "w", "xz", "wz"], inputs)))
    _assert_equal(run_kernel("ConvInteger", inputs, attrs), [np.asarray(want[0])])


# ---------------------------------------------------------- MatMulInteger


@pytest.mark.parametrize("types", [(U8, I8), (I8, I8), (U8, U8)])
@pytest.mark.parametrize("shapes", [((5, 12), (12, 7)), ((2, 3, 5, 12), (12, 7)), ((12,), (12, 7))])
def test_matmul_integer_kernel_matches_onnxruntime(types: tuple[Any, Any],
                                                   shapes: tuple[tuple[int, ...], ...]) -> None:  # fmt: skip
    rng = rng_for("MatMulInteger", types, shapes)
    a, b = _ints(rng, types[0], *shapes[0]), _ints(rng, types[1], *shapes[1])
    b_point = _ints(rng, types[1], shapes[1][-1])  # one per column
    check("MatMulInteger", [a, b, np.asarray(types[0](9)), b_point], tol=0)
    check("MatMulInteger", [a, b], tol=0)


def test_matmul_integer_kernel_per_row() -> None:
    """A 1-D a_zero_point holds one value per row of A (onnxruntime takes one only)."""
    rng = rng_for("MatMulInteger", "per-row")
    a, b = _ints(rng, U8, 4, 6), _ints(rng, I8, 6, 5)
    a_point = np.array([0, 17, 128, 255], U8)
    want = (a.astype(np.int32) - a_point[:, None].astype(np.int32)) @ b.astype(np.int32)
    _assert_equal(run_kernel("MatMulInteger", [a, b, a_point]), [want])


# --------------------------------------------------- DynamicQuantizeLinear

_DYNAMIC_INPUTS = {
    "mixed": lambda rng: rng.standard_normal((3, 5, 7)).astype(np.float32) * 4,
    "positive": lambda rng: rng.random((40,)).astype(np.float32) + 2,
    "negative": lambda rng: -rng.random((6, 6)).astype(np.float32) * 1e3,
    "zeros": lambda rng: np.zeros((2, 3), np.float32),
    "small": lambda rng: np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 5.5], np.float32) * 5.1 / 255,
}


@pytest.mark.parametrize("case", list(_DYNAMIC_INPUTS))
def test_dynamic_quantize_linear_kernel_matches_onnxruntime(case: str) -> None:
    x = _DYNAMIC_INPUTS[case](rng_for("DynamicQuantizeLinear", case))
    check("DynamicQuantizeLinear", [x], n_outputs=3, tol=0)


# ------------------------------------------------------ compiled for the CPU


def _compile_and_compare(model: onnx.ModelProto, feeds: dict[str, np.ndarray],
                         want: list[np.ndarray]) -> None:  # fmt: skip
    _assert_equal(ember.compile(model).run(feeds), want)


@pytest.mark.parametrize("points_as", ["inputs", "initializers"])
def test_conv_integer_compiles(points_as: str) -> None:
    rng = rng_for("ConvInteger", "compiled", points_as)
    values = {"x": _ints(rng, U8, 1, 4, 9, 8), "w": _ints(rng, I8, 6, 2, 3, 3),
              "xz": np.asarray(U8(77)), "wz": np.asarray(I8(-4))}  # fmt: skip
    attrs = {"pads": [1, 0, 2, 1], "strides": [1, 2], "group": 2}
    feeds = {"x": values["x"]} if points_as == "initializers" else values
    constants = {k: v for k, v in values.items() if k not in feeds}
    model = _model("ConvInteger", feeds, constants, list(values), ["y"], **attrs)
    _compile_and_compare(model, feeds, _onnxruntime(model, feeds))


@pytest.mark.parametrize("points_as", ["inputs", "initializers"])
def test_conv_integer_per_output_channel_compiles(points_as: str) -> None:
    rng = rng_for("ConvInteger", "per-channel compiled", points_as)
    values = {"x": _ints(rng, I8, 2, 3, 6, 5), "w": _ints(rng, I8, 4, 3, 2, 3),
              "xz": np.asarray(I8(3)), "wz": np.array([1, -2, 0, 7], I8)}  # fmt: skip
    feeds = {"x": values["x"]} if points_as == "initializers" else values
    constants = {k: v for k, v in values.items() if k not in feeds}
    model = _model("ConvInteger", feeds, constants, list(values), ["y"], pads=[0, 1, 1, 0])
    want = ReferenceEvaluator(model).run(None, feeds)
    _compile_and_compare(model, feeds, [np.asarray(want[0])])


@pytest.mark.parametrize("points_as", ["inputs", "initializers"])
def test_matmul_integer_compiles(points_as: str) -> None:
    rng = rng_for("MatMulInteger", "compiled", points_as)
    values = {"a": _ints(rng, U8, 2, 5, 12), "b": _ints(rng, I8, 12, 7),
              "az": np.array([200], U8), "bz": _ints(rng, I8, 7)}  # fmt: skip
    feeds = {"a": values["a"]} if points_as == "initializers" else values
    constants = {k: v for k, v in values.items() if k not in feeds}
    model = _model("MatMulInteger", feeds, constants, list(values), ["y"])
    _compile_and_compare(model, feeds, _onnxruntime(model, feeds))


@pytest.mark.parametrize("points_as", ["inputs", "initializers"])
def test_matmul_integer_per_row_compiles(points_as: str) -> None:
    rng = rng_for("MatMulInteger", "per-row compiled", points_as)
    values = {"a": _ints(rng, I8, 3, 4, 6), "b": _ints(rng, U8, 6, 5),
              "az": np.array([0, 17, -128, 127], I8)}  # fmt: skip
    feeds = {"a": values["a"]} if points_as == "initializers" else values
    constants = {k: v for k, v in values.items() if k not in feeds}
    model = _model("MatMulInteger", feeds, constants, [*values, ""], ["y"])
    centred = values["a"].astype(np.int32) - values["az"][:, None].astype(np.int32)
    _compile_and_compare(model, feeds, [centred @ values["b"].astype(np.int32)])


@pytest.mark.parametrize("case", list(_DYNAMIC_INPUTS))
def test_dynamic_quantize_linear_compiles(case: str) -> None:
    x = _DYNAMIC_INPUTS[case](rng_for("DynamicQuantizeLinear", "compiled", case))
    model = _model("DynamicQuantizeLinear", {"x": x}, {}, ["x"], ["y", "y_scale", "y_zero_point"])
    _compile_and_compare(model, {"x": x}, _onnxruntime(model, {"x": x}))


def test_symbolic_batch_compiles() -> None:
    """A symbolic batch dim stays symbolic through the integer products'
    result types: one compile serves every batch size."""
    nodes = [helper.make_node("DynamicQuantizeLinear", ["f"], ["q", "s", "z"]),
             helper.make_node("MatMulInteger", ["q", "b", "z"], ["y"]),
             helper.make_node("ConvInteger", ["x", "w", "xz"], ["c"], pads=[1, 1])]  # fmt: skip
    rng = rng_for("integer ops", "symbolic batch")
    constants = {"b": _ints(rng, U8, 4, 3), "w": _ints(rng, I8, 3, 2, 3), "xz": np.asarray(I8(4))}
    graph = helper.make_graph(
        nodes, "batch",
        [helper.make_tensor_value_info("f", onnx.TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("x", onnx.TensorProto.INT8, ["N", 2, 7])],
        [helper.make_empty_tensor_value_info(o) for o in ("y", "c")],
        [numpy_helper.from_array(v, n) for n, v in constants.items()])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    compiled = ember.compile(model)
    for batch in (1, 5):
        feeds = {"f": rng.standard_normal((batch, 4)).astype(np.float32),
                 "x": _ints(rng, I8, batch, 2, 7)}  # fmt: skip
        _assert_equal(compiled.run(feeds), _onnxruntime(model, feeds))
