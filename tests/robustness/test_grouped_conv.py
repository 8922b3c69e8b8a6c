"""Grouped and depthwise convolutions on awkward inputs: group attributes
that do not fit the shapes (one `error:` line naming the node or op, never
a traceback), a NaN that must stay within its group (the split views read
no other group's channels), shapes at the edges (one pixel, a kernel as
large as the input, one filter per group), and weights known only at run
time, which the lowering views like constant ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.errors import EmberError
from tests.lowering.test_grouped_conv import Case, compile_laid_out, conv_relu_model
from tests.robustness.test_ember_opt import assert_one_line_error, run_opt
from tests.support.models import random_inputs, run_onnxruntime


def _conv(channels: int, filters: int, group_channels: int, group: int) -> onnx.ModelProto:
    w = np.ones((filters, group_channels, 3, 3), np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=group, name="gconv")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


BAD_GROUPS = {
    # name: (C, F, weight channels, group, what the message says)
    "group does not divide the channels": (8, 6, 3, 3, "input channels (8)"),
    "group does not divide the filters": (8, 6, 2, 4, "output channels (6)"),
    "weights of another group count": (8, 8, 4, 4, "weight channels (4) x group (4)"),
    "more groups than channels": (4, 8, 1, 8, "input channels (4)"),
    "group zero": (8, 8, 8, 0, "group must be positive"),
    "group negative": (8, 8, 8, -2, "group must be positive"),
}


@pytest.mark.parametrize("name", BAD_GROUPS)
@pytest.mark.parametrize("opt_level", [1, 2])
def test_groups_that_do_not_fit_are_one_line_naming_the_node(name: str, opt_level: int) -> None:
    channels, filters, group_channels, group, fragment = BAD_GROUPS[name]
    with pytest.raises(EmberError) as error:
        ember.compile(_conv(channels, filters, group_channels, group), opt_level=opt_level)
    message = str(error.value)
    assert len(message.splitlines()) == 1, message
    assert "node 'gconv' (Conv)" in message, message
    assert fragment in message, message


LAID_OUT = """
func.func @f(%x: tensor<1x6x6x16xf32>, %w: tensor<3x3x{c}x{f}xf32>) -> tensor<1x6x6x{f}xf32> {{
  %y = graph.conv_nhwc %x, %w {{group = {g} : i64, pads = array<i64: 1, 1, 1, 1>}} : (tensor<1x6x6x16xf32>, tensor<3x3x{c}x{f}xf32>) -> tensor<1x6x6x{f}xf32>
  func.return %y : tensor<1x6x6x{f}xf32>
}}
"""


@pytest.mark.parametrize(
    ("c", "f", "g", "fragment"),
    [(4, 30, 4, "output channels (30) must be divisible by group (4)"),
     (3, 32, 4, "input channels (16) must equal weight channels (3) x group (4)"),
     (16, 32, 0, "group must be positive")],
)  # fmt: skip
def test_laid_out_groups_that_do_not_fit_in_ember_opt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, c: int, f: int, g: int, fragment: str
) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(LAID_OUT.format(c=c, f=f, g=g))
    code, _, err = run_opt(capsys, str(path), "-p", "convert-graph-to-tensor")
    assert_one_line_error(code, err, ".*bad.mlir", fragment)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_nan_stays_within_its_group(layout: str, threads: int) -> None:
    """A NaN in one input channel reaches only the outputs of its group's
    filters (around its position): a view that read another group's
    channels would spread it further."""
    case = Case((1, 12, 9, 20), 3, 24, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True)
    model = conv_relu_model(case)
    x = np.random.default_rng(4).standard_normal(case.shape).astype(np.float32)
    channel, row, col = 5, 4, 11  # group 1 (channels 4..7, filters 8..15)
    x[0, channel, row, col] = np.nan
    compiled = (compile_laid_out(model, threads) if layout == "NHWC"
                else ember.compile(model, opt_level=1, threads=threads))  # fmt: skip
    (got,) = compiled(x)
    nan = np.isnan(got[0])
    assert nan[8:16, row - 1 : row + 2, col - 1 : col + 2].all()
    assert nan.sum() == 8 * 9
    clean = x.copy()
    clean[0, channel, row, col] = 0
    (want,) = run_onnxruntime(model, {"x": clean})
    scale = float(np.max(np.abs(want)))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(got)], rtol=1e-5,
                               atol=1e-5 * scale)  # fmt: skip


EDGES = {
    "one_pixel_depthwise": Case((1, 32, 1, 1), 32, 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),
    "kernel_as_large_as_the_input": Case((1, 4, 5, 5), 2, 6, (5, 5), (1, 1), (0, 0, 0, 0), (1, 1), True),
    "one_filter_per_group": Case((1, 12, 6, 17), 4, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False),
    "stride_past_the_input": Case((1, 6, 4, 4), 3, 6, (1, 1), (5, 5), (0, 0, 0, 0), (1, 1), True),
    "batch_three_multiplier_three": Case((3, 4, 5, 18), 4, 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True),
}  # fmt: skip


@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("name", EDGES)
def test_edge_shapes_match_onnxruntime(name: str, nhwc: bool) -> None:
    model = conv_relu_model(EDGES[name])
    inputs = random_inputs(model, seed=6)
    (want,) = run_onnxruntime(model, inputs)
    compiled = compile_laid_out(model, 2) if nhwc else ember.compile(model, opt_level=1, threads=2)
    (got,) = compiled.run(inputs)
    scale = float(np.max(np.abs(want))) or 1.0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("opt_level", [1, 2])
def test_weights_known_only_at_run_time(opt_level: int) -> None:
    """Weights and bias as graph inputs: the views are of the arguments."""
    case = Case((1, 8, 9, 20), 2, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True)
    model = conv_relu_model(case)
    graph = model.graph
    for init in list(graph.initializer):
        graph.input.append(helper.make_tensor_value_info(init.name, init.data_type, init.dims))
    del graph.initializer[:]
    inputs = random_inputs(model, seed=7)
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model, opt_level=opt_level, threads=2).run(inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(want))))
