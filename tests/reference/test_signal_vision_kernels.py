"""The signal and vision kernels (DFT, STFT, windows, MelWeightMatrix,
GridSample, AffineGrid, Col2Im, RoiAlign, DeformConv) against onnxruntime, and against ONNX's
reference evaluator where onnxruntime lacks the case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tests.reference.test_kernels import F32, assert_same, check, i64, randn, rng_for, run_kernel


def _onnx_reference(op_type: str, inputs: list[np.ndarray | None], attrs: dict[str, Any],
                    opset: int) -> list[np.ndarray]:  # fmt: skip
    names = ["" if x is None else f"in{i}" for i, x in enumerate(inputs)]
    node = helper.make_node(op_type, names, ["out"], **attrs)
    feeds = {n: x for n, x in zip(names, inputs, strict=True) if x is not None}
    graph = helper.make_graph(
        [node], op_type,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for n, x in feeds.items()],
        [helper.make_empty_tensor_value_info("out")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return [np.asarray(y) for y in ReferenceEvaluator(model).run(None, feeds)]


@pytest.mark.parametrize("length", [None, 4, 9])
@pytest.mark.parametrize("axis", [1, -2])
@pytest.mark.parametrize("channels, inverse, onesided",
                         [(1, 0, 0), (2, 0, 0), (1, 1, 0), (2, 1, 0), (1, 0, 1)])  # fmt: skip
def test_dft(channels: int, length: int | None, axis: int, inverse: int, onesided: int) -> None:
    """Real and complex signals, forward and inverse; one-sided of real ones."""
    x = randn(rng_for("dft", channels), 2, 6, 5, channels)
    dft_length = None if length is None else np.array(length, np.int64)
    check(
        "DFT",
        [x, dft_length, np.array(axis, np.int64)],
        {"inverse": inverse, "onesided": onesided},
        tol=1e-4,
    )


@pytest.mark.parametrize("length", [None, 8, 12])
def test_dft_one_sided_inverse(length: int | None) -> None:
    """NumPy's irfft, as ONNX's reference has it (onnxruntime differs in the
    output's trailing dim)."""
    x = randn(rng_for("irfft"), 1, 6, 3, 2)
    inputs = [x, None if length is None else np.array(length, np.int64), np.array(1, np.int64)]
    attrs = {"inverse": 1, "onesided": 1}
    assert_same(run_kernel("DFT", inputs, attrs), _onnx_reference("DFT", inputs, attrs, 20), 1e-5)


@pytest.mark.parametrize("window, length, onesided", [(True, None, 1), (False, 10, 1),
                                                     (True, 16, 0)])  # fmt: skip
def test_stft(window: bool, length: int | None, onesided: int) -> None:
    rng = rng_for("stft", window, length)
    signal = randn(rng, 2, 64, 1)
    inputs = [signal, np.array(5, np.int64),
              np.hanning(length or 16).astype(F32) if window else None,
              None if length is None else np.array(length, np.int64)]  # fmt: skip
    check("STFT", inputs, {"onesided": onesided}, tol=1e-4)


def test_stft_whole_signal() -> None:
    """Neither window nor frame_length: one frame of the whole signal (ONNX's
    reference: onnxruntime rejects the case)."""
    inputs = [randn(rng_for("stft-whole"), 2, 12, 2), np.array(12, np.int64)]
    assert_same(
        run_kernel("STFT", inputs, {"onesided": 0}),
        _onnx_reference("STFT", inputs, {"onesided": 0}, 17),
        1e-5,
    )


@pytest.mark.parametrize("op_type", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window(op_type: str, periodic: int) -> None:
    check(op_type, [np.array(11, np.int64)], {"periodic": periodic}, tol=1e-6)


def test_window_output_datatype() -> None:
    check("HannWindow", [np.array(8, np.int32)], {"output_datatype": 11}, tol=1e-12)


@pytest.mark.parametrize("bins, length, low, high", [(8, 32, 100.0, 3500.0), (5, 20, 0.0, 4000.0)])
def test_mel_weight_matrix(bins: int, length: int, low: float, high: float) -> None:
    check("MelWeightMatrix", [np.array(bins, np.int32), np.array(length, np.int32),
                              np.array(8000, np.int32), np.array(low, F32),
                              np.array(high, F32)], tol=1e-6)  # fmt: skip


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample(mode: str, padding_mode: str, align_corners: int) -> None:
    """Against onnxruntime, but cubic sampling with border padding against
    ONNX's reference: ONNX clamps a position outside the border onto it before
    taking the four taps, onnxruntime (as PyTorch) clamps each tap instead."""
    rng = rng_for("grid_sample", mode, padding_mode, align_corners)
    x = randn(rng, 2, 3, 5, 4)
    grid = np.asarray(rng.uniform(-1.6, 1.6, (2, 4, 6, 2)), F32)
    attrs = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    if (mode, padding_mode) == ("cubic", "border"):
        assert_same(run_kernel("GridSample", [x, grid], attrs),
                    _onnx_reference("GridSample", [x, grid], attrs, 20), 1e-5)  # fmt: skip
    else:
        check("GridSample", [x, grid], attrs, tol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_volumetric(mode: str, padding_mode: str) -> None:
    """3-D sampling against ONNX's reference (onnxruntime's CPU kernel is 2-D only)."""
    rng = rng_for("grid_sample_3d", mode, padding_mode)
    inputs = [randn(rng, 1, 2, 3, 4, 5), np.asarray(rng.uniform(-1.4, 1.4, (1, 2, 3, 2, 3)), F32)]
    attrs = {"mode": mode, "padding_mode": padding_mode}
    assert_same(run_kernel("GridSample", inputs, attrs),
                _onnx_reference("GridSample", inputs, attrs, 20), 1e-5)  # fmt: skip


@pytest.mark.parametrize("align_corners", [0, 1])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 4, 5)])
def test_affine_grid(align_corners: int, size: tuple[int, ...]) -> None:
    k = len(size) - 2
    theta = randn(rng_for("affine", size), 2, k, k + 1)
    check("AffineGrid", [theta, i64(*size)], {"align_corners": align_corners}, tol=1e-5)


