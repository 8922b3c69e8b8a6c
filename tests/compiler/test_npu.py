"""Models compiled for the NPU (`ember.compile(model, target="npu")`): the
NPU's segments run in the simulator, the rest on the CPU; checked against
onnxruntime and the reference interpreter."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.compiler import InputError
from ember.errors import EmberError
from ember.targets.npu.compile import DeviceStep, HostStep
from tests.support.models import mlp, random_inputs, run_onnxruntime, transformer_encoder


def op_of(label: str) -> str:
    """The op a report's label names: `graph.conv` in `c1 (graph.conv)`."""
    found = re.search(r"\((graph\.\w+)\)", label)
    assert found, label
    return found[1]


def _check(model: onnx.ModelProto, tolerance: float = 1e-5) -> ember.compiler.CompiledModel:
    inputs = random_inputs(model, seed=1)
    compiled = ember.compile(model, target="npu")
    want = run_onnxruntime(model, inputs)
    got = compiled.run(inputs)
    reference = ember.reference.run(ember.import_onnx(model), inputs)
    for g, w, r in zip(got, want, reference, strict=True):
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(g, r, rtol=tolerance, atol=tolerance)
    return compiled


def test_an_mlp_runs_its_layers_on_the_npu_and_softmax_on_the_host() -> None:
    compiled = _check(mlp(batch=8, sizes=(64, 128, 10)))
    assert [type(s) for s in compiled.steps] == [DeviceStep, HostStep]
    report = compiled.report
    (segment,) = report.segments
    assert [layer.ops for layer in segment.layers] == ["fc0 (graph.gemm), relu0 (graph.relu)",
                                                       "fc1 (graph.gemm)"]  # fmt: skip
    assert report.host_ops == ["graph.softmax"]
    assert sum(layer.macs for layer in segment.layers) == 8 * (64 * 128 + 128 * 10)
    assert sum(layer.cycles for layer in segment.layers) < segment.cycles
    table = report.table()
    assert "fc1 (graph.gemm)" in table and "on the host: probs (graph.softmax)" in table


def test_a_transformer_encoder_runs_its_projections_on_the_npu() -> None:
    """MatMuls of [1, S, H] activations by weights are NPU products (rows =
    the leading dims); attention, layer norm and the rest stay on the host."""
    model = transformer_encoder(seq=16, hidden=32, heads=2, ffn=64)
    compiled = _check(model, tolerance=2e-5)
    devices = [s for s in compiled.steps if isinstance(s, DeviceStep)]
    assert len(devices) >= 3
    assert any(isinstance(s, HostStep) for s in compiled.steps)


def _two_layers_with_tanh_between() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((24, 40)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((40, 8)).astype(np.float32), "w2")
    bias = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "bias")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Tanh", ["h"], ["t"]),
             helper.make_node("MatMul", ["t", "w2"], ["p"]),
             helper.make_node("Add", ["p", "bias"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 8]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [5, 40])], [w1, w2, bias])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_host_ops_between_segments_split_the_model() -> None:
    """NPU, host, NPU; an intermediate that is also an output leaves its
    segment."""
    compiled = _check(_two_layers_with_tanh_between())
    assert [type(s) for s in compiled.steps] == [DeviceStep, HostStep, DeviceStep]
    assert compiled.report.host_ops == ["graph.tanh"]
    assert compiled.report.segments[1].layers[0].ops == "p (graph.matmul), y (graph.add)"


