"""Grouped and depthwise convolutions against onnxruntime: the pointwise
(1x1, stride 1, unpadded) ones that lower to one generic over flattened
positions, and the others next to them, with shapes long enough that the
default schedule tiles the innermost dim to a register block (and a
remainder), with and without bias, fused with what follows."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.support.models import random_inputs, run_onnxruntime

CASES = {
    # name: (input shape, groups, kernel, strides, pads, bias)
    "pointwise_g4_28x28": ((1, 16, 28, 28), 4, (1, 1), (1, 1), (0, 0, 0, 0), True),
    "pointwise_g4_7x7": ((1, 16, 7, 7), 4, (1, 1), (1, 1), (0, 0, 0, 0), False),
    "pointwise_g2_batch2": ((2, 6, 9, 11), 2, (1, 1), (1, 1), (0, 0, 0, 0), True),
    "pointwise_1d": ((1, 8, 300), 4, (1,), (1,), (0, 0), True),
    "pointwise_3d": ((1, 4, 3, 5, 7), 2, (1, 1, 1), (1, 1, 1), (0,) * 6, False),
    "pointwise_strided": ((1, 8, 10, 10), 2, (1, 1), (2, 2), (0, 0, 0, 0), False),
    "pointwise_padded": ((1, 8, 10, 10), 2, (1, 1), (1, 1), (1, 1, 1, 1), True),
    "depthwise_3x3_112": ((1, 4, 112, 112), 4, (3, 3), (1, 1), (1, 1, 1, 1), True),
    "depthwise_3x3_s2": ((1, 6, 56, 56), 6, (3, 3), (2, 2), (1, 1, 1, 1), False),
    "grouped_3x3": ((1, 8, 20, 70), 2, (3, 3), (1, 1), (1, 1, 1, 1), True),
}


def conv_relu_model(shape, groups, kernel, strides, pads, bias) -> onnx.ModelProto:  # noqa: ANN001
    channels = shape[1]
    rng = np.random.default_rng(len(shape) * 7 + groups)
    w = rng.standard_normal((channels, channels // groups, *kernel)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    inputs = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32), "b"))
        inputs.append("b")
    conv = helper.make_node("Conv", inputs, ["c"], group=groups, kernel_shape=list(kernel),
                            strides=list(strides), pads=list(pads))  # fmt: skip
    relu = helper.make_node("Relu", ["c"], ["y"])
    graph = helper.make_graph(
        [conv, relu], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("opt_level", [0, 2])
def test_grouped_conv_matches_onnxruntime(name: str, opt_level: int) -> None:
    model = conv_relu_model(*CASES[name])
    inputs = random_inputs(model, seed=5)
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model, opt_level=opt_level).run(inputs)
    assert got.shape == want.shape
    # Sums of a few dozen terms of magnitude ~1: tolerance relative to the
    # output's magnitude, not to each element (some are near zero).
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(want))))
