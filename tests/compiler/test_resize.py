"""Resize compiled end to end and compared with onnxruntime, beyond ONNX's
node cases: every mode with the coordinate transformations exporters emit,
the opset-10/11 forms (Resize-10 and Upsample sample asymmetrically),
integer data, a symbolic batch compiled once, and the errors."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.errors import EmberError
from ember.targets.cpu.generic import GenericModel

F = TensorProto.FLOAT


def _resize_model(shape: list[int | str], out: list[int | str], *, scales: list[float] | None = None,
                  sizes: list[int] | None = None, roi: list[float] | None = None,
                  opset: int = 19, elem: int = F, **attrs: object) -> onnx.ModelProto:  # fmt: skip
    inits, names = [], ["x", "", "", ""]
    for position, name, value, dtype in ((1, "roi", roi, np.float32), (2, "scales", scales,
                                         np.float32), (3, "sizes", sizes, np.int64)):  # fmt: skip
        if value is not None:
            inits.append(numpy_helper.from_array(np.array(value, dtype), name))
            names[position] = name
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], **attrs)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", elem, shape)],
                              [helper.make_tensor_value_info("y", elem, out)], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model: onnx.ModelProto, x: np.ndarray) -> None:
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (got,) = ember.compile(model).run({"x": x})
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


CASES = [
    ("nearest", "asymmetric", {"nearest_mode": "floor"}),
    ("nearest", "half_pixel", {"nearest_mode": "round_prefer_ceil"}),
    ("nearest", "align_corners", {"nearest_mode": "round_prefer_floor"}),
    ("nearest", "tf_half_pixel_for_nn", {"nearest_mode": "ceil"}),
    ("linear", "half_pixel", {}),
    ("linear", "pytorch_half_pixel", {}),
    ("linear", "align_corners", {}),
    ("linear", "asymmetric", {}),
    ("cubic", "half_pixel", {"cubic_coeff_a": -0.5}),
    ("cubic", "align_corners", {"exclude_outside": 1}),
]


@pytest.mark.parametrize("mode, transform, extra", CASES)
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 0.5, 0.75], [1, 1, 1.5, 3]])
def test_matches_onnxruntime(mode: str, transform: str, extra: dict, scales: list[float]) -> None:
    shape = [2, 3, 6, 8]
    out = [int(np.floor(d * np.float32(s))) for d, s in zip(shape, scales)]
    opset = 11 if transform == "tf_half_pixel_for_nn" else 19
    roi = [] if opset == 11 else None
    model = _resize_model(shape, out, scales=scales, roi=roi, opset=opset, mode=mode,
                          coordinate_transformation_mode=transform, **extra)  # fmt: skip
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    _check(model, x)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialiased_downsampling(mode: str) -> None:
    model = _resize_model([1, 2, 16, 12], [1, 2, 5, 7], sizes=[5, 7], axes=[2, 3], mode=mode,
                          antialias=1)  # fmt: skip
    _check(model, np.random.default_rng(1).standard_normal((1, 2, 16, 12)).astype(np.float32))


def test_crop_and_resize_extrapolates() -> None:
    model = _resize_model([1, 1, 5, 5], [1, 1, 4, 3], sizes=[1, 1, 4, 3], mode="linear",
                          roi=[0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4], extrapolation_value=7.0,
                          coordinate_transformation_mode="tf_crop_and_resize")  # fmt: skip
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    _check(model, x)
    (y,) = ember.compile(model).run({"x": x})
    assert (y == 7.0).any()


@pytest.mark.parametrize("opset", [9, 10])
def test_the_opset_9_and_10_forms_sample_asymmetrically(opset: int) -> None:
    scales = numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "s")
    op = "Upsample" if opset == 9 else "Resize"
    node = helper.make_node(op, ["x", "s"], ["y"], mode="linear")
    graph = helper.make_graph([node], "up", [helper.make_tensor_value_info("x", F, [1, 2, 3, 4])],
                              [helper.make_tensor_value_info("y", F, [1, 2, 6, 12])], [scales])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    _check(model, np.random.default_rng(2).standard_normal((1, 2, 3, 4)).astype(np.float32))


def test_nearest_resize_of_integers() -> None:
    model = _resize_model([2, 5], [4, 3], sizes=[4, 3], elem=TensorProto.INT32)
    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    _check(model, x)


def test_a_symbolic_batch_compiles_once() -> None:
    model = _resize_model(["N", 3, 4, 4], ["N", 3, 8, 6], scales=[1, 1, 2, 1.5], mode="linear")
    compiled = ember.compile(model, specialize=None)
    assert isinstance(compiled, GenericModel)
    session = ort.InferenceSession(model.SerializeToString())
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 3, 4, 4)).astype(np.float32)
        np.testing.assert_allclose(compiled.run({"x": x})[0], session.run(None, {"x": x})[0],
                                   rtol=1e-5, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("kwargs, message", [
    ({"scales": [1, 1, 2, 2], "sizes": [1, 1, 4, 4]}, "exactly one of scales and sizes"),
    ({"scales": [2, 2]}, "scales has 2 values for 4 axes"),
    ({"scales": [1, 1, 2, 2], "mode": "bilinear"}, "unknown mode 'bilinear'"),
    ({"sizes": [1, 1, 4, 4], "coordinate_transformation_mode": "tf_crop_and_resize"},
     "tf_crop_and_resize needs roi"),
])  # fmt: skip
def test_malformed_resizes_are_rejected(kwargs: dict, message: str) -> None:
    model = _resize_model([1, 1, 2, 2], [1, 1, 4, 4], **kwargs)
    with pytest.raises(EmberError, match=message):
        ember.compile(model)
