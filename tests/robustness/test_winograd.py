"""Winograd convolutions (`convert-conv-to-winograd`) on awkward inputs:
non-finite values, padding wider than the kernel, large magnitudes,
weights known only at run time, and the heuristic's boundaries."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.context import Context
from xdsl.dialects import memref

import ember
from ember.dialects.graph import ConvNHWCOp
from ember.lowering.graph_to_tensor.winograd import (
    MIN_CHANNELS,
    MIN_OUTPUT,
    MIN_TILES,
    TILE,
    rejection,
)
from ember.passes.graph.infer_shapes import InferShapesPass
from ember.passes.graph.layout import LayoutPass
from ember.passes.graph.simplify import SimplifyPass
from ember.passes.loop.fuse import FuseLoopsPass
from ember.targets.cpu.pipeline import cpu_passes
from tests.lowering.test_graph_to_tensor_winograd import (
    RELATIVE_TOLERANCE,
    conv_model,
    direct_conv,
    relative_error,
    winograd_convs,
)


def _tiles_reading(position: int, pad: int, outputs: int) -> np.ndarray:
    """The outputs (along one axis) of the 4-wide tiles whose 6-wide input
    window holds padded coordinate `position + pad`."""
    hit = np.zeros(outputs, bool)
    for start in range(0, outputs, TILE):
        if start <= position + pad <= start + TILE + 1:
            hit[start : start + TILE] = True
    return hit


def test_a_nan_spreads_to_the_tiles_that_read_it_and_no_further() -> None:
    """A NaN input reaches every output of each tile whose 6x6 window holds it
    (the transforms mix a whole tile; the direct convolution would spoil only
    the 3x3 neighbourhood), and no other output."""
    n, c, f, size = 1, 32, 32, 14
    model, weights, bias = conv_model(n, c, f, size, size, [1, 1, 1, 1], True, False)
    assert winograd_convs(model) == 1
    x = np.random.default_rng(0).standard_normal((n, c, size, size)).astype(np.float32)
    row, col = 6, 9
    x[0, 5, row, col] = np.nan
    (got,) = ember.compile(model)(x)
    spoiled = np.outer(_tiles_reading(row, 1, size), _tiles_reading(col, 1, size))
    assert np.all(np.isnan(got[:, :, spoiled]))
    clean = np.where(np.isnan(x), 0, x)
    want = direct_conv(clean, weights, bias, [1, 1, 1, 1])
    assert relative_error(got[:, :, ~spoiled], want[:, :, ~spoiled]) < RELATIVE_TOLERANCE


def test_padding_wider_than_the_kernel() -> None:
    """Outputs that read only padding are the bias (up to the rounding of
    the other outputs of their tile, which the transforms mix in)."""
    pads = [3, 2, 4, 3]
    model, weights, bias = conv_model(1, 32, 32, 6, 9, pads, True, False)
    assert winograd_convs(model) == 1
    x = np.random.default_rng(1).standard_normal((1, 32, 6, 9)).astype(np.float32)
    want = direct_conv(x, weights, bias, pads)
    (got,) = ember.compile(model)(x)
    assert got.shape == want.shape == (1, 32, 11, 12)
    scale = np.max(np.abs(want))
    np.testing.assert_allclose(got[0, :, 0, 0], bias, rtol=0, atol=RELATIVE_TOLERANCE * scale)
    assert relative_error(got, want) < RELATIVE_TOLERANCE


@pytest.mark.parametrize("scale", [1e-30, 1e30])
def test_error_is_relative_at_extreme_magnitudes(scale: float) -> None:
    """Tiny and huge (finite) activations: no underflow to zero or overflow,
    the error stays relative to the output."""
    model, weights, bias = conv_model(1, 32, 32, 9, 9, [1, 1, 1, 1], False, False)
    x = (np.random.default_rng(2).standard_normal((1, 32, 9, 9)) * scale).astype(np.float32)
    want = direct_conv(x, weights, bias, [1, 1, 1, 1])
    (got,) = ember.compile(model)(x)
    assert np.all(np.isfinite(got))
    assert relative_error(got, want) < RELATIVE_TOLERANCE


def test_weights_given_at_run_time_keep_the_direct_convolution() -> None:
    """W as a model input: no compile-time weight transform, so no Winograd,
    and the direct convolution still computes it."""
    c = f = 32
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1])], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 8, 8]),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, [f, c, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert winograd_convs(model) == 0
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, c, 8, 8)).astype(np.float32)
    w = (rng.standard_normal((f, c, 3, 3)) / 16).astype(np.float32)
    (got,) = ember.compile(model)(x, w)
    want = direct_conv(x, w, np.zeros(f, np.float32), [1, 1, 1, 1])
    assert relative_error(got, want) < RELATIVE_TOLERANCE


def _nhwc_rejection(model: onnx.ModelProto) -> str | None:
    """Why the one convolution of `model`, laid out NHWC, stays direct."""
    module = ember.import_onnx(model)
    for graph_pass in (InferShapesPass(), LayoutPass(layout="NHWC"), SimplifyPass()):
        graph_pass.apply(Context(), module)
    (conv,) = [op for op in module.walk() if isinstance(op, ConvNHWCOp)]
    return rejection(conv)


@pytest.mark.parametrize(
    ("n", "c", "f", "height", "width", "reason"),
    [
        (5, MIN_CHANNELS, MIN_CHANNELS, MIN_OUTPUT, 8, None),  # 5 x 1 x 2 = 10 tiles
        (5, MIN_CHANNELS - 1, MIN_CHANNELS, MIN_OUTPUT, 8, "too few channels"),
        (5, MIN_CHANNELS, MIN_CHANNELS - 1, MIN_OUTPUT, 8, "too few channels"),
        (5, MIN_CHANNELS, MIN_CHANNELS, MIN_OUTPUT - 1, 8, "output too small"),
        (1, MIN_CHANNELS, MIN_CHANNELS, 12, 9, None),  # 3 x 3 tiles: MIN_TILES
        (1, MIN_CHANNELS, MIN_CHANNELS, 12, 8, "too few tiles"),  # 3 x 2
        (3, MIN_CHANNELS, MIN_CHANNELS, 8, 8, None),  # 3 x 2 x 2 = 12
        (2, MIN_CHANNELS, MIN_CHANNELS, 8, 8, "too few tiles"),  # 2 x 2 x 2 = 8
    ],
)
def test_heuristic_boundaries(n: int, c: int, f: int, height: int, width: int,
                              reason: str | None) -> None:  # fmt: skip
    assert MIN_TILES == 9
    model, _, _ = conv_model(n, c, f, height, width, [1, 1, 1, 1], True, False)
    assert _nhwc_rejection(model) == reason


def test_transforms_pass_each_tile_through_scratch() -> None:
    """loop-fuse merges each transform's two nests tile by tile and contracts
    the buffers between them to scratch (`contract_buffers`): the padded
    input is one image's (the batch loop holds the padding and the input
    transform), the input transform's rows and the output transform's
    half-transformed tiles one tile's, all allocas rather than whole tensors.
    On two threads each thread has its own scratch: the result is the one
    thread's, bit for bit, and right."""
    n, c, f, size = 2, 32, 48, 13
    model, weights, bias = conv_model(n, c, f, size, size, [1, 1, 1, 1], True, False)
    assert winograd_convs(model) == 1
    module = ember.import_onnx(model)
    for _, compiler_pass in cpu_passes():
        compiler_pass.apply(Context(), module)
        if isinstance(compiler_pass, FuseLoopsPass):
            break
    scratch = [op.memref.type for op in module.walk() if isinstance(op, memref.AllocaOp)]
    assert [t.get_shape() for t in scratch] == [(size + 5, size + 5, c), (6, 6, c), (6, 4, f)]  # type: ignore[attr-defined]
    x = np.random.default_rng(1).standard_normal((n, c, size, size)).astype(np.float32)
    (one,) = ember.compile(model, threads=1)(x)
    (two,) = ember.compile(model, threads=2)(x)
    np.testing.assert_array_equal(one, two)
    assert relative_error(two, direct_conv(x, weights, bias, [1, 1, 1, 1])) < RELATIVE_TOLERANCE
