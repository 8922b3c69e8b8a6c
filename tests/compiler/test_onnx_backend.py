"""Ember's ONNX backend (`ember.onnx_backend`): a model with symbolic dims is
compiled once, at `prepare`, where the generic version lowers it; a model
whose shapes depend on input values is compiled per run, for those values."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

from ember import onnx_backend
from ember.targets.cpu.generic import GenericModel
from tests.support.models import mlp


def test_a_symbolic_batch_is_compiled_once() -> None:
    model = mlp(batch="N", sizes=(16, 24, 8))  # type: ignore[arg-type]
    rep = onnx_backend.prepare(model)
    assert isinstance(rep.compiled, GenericModel)
    oracle = ort.InferenceSession(model.SerializeToString())
    for batch in (1, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)
        (got,) = rep.run([x])
        (expected,) = oracle.run(None, {"input": x})
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert not rep._specialized  # nothing compiled at run time


def test_a_shape_input_defers_compiling_to_the_run() -> None:
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rep = onnx_backend.prepare(model)
    assert rep.compiled is None
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for shape in ([3, 4], [4, 3]):
        (got,) = rep.run([x, np.array(shape, np.int64)])
        np.testing.assert_array_equal(got, x.reshape(shape))
    assert len(rep._specialized) == 2
