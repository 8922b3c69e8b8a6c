"""convert-conv-to-winograd computes what the direct convolution computes.

The transform matrices are checked in float64 (where F(4, 3) is exact up
to rounding), then single convolutions and whole networks are compiled
with Winograd on and compared with a float64 convolution or onnxruntime,
within a tolerance relative to the output's magnitude: F(4x4, 3x3) rounds
more than the direct convolution (coefficients up to 8 and fractions down
to 1/24), a few 1e-6 of the largest output at 64-512 channels, and the bound
below leaves room for any summation order (AVX2, AVX-512) while an element
read from the wrong tile or tap is off by the output's own magnitude.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.func import FuncOp

import ember
from ember.dialects.graph import ConvNHWCOp
from ember.dialects.symbol_sizes import SYMBOL_ATTR
from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass
from ember.lowering.graph_to_tensor.winograd import (
    FILTER_TRANSFORM,
    INPUT_TRANSFORM,
    OUTPUT_TRANSFORM,
    ConvertConvToWinogradPass,
    rejection,
    transform_weights,
    winograd_multiplies,
)
from ember.options import Options
from ember.passes.graph.optimize import graph_passes
from ember.targets.cpu.pipeline import cpu_passes
from tests.support.models import (
    light_model_path,
    random_inputs,
    run_onnxruntime,
    with_logits,
    with_random_weights,
)

PASS = "convert-conv-to-winograd"
RELATIVE_TOLERANCE = 1e-4
"""Of the largest output magnitude (see the module docstring)."""


def test_f43_is_a_correlation_in_exact_arithmetic() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        d, g = rng.standard_normal(6), rng.standard_normal(3)
        y = OUTPUT_TRANSFORM @ ((FILTER_TRANSFORM @ g) * (INPUT_TRANSFORM @ d))
        direct = np.array([d[i : i + 3] @ g for i in range(4)])
        np.testing.assert_allclose(y, direct, rtol=0, atol=1e-12)


def test_weights_are_transformed_per_channel_pair_in_row_major_tile_positions() -> None:
    rng = np.random.default_rng(1)
    weights = rng.standard_normal((3, 3, 5, 7)).astype(np.float32)
    u = transform_weights(weights)
    assert u.shape == (36, 5, 7) and u.dtype == np.float32
    c, f = 3, 4
    expected = FILTER_TRANSFORM @ weights[:, :, c, f].astype(np.float64) @ FILTER_TRANSFORM.T
    np.testing.assert_allclose(u[:, c, f].reshape(6, 6), expected, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------ single convs


def _only_conv(model: onnx.ModelProto) -> ConvNHWCOp:
    module = ember.import_onnx(model)
    for graph_pass in graph_passes(2):
        graph_pass.apply(Context(), module)
    (conv,) = [op for op in module.walk() if isinstance(op, ConvNHWCOp)]
    return conv


def conv_model(n: int | str, c: int, f: int, h: int, w: int, pads: list[int], bias: bool,
               relu: bool, seed: int = 0) -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:  # fmt: skip
    """x [n, c, h, w] -> Conv 3x3 (pads: top, left, bottom, right) [-> Relu];
    a string `n` is a batch known only at run time."""
    rng = np.random.default_rng(seed)
    weights = (rng.standard_normal((f, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32) if bias else np.zeros(f, np.float32)
    inits = [numpy_helper.from_array(weights, "W")]
    inputs = ["x", "W"]
    if bias:
        inits.append(numpy_helper.from_array(b, "B"))
        inputs.append("B")
    nodes = [helper.make_node("Conv", inputs, ["c" if relu else "y"], pads=pads)]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), weights, b


def direct_conv(x: np.ndarray, weights: np.ndarray, bias: np.ndarray, pads: list[int]
                ) -> np.ndarray:  # fmt: skip
    """The convolution in float64, tap by tap."""
    top, left, bottom, right = pads
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (top, bottom), (left, right)])
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 2
    y = np.zeros((x.shape[0], weights.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            tap = weights[:, :, i, j].astype(np.float64)
            y += np.einsum("nchw,fc->nfhw", xp[:, :, i : i + oh, j : j + ow], tap)
    return y + bias[None, :, None, None]


def winograd_convs(model: onnx.ModelProto) -> int:
    """How many convolutions of `model` Winograd computes at -O2."""
    module = ember.import_onnx(model)
    for graph_pass in graph_passes(2):
        graph_pass.apply(Context(), module)
    return sum(1 for op in module.walk() if isinstance(op, ConvNHWCOp) and rejection(op) is None)


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


# (batch, C, F, H, W, pads (top, left, bottom, right), bias, relu)
CONVS = [
    pytest.param(1, 32, 32, 12, 12, [1, 1, 1, 1], True, True, id="whole-tiles"),
    pytest.param(2, 32, 48, 9, 11, [0, 0, 0, 0], True, False, id="partial-tiles-batch2"),
    pytest.param(1, 48, 32, 13, 10, [1, 0, 2, 1], False, True, id="asymmetric-pads"),
    pytest.param(3, 24, 40, 5, 7, [1, 1, 1, 1], True, True, id="one-tile-high-batch3"),
    pytest.param(1, 64, 64, 30, 30, [1, 1, 1, 1], True, False, id="64-channels"),
]


@pytest.mark.parametrize(("n", "c", "f", "h", "w", "pads", "bias", "relu"), CONVS)
def test_compiled_winograd_conv_matches_the_direct_convolution(
    n: int, c: int, f: int, h: int, w: int, pads: list[int], bias: bool, relu: bool
) -> None:
    model, weights, b = conv_model(n, c, f, h, w, pads, bias, relu)
    assert winograd_convs(model) == 1
    x = np.random.default_rng(2).standard_normal((n, c, h, w)).astype(np.float32)
    want = direct_conv(x, weights, b, pads)
    if relu:
        want = np.maximum(want, 0)
    (got,) = ember.compile(model)(x)
    assert got.shape == want.shape
    assert relative_error(got, want) < RELATIVE_TOLERANCE


@pytest.mark.parametrize(("size", "saving"), [(8, 4.0), (7, 49 * 9 / (4 * 36))])
def test_winograd_needs_a_quarter_of_the_multiplies_on_whole_tiles(size: int, saving: float
                                                                   ) -> None:  # fmt: skip
    """36 products per 4x4 tile instead of 9 per output: 4 times fewer, less
    where the last tiles stick out of the output (7x7: 4 tiles for 49)."""
    model, _, _ = conv_model(2, 32, 48, size, size, [1, 1, 1, 1], False, False)
    direct, winograd = winograd_multiplies(_only_conv(model))
    assert direct == 2 * size * size * 48 * 32 * 9
    assert direct / winograd == pytest.approx(saving)


def test_disabling_the_pass_keeps_the_direct_convolution() -> None:
    def names(options: Options) -> list[str]:
        return [p.name for _, p in cpu_passes(options)]

    assert PASS in names(Options())
    assert PASS not in names(Options(disabled=(PASS,)))
    assert PASS not in names(Options(opt_level=1))
    model, weights, b = conv_model(1, 32, 32, 10, 10, [1, 1, 1, 1], True, False)
    x = np.random.default_rng(3).standard_normal((1, 32, 10, 10)).astype(np.float32)
    want = direct_conv(x, weights, b, [1, 1, 1, 1])
    (direct,) = ember.compile(model, disabled=(PASS,))(x)
    (winograd,) = ember.compile(model)(x)
    assert relative_error(direct, want) < RELATIVE_TOLERANCE
    assert relative_error(winograd, want) < RELATIVE_TOLERANCE


def test_a_symbolic_batch_is_read_once_by_winograd_and_the_lowering_after_it() -> None:
    """convert-graph-to-tensor takes the read of N that Winograd made at the
    top of the function instead of reading N a second time."""
    model, _, _ = conv_model("N", 32, 32, 12, 12, [1, 1, 1, 1], True, True)
    assert winograd_convs(model) == 1
    module = ember.import_onnx(model)
    for module_pass in (*graph_passes(2), ConvertConvToWinogradPass(), ConvertGraphToTensorPass()):
        module_pass.apply(Context(), module)
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    reads = Counter(
        name.data
        for op in func.body.block.ops
        if isinstance(name := op.attributes.get(SYMBOL_ATTR), StringAttr)
    )
    assert reads == {"N": 1}


# ---------------------------------------------------------- whole networks


@pytest.mark.parametrize(
    ("name", "convs"),
    [
        pytest.param("squeezenet", 8, marks=pytest.mark.slow),
        pytest.param("resnet50", 11, marks=pytest.mark.slow),
        pytest.param("vgg19", 15, marks=pytest.mark.slow),
    ],  # fmt: skip
)
def test_network_logits_match_onnxruntime(name: str, convs: int) -> None:
    # The logits show a convolution's error before Softmax squashes it.
    model, has_logits = with_logits(with_random_weights(onnx.load(light_model_path(name)), seed=5))
    assert has_logits
    assert winograd_convs(model) == convs
    inputs = random_inputs(model, seed=6)
    _, want = run_onnxruntime(model, inputs)
    _, got = ember.compile(model).run(inputs)
    assert relative_error(got, want) < RELATIVE_TOLERANCE
