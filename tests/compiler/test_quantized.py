"""QuantizeLinear and DequantizeLinear, alone and in the QDQ models that
onnxruntime's `quantize_static` makes from float models, on the CPU:
against onnxruntime running the same model op by op, against its fused
int8 kernels and against the reference interpreter (within two quanta of
the output, most elements equal)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.compiler.test_npu import _cnn
from tests.support.models import mlp
from tests.support.quantized import quantized


def _qdq(scale: np.ndarray, zero_point: np.ndarray, axis: int) -> onnx.ModelProto:
    params = [numpy_helper.from_array(scale.astype(np.float32), "s"),
              numpy_helper.from_array(zero_point, "z")]  # fmt: skip
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis)]  # fmt: skip
    q_type = helper.np_dtype_to_tensor_dtype(zero_point.dtype)
    graph = helper.make_graph(
        nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info("q", q_type, None),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], params)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize(("scale", "zero_point", "axis"), [
    (np.array(0.05), np.array(-3, np.int8), 1),
    (np.array(0.02), np.array(128, np.uint8), 1),
    (np.array([0.01, 0.05, 0.1]), np.array([0, -7, 12], np.int8), 1),
    (np.array([0.01, 0.02, 0.04, 0.08, 0.16]), np.full(5, 100, np.uint8), -1),
    (np.array(0.001), np.array(-300, np.int16), 1),
])  # fmt: skip
def test_quantize_and_dequantize_match_onnxruntime(scale, zero_point, axis) -> None:
    """Per tensor and per axis, signed and unsigned; values past the range
    saturate, halves round to even."""
    model = _qdq(scale, zero_point, axis)
    x = (np.random.default_rng(1).standard_normal((2, 3, 4, 5)) * 4).astype(np.float32)
    x.flat[:4] = [2.5 * float(scale.flat[0]), -0.5 * float(scale.flat[0]), 1e6, -1e6]
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    got = ember.compile(model)(x)
    reference = ember.reference.run(ember.import_onnx(model), [x])
    for g, r, w in zip(got, reference, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(r, w)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("name", ["cnn", "mlp"])
def test_quantize_static_models_run_on_the_cpu(
    tmp_path: Path, name: str, per_channel: bool
) -> None:
    model = _cnn(batch=1) if name == "cnn" else mlp(batch=4, sizes=(32, 64, 10))
    path = quantized(model, tmp_path, per_channel)
    qdq = onnx.load(path)
    assert {"QuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in qdq.graph.node}
    given = qdq.graph.input[0]
    x = np.random.default_rng(5).standard_normal(
        [d.dim_value for d in given.type.tensor_type.shape.dim]).astype(np.float32)  # fmt: skip
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    op_by_op = ort.InferenceSession(str(path), options).run(None, {given.name: x})[0]
    fused = ort.InferenceSession(str(path)).run(None, {given.name: x})[0]
    got = ember.compile(str(path))(x)[0]
    reference = ember.reference.run(ember.import_onnx(qdq), [x])[0]
    last = next(n for n in reversed(qdq.graph.node) if n.op_type == "DequantizeLinear")
    quantum = float(numpy_helper.to_array(
        next(t for t in qdq.graph.initializer if t.name == last.input[1])).max())  # fmt: skip
    # A float sum summed in another order may land a value on the other side
    # of a rounding boundary of a QuantizeLinear: a quantum or two of the
    # output, never more here, whatever the machine's vector width.
    for peer in (op_by_op, fused, reference):
        assert float(np.abs(got - peer).max()) <= 2 * quantum * 1.001
    assert np.mean(got == op_by_op) > 0.9
