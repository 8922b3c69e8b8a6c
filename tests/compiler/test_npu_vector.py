"""The NPU's vector unit in whole models: residual additions (with their
ReLU), max and average pools (padded, strided, ceil mode) and channel
concatenations, against onnxruntime and the reference interpreter."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ember.targets.npu.compile import DeviceStep
from tests.compiler.test_npu import _check, op_of


def _model(nodes: list, inits: list, shape: list[int], out: str = "y") -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "vector", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weight(rng: np.random.Generator, name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


def test_a_residual_block_runs_whole_on_the_npu() -> None:
    """conv -> relu -> conv, added to the block's input (Sum, as ResNet's
    exporters write it), then relu: every op one NPU layer (batch 2, 20
    channels: a partial channel tile, 35 columns: three tiles a row)."""
    rng = np.random.default_rng(0)
    inits = [_weight(rng, "w1", 20, 20, 3, 3), _weight(rng, "w2", 20, 20, 3, 3)]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Sum", ["c2", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]  # fmt: skip
    compiled = _check(_model(nodes, inits, [2, 20, 6, 35]), tolerance=2e-5)
    assert [type(s) for s in compiled.steps] == [DeviceStep]
    (segment,) = compiled.report.segments
    assert [layer.ops for layer in segment.layers][-1] == "s (graph.sum), y (graph.relu)"
    assert compiled.report.host_ops == []


@pytest.mark.parametrize(("op", "attrs"), [
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("MaxPool", {"kernel_shape": [2, 3], "strides": [1, 3], "pads": [0, 2, 1, 0]}),
    ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    ("AveragePool", {"kernel_shape": [7, 7]}),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 2, 1]}),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("GlobalAveragePool", {}),
])  # fmt: skip
def test_pools_of_a_convolution_run_on_the_vector_unit(op: str, attrs: dict) -> None:
    """A max pool pads with -inf (its input's halo), an average with 0 and
    divides by the window; column strides read with strided loads."""
    rng = np.random.default_rng(1)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(op, ["c"], ["y"], **attrs)]  # fmt: skip
    compiled = _check(_model(nodes, [_weight(rng, "w", 18, 3, 3, 3)], [2, 3, 13, 17]),
                      tolerance=2e-5)  # fmt: skip
    assert compiled.report.host_ops == []
    (segment,) = compiled.report.segments
    name = {"MaxPool": "max_pool", "AveragePool": "average_pool"}.get(op, "global_average_pool")
    assert op_of(segment.layers[-1].ops) == f"graph.{name}"


def test_concatenated_convolutions_store_into_their_channels() -> None:
    """SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expands
    concatenated along the channels, read by a max pool; no copy."""
    rng = np.random.default_rng(2)
    inits = [_weight(rng, "sq", 6, 8, 1, 1), _weight(rng, "e1", 10, 6, 1, 1),
             _weight(rng, "e3", 12, 6, 3, 3)]  # fmt: skip
    nodes = [helper.make_node("Conv", ["x", "sq"], ["s"]),
             helper.make_node("Relu", ["s"], ["rs"]),
             helper.make_node("Conv", ["rs", "e1"], ["a"]),
             helper.make_node("Relu", ["a"], ["ra"]),
             helper.make_node("Conv", ["rs", "e3"], ["b"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["b"], ["rb"]),
             helper.make_node("Concat", ["ra", "rb"], ["cat"], axis=1),
             helper.make_node("MaxPool", ["cat"], ["y"], kernel_shape=[3, 3], strides=[2, 2])]  # fmt: skip
    compiled = _check(_model(nodes, inits, [1, 8, 15, 15]), tolerance=2e-5)
    assert compiled.report.host_ops == []
    (segment,) = compiled.report.segments
    assert not any("concat" in layer.ops for layer in segment.layers)


def test_an_inception_module_runs_whole_on_the_npu() -> None:
    """GoogLeNet's module: its input read by 1x1 convolutions and by a
    padded 3x3 max pool (a halo of -inf that the unpadded convolutions
    never read), four branches concatenated."""
    rng = np.random.default_rng(4)
    inits = [_weight(rng, "a", 8, 6, 1, 1), _weight(rng, "b1", 4, 6, 1, 1),
             _weight(rng, "b3", 10, 4, 3, 3), _weight(rng, "p", 5, 6, 1, 1)]  # fmt: skip
    nodes = [helper.make_node("Conv", ["x", "a"], ["ca"]),
             helper.make_node("Relu", ["ca"], ["ra"]),
             helper.make_node("Conv", ["x", "b1"], ["cb"]),
             helper.make_node("Relu", ["cb"], ["rb"]),
             helper.make_node("Conv", ["rb", "b3"], ["cb3"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["cb3"], ["rb3"]),
             helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["m", "p"], ["cp"]),
             helper.make_node("Relu", ["cp"], ["rp"]),
             helper.make_node("Concat", ["ra", "rb3", "rp"], ["y"], axis=1)]  # fmt: skip
    compiled = _check(_model(nodes, inits, [1, 6, 9, 11]), tolerance=2e-5)
    assert compiled.report.host_ops == []


def test_a_dense_block_copies_what_it_concatenates_again() -> None:
    """DenseNet: each layer's input is concatenated with its output, and the
    result is the next layer's input. The new features are computed into
    the result; the input, read by the layer too, is copied in."""
    rng = np.random.default_rng(6)
    inits = [_weight(rng, "w1", 4, 6, 3, 3), _weight(rng, "w2", 4, 10, 3, 3)]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["f1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["f1"], ["r1"]),
             helper.make_node("Concat", ["x", "r1"], ["c1"], axis=1),
             helper.make_node("Conv", ["c1", "w2"], ["f2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["f2"], ["r2"]),
             helper.make_node("Concat", ["c1", "r2"], ["y"], axis=1)]  # fmt: skip
    compiled = _check(_model(nodes, inits, [1, 6, 5, 7]), tolerance=2e-5)
    assert compiled.report.host_ops == []
    (segment,) = compiled.report.segments
    assert [layer.ops for layer in segment.layers] == [
        "f1 (graph.conv), r1 (graph.relu)",
        "c1 (graph.concat)",
        "f2 (graph.conv), r2 (graph.relu)",
        "y (graph.concat)",
    ]


def test_vector_ops_the_npu_does_not_take_stay_on_the_host() -> None:
    """An Add broadcasting a row along the columns (not one value per
    channel), a dilated max pool, and an average that counts its padding in
    ceil mode."""
    rng = np.random.default_rng(3)
    inits = [_weight(rng, "w", 4, 3, 1, 1), _weight(rng, "row", 1, 1, 1, 8)]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Add", ["c", "row"], ["a"]),
             helper.make_node("MaxPool", ["a"], ["m"], kernel_shape=[2, 2], dilations=[2, 2]),
             helper.make_node("AveragePool", ["m"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], count_include_pad=1, ceil_mode=1)]  # fmt: skip
    compiled = _check(_model(nodes, inits, [1, 3, 8, 8]), tolerance=2e-5)
    assert compiled.report.host_ops == ["graph.add", "graph.max_pool", "graph.average_pool"]


def test_an_unfolded_batch_normalization_runs_on_the_vector_unit() -> None:
    """DenseNet's pre-activation: BatchNormalization before a convolution
    (nothing to fold it into) is a per-channel Mul and Add, then Relu: one
    vector-unit layer; a lone per-channel Add is a layer of its own."""
    rng = np.random.default_rng(5)
    stats = [numpy_helper.from_array((rng.random(6) + 0.5).astype(np.float32), name)
             for name in ("gamma", "beta", "mean", "var")]  # fmt: skip
    shift = numpy_helper.from_array(rng.standard_normal((6, 1, 1)).astype(np.float32), "shift")
    inits = [*stats, shift, _weight(rng, "w", 6, 6, 3, 3), _weight(rng, "w2", 6, 6, 1, 1)]
    nodes = [helper.make_node("Conv", ["x", "w2"], ["c0"]),
             helper.make_node("BatchNormalization", ["c0", "gamma", "beta", "mean", "var"],
                              ["bn"]),
             helper.make_node("Relu", ["bn"], ["r"]),
             helper.make_node("Conv", ["r", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "shift"], ["y"])]  # fmt: skip
    model = _model(nodes, inits, [2, 6, 7, 9])
    # The first Conv keeps the BatchNormalization apart: its result is
    # also the model's output, so nothing folds.
    model.graph.output.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, None))
    compiled = _check(model, tolerance=2e-5)
    assert compiled.report.host_ops == []
    (segment,) = compiled.report.segments
    layers = [layer.ops.split(", ") for layer in segment.layers]
    assert [op_of(ops[0]) for ops in layers] == ["graph.conv", "graph.mul", "graph.conv",
                                                     "graph.add"]  # fmt: skip
    assert [op_of(op) for op in layers[1]] == ["graph.mul", "graph.add", "graph.relu"]
