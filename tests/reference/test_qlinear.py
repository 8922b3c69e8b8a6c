"""The quantised products' reference kernels against onnxruntime's
QLinearConv, QLinearMatMul and (contrib) QGemm: bit for bit, per tensor and
per output channel; and models made of them compiled for the CPU (through
`graph-expand-qlinear`) within one quantum of onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.reference.kernels import KERNELS

_NAMES = {"QLinearConv": ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
          "QLinearMatMul": ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
          "QGemm": ["x", "xs", "xz", "w", "ws", "wz", "b", "ys", "yz"]}  # fmt: skip


def _case(op_type: str, per_channel: bool, seed: int) -> tuple[onnx.ModelProto, dict, np.ndarray]:
    rng = np.random.default_rng(seed)
    attrs: dict = {}
    if op_type == "QLinearConv":
        x, w = rng.integers(-128, 128, (2, 8, 9, 7)), rng.integers(-127, 128, (6, 8, 3, 3))
        attrs = {"pads": [1, 2, 1, 0], "strides": [1, 2]}
    elif op_type == "QLinearMatMul":
        x, w = rng.integers(-128, 128, (5, 12)), rng.integers(-127, 128, (12, 7))
    else:
        x, w = rng.integers(-128, 128, (5, 12)), rng.integers(-127, 128, (7, 12))
        attrs = {"transB": 1}
    channels = w.shape[0] if op_type != "QLinearMatMul" else w.shape[1]
    scale = (rng.random(channels) * 0.01 + 0.001) if per_channel else np.array(0.004)
    values = {"xs": np.float32(0.05), "xz": np.int8(-3), "w": w.astype(np.int8),
              "ws": scale.astype(np.float32), "wz": np.zeros(scale.shape, np.int8),
              "ys": np.float32(0.3 if op_type == "QLinearConv" else 0.1), "yz": np.int8(5),
              "b": rng.integers(-3000, 3000, channels).astype(np.int32)}  # fmt: skip
    names = _NAMES[op_type]
    node = helper.make_node(op_type, names, ["y"], domain="com.microsoft" if op_type == "QGemm"
                            else "", **attrs)  # fmt: skip
    graph = helper.make_graph(
        [node], "q", [helper.make_tensor_value_info("x", TensorProto.INT8, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
        [numpy_helper.from_array(np.asarray(values[n]), n) for n in names[1:]])  # fmt: skip
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets), attrs, x.astype(np.int8)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("op_type", ["QLinearConv", "QLinearMatMul", "QGemm"])
def test_kernels_match_onnxruntime_bit_for_bit(op_type: str, per_channel: bool) -> None:
    model, attrs, x = _case(op_type, per_channel, seed=1)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    inputs = [x, *[numpy_helper.to_array(t) for t in model.graph.initializer]]
    got = KERNELS[op_type](inputs, attrs)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want)) > 20  # neither saturated nor constant


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("op_type", ["QLinearConv", "QLinearMatMul"])
def test_models_of_them_compile_for_the_cpu(op_type: str, per_channel: bool) -> None:
    """The CPU runs them as QDQ chains in float: an accumulator that lands
    near a rounding boundary may round to the neighbouring value."""
    model, _, x = _case(op_type, per_channel, seed=2)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    got = ember.compile(model)(x)[0]
    assert got.dtype == want.dtype
    assert np.abs(got.astype(np.int32) - want).max() <= 1
    assert np.mean(got == want) > 0.95
