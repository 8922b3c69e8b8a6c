"""Gathers, scatters and triangles compiled end to end, beyond the single-op
cases of tests/lowering/test_graph_to_tensor.py: what generated code does
with index values out of range (a gather clamps, a scatter writes nothing;
never a read or write outside a buffer), symbolic sizes, and the causal
mask PyTorch's exporters build with Trilu."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ember
from ember.targets.cpu.generic import GenericModel

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], opset: int = 18) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(nodes, "indexed", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _io(name: str, elem: int, shape: list[int | str]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def test_a_gather_clamps_indices_out_of_range() -> None:
    model = _model([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
                   [_io("x", F, [2, 4]), _io("i", I64, [2, 3])], [_io("y", F, [2, 3])])  # fmt: skip
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    i = np.array([[9, -1, -9], [4, 0, 100]], np.int64)
    (y,) = ember.compile(model).run({"x": x, "i": i})
    # wrapped once (-1 -> 3, -9 -> -5), then clamped into [0, 3]
    np.testing.assert_array_equal(y, [[3, 3, 0], [7, 4, 7]])


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_a_scatter_skips_points_out_of_range(reduction: str) -> None:
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=reduction)
    model = _model([node], [_io("x", F, [4, 2]), _io("i", I64, [3, 1]), _io("u", F, [3, 2])],
                   [_io("y", F, [4, 2])])  # fmt: skip
    x = np.zeros((4, 2), np.float32)
    u = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    i = np.array([[4], [-1], [-5]], np.int64)  # only -1 (row 3) is in range
    (y,) = ember.compile(model).run({"x": x, "i": i, "u": u})
    np.testing.assert_array_equal(y, [[0, 0], [0, 0], [0, 0], [3, 4]])


def test_repeated_targets_accumulate_in_order() -> None:
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], reduction="mul")
    model = _model([node], [_io("x", F, [3]), _io("i", I64, [5]), _io("u", F, [5])],
                   [_io("y", F, [3])])  # fmt: skip
    feeds = {"x": np.array([1, 2, 3], np.float32), "i": np.array([0, 0, -3, 2, 0], np.int64),
             "u": np.array([2, 3, 5, 7, 0.5], np.float32)}  # fmt: skip
    (y,) = ember.compile(model).run(feeds)
    np.testing.assert_array_equal(y, [15, 2, 21])


def _causal_attention_scores() -> onnx.ModelProto:
    """softmax(scores masked above the diagonal), the mask Trilu(ones(S, S), k=1)
    as PyTorch's legacy exporter writes it: Shape -> ConstantOfShape -> Trilu
    -> Cast(bool) -> Where(-inf)."""
    n = helper.make_node
    nodes = [
        n("Shape", ["scores"], ["shape"], start=2),
        n("ConstantOfShape", ["shape"], ["ones"],
          value=helper.make_tensor("one", F, [1], [1.0])),
        n("Constant", [], ["k"], value=helper.make_tensor("k", I64, [], [1])),
        n("Trilu", ["ones", "k"], ["upper"], upper=1),
        n("Cast", ["upper"], ["masked"], to=TensorProto.BOOL),
        n("Constant", [], ["minus_inf"], value=helper.make_tensor("m", F, [], [-np.inf])),
        n("Where", ["masked", "minus_inf", "scores"], ["kept"]),
        n("Softmax", ["kept"], ["probs"], axis=-1),
    ]  # fmt: skip
    return _model(
        nodes, [_io("scores", F, ["B", 2, "S", "S"])], [_io("probs", F, ["B", 2, "S", "S"])]
    )


@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (2, 5), (1, 9)])
def test_a_causal_mask_at_every_sequence_length(batch: int, seq: int) -> None:
    model = _causal_attention_scores()
    compiled = ember.compile(model)
    assert isinstance(compiled, GenericModel)
    scores = np.random.default_rng(seq).standard_normal((batch, 2, seq, seq)).astype(np.float32)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, {"scores": scores})
    (got,) = compiled.run({"scores": scores})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_gathers_and_scatters_on_symbolic_sizes() -> None:
    """GatherND with run-time (index, position) pairs, as the dynamo
    exporter's attention-mask lookup, and a ScatterElements along a symbolic
    axis: one compiled model for every N."""
    n = helper.make_node
    nodes = [n("GatherND", ["x", "pairs"], ["picked"]),
             n("ScatterElements", ["x", "i", "u"], ["scattered"], axis=0, reduction="add")]  # fmt: skip
    model = _model(nodes, [_io("x", F, ["N", 6]), _io("pairs", I64, [5, 2]),
                           _io("i", I64, [3, 6]), _io("u", F, [3, 6])],
                   [_io("picked", F, [5]), _io("scattered", F, ["N", 6])])  # fmt: skip
    compiled = ember.compile(model)
    assert isinstance(compiled, GenericModel)
    session = ort.InferenceSession(model.SerializeToString())
    for rows in (1, 4, 11):
        rng = np.random.default_rng(rows)
        feeds = {
            "x": rng.standard_normal((rows, 6)).astype(np.float32),
            "pairs": np.stack([rng.integers(-rows, rows, 5), rng.integers(0, 6, 5)], -1),
            "i": rng.integers(-rows, rows, (3, 6)),
            "u": rng.standard_normal((3, 6)).astype(np.float32),
        }
        for got, expected in zip(compiled.run(feeds), session.run(None, feeds), strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
