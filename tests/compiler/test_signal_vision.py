"""The signal and vision ops compiled for the CPU and compared with
onnxruntime; and the window functions' expanded form, whose Range to a
size computed in floats gets a static shape once the size is a constant."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.errors import EmberError

F = TensorProto.FLOAT


def _model(node: onnx.NodeProto, inputs: dict[str, np.ndarray], inits: dict[str, np.ndarray],
           opset: int = 21) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(
        [node], node.op_type,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs.items()],
        [helper.make_tensor_value_info(node.output[0], F, None)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], tol: float = 1e-5) -> None:
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    (got,) = ember.compile(model).run(feeds)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


RNG = np.random.default_rng(39)


@pytest.mark.parametrize("mode, padding", [("linear", "zeros"), ("nearest", "border"),
                                           ("cubic", "reflection")])  # fmt: skip
def test_grid_sample(mode: str, padding: str) -> None:
    x = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)
    grid = RNG.uniform(-1.3, 1.3, (2, 4, 7, 2)).astype(np.float32)
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding)
    _check(_model(node, {"x": x, "grid": grid}, {}), {"x": x, "grid": grid})


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_opset16_modes(mode: str) -> None:
    """GridSample-16's `bilinear` and `bicubic` are imported as `linear` and `cubic`."""
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    grid = RNG.uniform(-0.9, 0.9, (1, 3, 3, 2)).astype(np.float32)
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, align_corners=1)
    _check(_model(node, {"x": x, "grid": grid}, {}, opset=16), {"x": x, "grid": grid})


@pytest.mark.parametrize("inverse, onesided", [(0, 1), (1, 0)])
def test_dft(inverse: int, onesided: int) -> None:
    x = RNG.standard_normal((2, 12, 3, 1 if onesided else 2)).astype(np.float32)
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"], inverse=inverse, onesided=onesided)
    model = _model(node, {"x": x}, {"axis": np.array(1, np.int64)})
    _check(model, {"x": x}, tol=1e-4)


def test_stft_of_a_hann_window() -> None:
    """STFT windowed by a HannWindow of a constant size (folded to a constant)."""
    signal = RNG.standard_normal((1, 80, 1)).astype(np.float32)
    nodes = [helper.make_node("HannWindow", ["size"], ["w"]),
             helper.make_node("STFT", ["x", "step", "w"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "stft", [helper.make_tensor_value_info("x", F, signal.shape)],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.array(16, np.int64), "size"),
         numpy_helper.from_array(np.array(8, np.int64), "step")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    _check(model, {"x": signal}, tol=1e-4)


def test_col2im() -> None:
    x = RNG.standard_normal((1, 2 * 6, 12)).astype(np.float32)
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=[2, 1],
                            pads=[1, 1, 0, 0])  # fmt: skip
    inits = {"image": np.array([8, 4], np.int64), "block": np.array([2, 3], np.int64)}
    _check(_model(node, {"x": x}, inits), {"x": x})


def test_window_expanded_to_a_range_of_a_float_size() -> None:
    """Range(0.0, Cast(size), 1.0), as the windows' function bodies build it:
    float scalars are values at compile time, so the Range is static."""
    n = helper.make_node
    nodes = [n("Cast", ["size"], ["size_f"], to=F),
             n("Range", ["zero", "size_f", "one"], ["r"]),
             n("Mul", ["r", "x"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "range", [helper.make_tensor_value_info("x", F, [7])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.array(7, np.int32), "size"),
         numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = RNG.standard_normal(7).astype(np.float32)
    (got,) = ember.compile(model).run({"x": x})
    np.testing.assert_allclose(got, np.arange(7, dtype=np.float32) * x)


def test_dft_axis_from_an_input_is_input_dependent() -> None:
    """An axis fed at run time: compile says which operand must be a constant."""
    x = np.zeros((1, 4, 1), np.float32)
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"])
    model = _model(node, {"x": x, "axis": np.array(1, np.int64)}, {})
    with pytest.raises(EmberError, match="dynamic shape|axis and dft_length must be constants"):
        ember.compile(model)


def test_mel_weight_matrix_inputs_through_the_onnx_backend() -> None:
    """Every operand a graph input: the ONNX backend bakes the sizes and the
    edge frequencies in (they decide the filters), as it does Resize's scales."""
    import ember.onnx_backend as backend

    names = ["bins", "length", "rate", "low", "high"]
    values = [np.array(8, np.int32), np.array(32, np.int32), np.array(8000, np.int32),
              np.array(100.0, np.float32), np.array(3500.0, np.float32)]  # fmt: skip
    node = helper.make_node("MelWeightMatrix", names, ["y"])
    model = _model(node, dict(zip(names, values, strict=True)), {}, opset=17)
    (got,) = backend.prepare(model).run(values)
    (want,) = ort.InferenceSession(model.SerializeToString()).run(
        None, dict(zip(names, values, strict=True))
    )
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
