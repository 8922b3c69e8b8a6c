"""Grouped and depthwise convolutions against onnxruntime, in NCHW (-O0,
-O1) and laid out NHWC (-O2), on one thread and on two: groups of several
channels, depthwise with multipliers 1 and 2, strides, padding (uneven
too), dilation, batches, 1-D and 3-D, pointwise ones (1x1, stride 1,
unpadded: positions flattened), with and without bias, with the ReLU that
follows fused in. The shapes are long enough that the grouped ones get
micro-kernels and the depthwise ones register blocks with remainders."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context

import ember
from ember.compiler import Options, compile_module
from ember.dialects.graph import ConvNHWCOp
from ember.passes.graph.infer_shapes import InferShapesPass
from ember.passes.graph.layout import LayoutPass
from tests.support.models import random_inputs, run_onnxruntime


class Case(NamedTuple):
    shape: tuple[int, ...]
    groups: int
    filters: int
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]
    dilations: tuple[int, ...]
    bias: bool


CASES = {
    "g2_3x3": Case((1, 8, 9, 21), 2, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),
    "g2_wide": Case((1, 8, 20, 70), 2, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),
    "g4_fg16_s2": Case((1, 16, 11, 20), 4, 64, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True),
    "g2_dilated": Case((1, 8, 12, 19), 2, 32, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), False),
    "g4_uneven_batch2": Case((2, 8, 7, 18), 4, 8, (3, 2), (1, 2), (0, 1, 2, 1), (1, 1), True),
    "depthwise_3x3_112": Case((1, 4, 112, 112), 4, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),
    "depthwise_3x3_s2": Case((1, 6, 56, 56), 6, 6, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),
    "depthwise_wide_channels": Case((1, 80, 9, 9), 80, 80, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),
    "depthwise_32_s2_dilated": Case((1, 32, 15, 23), 32, 32, (3, 3), (2, 2), (2, 2, 2, 2), (2, 2), True),
    "depthwise_m2": Case((1, 8, 10, 20), 8, 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),
    "depthwise_m2_s2_dilated": Case((1, 8, 15, 17), 8, 16, (3, 3), (2, 2), (2, 2, 2, 2), (2, 2), False),
    "pointwise_g4_28x28": Case((1, 16, 28, 28), 4, 16, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), True),
    "pointwise_g4_7x7": Case((1, 16, 7, 7), 4, 16, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), False),
    "pointwise_g2_batch2": Case((2, 6, 9, 11), 2, 6, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), True),
    "pointwise_strided": Case((1, 8, 10, 10), 2, 8, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), False),
    "pointwise_padded": Case((1, 8, 10, 10), 2, 8, (1, 1), (1, 1), (1, 1, 1, 1), (1, 1), True),
    "pointwise_1d": Case((1, 8, 300), 4, 8, (1,), (1,), (0, 0), (1,), True),
    "grouped_1d": Case((1, 8, 40), 2, 8, (3,), (2,), (1, 0), (1,), True),
    "grouped_3d": Case((1, 4, 3, 5, 7), 2, 4, (1, 3, 3), (1, 1, 1), (0, 1, 1, 0, 1, 1), (1, 1, 1), False),
}  # fmt: skip

CONFIGS = {
    # name: (opt_level, threads, laid out NHWC)
    "O0": (0, 1, False),
    "O1": (1, 1, False),
    "O1_threads2": (1, 2, False),
    "NHWC": (2, 1, True),
    "NHWC_threads2": (2, 2, True),
}


def conv_relu_model(case: Case) -> onnx.ModelProto:
    channels = case.shape[1]
    rng = np.random.default_rng(len(case.shape) * 7 + case.groups)
    w = rng.standard_normal((case.filters, channels // case.groups, *case.kernel))
    inits = [numpy_helper.from_array(w.astype(np.float32), "w")]
    inputs = ["x", "w"]
    if case.bias:
        bias = rng.standard_normal(case.filters).astype(np.float32)
        inits.append(numpy_helper.from_array(bias, "b"))
        inputs.append("b")
    conv = helper.make_node("Conv", inputs, ["c"], group=case.groups, kernel_shape=list(case.kernel),
                            strides=list(case.strides), pads=list(case.pads),
                            dilations=list(case.dilations))  # fmt: skip
    relu = helper.make_node("Relu", ["c"], ["y"])
    graph = helper.make_graph(
        [conv, relu], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, case.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def compile_laid_out(model: onnx.ModelProto, threads: int) -> ember.CompiledModel:
    """`model` laid out NHWC whatever the conversions cost (-O2 alone keeps
    a lone convolution with few channels per group in NCHW), compiled at -O2."""
    module = ember.import_onnx(model)
    for graph_pass in (InferShapesPass(), LayoutPass(layout="NHWC")):
        graph_pass.apply(Context(), module)
    assert any(isinstance(op, ConvNHWCOp) for op in module.walk())
    return compile_module(module, options=Options(opt_level=2, threads=threads))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", CASES)
def test_grouped_conv_matches_onnxruntime(name: str, config: str) -> None:
    case = CASES[name]
    opt_level, threads, nhwc = CONFIGS[config]
    if nhwc and len(case.shape) != 4:
        pytest.skip("only 2-D convolutions have an NHWC form")
    model = conv_relu_model(case)
    inputs = random_inputs(model, seed=5)
    (want,) = run_onnxruntime(model, inputs)
    if nhwc:
        compiled = compile_laid_out(model, threads)
    else:
        compiled = ember.compile(model, opt_level=opt_level, threads=threads)
    (got,) = compiled.run(inputs)
    assert got.shape == want.shape
    # Sums of a few dozen terms of magnitude ~1: tolerance relative to the
    # output's magnitude, not to each element (some are near zero).
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(want))))