def test_a_model_without_npu_work_runs_on_the_host() -> None:
    graph = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["y"])], "host",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])  # fmt: skip
    compiled = _check(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert [type(s) for s in compiled.steps] == [HostStep]
    assert compiled.report.segments == []


def test_inputs_are_checked_as_on_the_cpu() -> None:
    compiled = ember.compile(mlp(batch=2, sizes=(8, 4)), target="npu")
    with pytest.raises(InputError, match="got shape"):
        compiled(np.zeros((3, 8), np.float32))
    with pytest.raises(InputError, match="takes 1 inputs"):
        compiled()


def test_symbolic_shapes_and_versions_are_refused_with_a_reason() -> None:
    model = mlp(batch=2, sizes=(8, 4))
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    with pytest.raises(EmberError, match="static shapes only"):
        ember.compile(model, target="npu")
    with pytest.raises(EmberError, match="no specialize"):
        ember.compile(model, target="npu", specialize={"N": [1]})
    with pytest.raises(EmberError, match="available: cpu, cuda, npu"):
        ember.compile(model, target="tpu")


def _cnn(batch: int = 2) -> onnx.ModelProto:
    """conv 3x3 (pads 1) + ReLU, conv 3x3 dilated 2 with asymmetric pads,
    a 1x1 conv, max pool (host), conv 5x5 valid."""
    rng = np.random.default_rng(3)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    inits = [weight("w1", 12, 3, 3, 3), weight("b1", 12), weight("w2", 16, 12, 3, 3),
             weight("w3", 20, 16, 1, 1), weight("b3", 20), weight("w4", 8, 20, 5, 5)]  # fmt: skip
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[2, 1, 2, 3], dilations=[2, 2]),
             helper.make_node("Conv", ["c2", "w3", "b3"], ["c3"]),
             helper.make_node("Relu", ["c3"], ["r3"]),
             helper.make_node("MaxPool", ["r3"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p", "w4"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 22, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_convolutions_and_a_pool_run_on_the_npu() -> None:
    compiled = _check(_cnn(), tolerance=2e-5)
    assert [type(s) for s in compiled.steps] == [DeviceStep]
    (segment,) = compiled.report.segments
    assert [layer.ops for layer in segment.layers] == [
        "c1 (graph.conv), r1 (graph.relu)",
        "c2 (graph.conv)",
        "c3 (graph.conv), r3 (graph.relu)",
        "p (graph.max_pool)",
        "y (graph.conv)",
    ]
    assert segment.layers[0].shape == "2 x 12x27x440 f32"  # per image: F x C*KH*KW x OH*OW
    assert segment.layers[3].shape == "2 x max of 4: 20x110 f32"  # the window's taps
    assert compiled.report.host_ops == []
    assert segment.layers[4].macs == 2 * 8 * (20 * 5 * 5) * (7 * 6)


@pytest.mark.parametrize(("kernel", "strides", "pads"), [
    (3, [2, 2], [1, 1, 1, 1]), (7, [2, 2], [3, 3, 3, 3]), (1, [2, 2], [0, 0, 0, 0]),
    (3, [1, 3], [0, 1, 2, 1]), (3, [3, 1], [1, 1, 1, 1]),
])  # fmt: skip
def test_strided_convolutions_read_their_windows_with_strided_loads(
    kernel: int, strides: list[int], pads: list[int]
) -> None:
    """ResNet's 7x7/2 stem and 1x1/2 shortcut, and uneven strides: a column
    stride reads each tile row with `load_strided`."""
    rng = np.random.default_rng(kernel)
    inits = [numpy_helper.from_array(rng.standard_normal((12, 4, kernel, kernel)).astype(
        np.float32) * 0.3, "w"), numpy_helper.from_array(rng.standard_normal(12).astype(np.float32), "b")]  # fmt: skip
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], strides=strides, pads=pads),
             helper.make_node("Relu", ["y"], ["r"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "strided", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 19, 23])],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)], inits)  # fmt: skip
    compiled = _check(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                      tolerance=2e-5)  # fmt: skip
    (step,) = compiled.steps
    assert isinstance(step, DeviceStep)
    strided = [i for i in step.kernel.program if i.mnemonic == "load_strided"]
    assert bool(strided) == (strides[1] > 1)
    assert all(i["step"] == strides[1] for i in strided)


def test_grouped_convolutions_stay_on_the_host() -> None:
    model = _cnn(batch=1)
    w2 = next(t for t in model.graph.initializer if t.name == "w2")
    halved = numpy_helper.to_array(w2)[:, :6]
    w2.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(halved), "w2"))
    model.graph.node[2].attribute.append(helper.make_attribute("group", 2))
    compiled = _check(model, tolerance=2e-5)
    assert "graph.conv" in compiled.report.host_ops