@pytest.mark.parametrize("image, block, attrs", [
    ((5, 5), (1, 5), {}),
    ((5, 5), (2, 2), {"strides": [2, 2]}),
    ((7, 8), (2, 2), {"strides": [2, 3], "pads": [1, 0, 1, 2], "dilations": [2, 1]}),
    ((3, 4, 5), (1, 2, 2), {}),
])  # fmt: skip
def test_col2im(image: tuple[int, ...], block: tuple[int, ...], attrs: dict[str, Any]) -> None:
    k = len(image)
    strides, dilations = attrs.get("strides", [1] * k), attrs.get("dilations", [1] * k)
    pads = attrs.get("pads", [0] * 2 * k)
    counts = [(image[i] + pads[i] + pads[i + k] - dilations[i] * (block[i] - 1) - 1)
              // strides[i] + 1 for i in range(k)]  # fmt: skip
    x = randn(rng_for("col2im", image), 2, 3 * int(np.prod(block)), int(np.prod(counts)))
    check("Col2Im", [x, i64(*image), i64(*block)], attrs, tol=1e-5)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_roi_align(mode: str, transform: str, sampling_ratio: int) -> None:
    """Against onnxruntime and ONNX's reference (max mode: the largest
    weighted tap of any sample, as both have it)."""
    rng = rng_for("roi_align", mode, transform, sampling_ratio)
    rois = np.array([[0, 0, 9, 9], [1.5, 2.2, 11.7, 8.1], [-3, -2, 4, 20], [5, 5, 5.2, 5.3]], F32)
    inputs = [randn(rng, 2, 3, 10, 12), rois, np.array([0, 1, 1, 0], np.int64)]
    attrs = {"mode": mode, "coordinate_transformation_mode": transform,
             "sampling_ratio": sampling_ratio, "output_height": 3, "output_width": 4,
             "spatial_scale": 0.9}  # fmt: skip
    assert_same(run_kernel("RoiAlign", inputs, attrs),
                _onnx_reference("RoiAlign", inputs, attrs, 22), 1e-5)  # fmt: skip
    check("RoiAlign", inputs, attrs, tol=1e-5)


@pytest.mark.parametrize("attrs, mask, bias", [
    ({"kernel_shape": [3, 2]}, False, False),
    ({"pads": [1, 1, 1, 1]}, True, False),
    ({"group": 2, "offset_group": 2, "strides": [2, 2], "dilations": [1, 2],
      "pads": [1, 0, 0, 1]}, True, True),
])  # fmt: skip
def test_deform_conv(attrs: dict[str, Any], mask: bool, bias: bool) -> None:
    rng = rng_for("deform_conv", repr(attrs))
    group, offset_group = attrs.get("group", 1), attrs.get("offset_group", 1)
    x, w = randn(rng, 2, 4, 6, 5), randn(rng, 6, 4 // group, 3, 2)
    (sh, sw), (dh, dw) = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    oh, ow = (
        (6 + pads[0] + pads[2] - dh * 2 - 1) // sh + 1,
        (5 + pads[1] + pads[3] - dw - 1) // sw + 1,
    )
    taps = offset_group * 3 * 2
    inputs = [x, w, randn(rng, 2, 2 * taps, oh, ow, scale=1.5), randn(rng, 6) if bias else None,
              randn(rng, 2, taps, oh, ow) if mask else None]  # fmt: skip
    check("DeformConv", inputs, attrs, tol=1e-5)
