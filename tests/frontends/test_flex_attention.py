"""ai.onnx.preview's FlexAttention, imported as the ops of its definition with
its modifier subgraphs inlined: compiled and interpreted, it matches onnx's
reference implementation (grouped queries, a score and a probability
modifier with an initializer of their own, half precision); a model it
cannot take is a one-line error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import ember
from ember import reference
from ember.errors import EmberError


def _modifier(name: str, op: str, constant: float, elem: int) -> onnx.GraphProto:
    """A one-node modifier: its input `op` a scalar initializer of its own."""
    value = numpy_helper.from_array(np.array(constant, helper.tensor_dtype_to_np_dtype(elem)), "c")
    return helper.make_graph(
        [helper.make_node(op, ["s", "c"], ["out"])], name,
        [helper.make_tensor_value_info("s", elem, None)],
        [helper.make_tensor_value_info("out", elem, None)], [value],
    )  # fmt: skip


def _model(
    heads: tuple[int, int], elem: int = TensorProto.FLOAT, **attrs: object
) -> onnx.ModelProto:
    (q_heads, kv_heads), batch, length, kv_length, size = heads, 2, 5, 7, 8
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview",
                            **attrs)  # fmt: skip
    graph = helper.make_graph([node], "flex", [
        helper.make_tensor_value_info("Q", elem, [batch, q_heads, length, size]),
        helper.make_tensor_value_info("K", elem, [batch, kv_heads, kv_length, size]),
        helper.make_tensor_value_info("V", elem, [batch, kv_heads, kv_length, 6]),
    ], [helper.make_tensor_value_info("Y", elem, [batch, q_heads, length, 6])])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                   helper.make_opsetid("ai.onnx.preview", 1)])  # fmt: skip


def _inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type))
        for i in model.graph.input
    }  # fmt: skip


@pytest.mark.parametrize("case", ["plain", "grouped", "modified", "half"])
def test_matches_the_onnx_reference(case: str) -> None:
    elem = TensorProto.FLOAT16 if case == "half" else TensorProto.FLOAT
    attrs: dict[str, object] = {}
    if case == "modified":
        attrs = {"scale": 0.5, "score_mod": _modifier("sharpen", "Mul", 1.7, elem),
                 "prob_mod": _modifier("lift", "Add", 0.1, elem)}  # fmt: skip
    model = _model((4, 2) if case in ("grouped", "modified") else (3, 3), elem, **attrs)
    inputs = _inputs(model)
    (want,) = ReferenceEvaluator(model).run(None, inputs)
    tolerance = 2e-3 if case == "half" else 1e-5
    (compiled,) = ember.compile(model).run(inputs)
    np.testing.assert_allclose(compiled.astype(np.float32), want.astype(np.float32),
                               rtol=tolerance, atol=tolerance)  # fmt: skip
    (interpreted,) = reference.run(ember.import_onnx(model), inputs)
    np.testing.assert_allclose(interpreted.astype(np.float32), want.astype(np.float32),
                               rtol=tolerance, atol=tolerance)  # fmt: skip


def test_query_heads_not_a_multiple_of_the_key_heads_is_an_error() -> None:
    with pytest.raises(EmberError, match="FlexAttention needs static head counts, Q's a multiple"):
        ember.import_onnx(_model((3, 2)))
