"""Nodes written at older opsets import into their opset-21 form and keep their
meaning: each case runs the old-opset model in onnxruntime and in Ember."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.support.models import run_onnxruntime

F = TensorProto.FLOAT
CASES = [
    # (id, opset, node, input shape, output shapes)
    ("split-attr-11", 11, helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 3]),
     [2, 4, 3], [[2, 1, 3], [2, 3, 3]]),
    ("split-equal-11", 11, helper.make_node("Split", ["x"], ["a", "b"], axis=1), [2, 4, 3],
     [[2, 2, 3], [2, 2, 3]]),
    ("slice-attr-9", 9, helper.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1],
                                         axes=[0, 2]), [4, 4, 3], [[2, 4, 2]]),
    ("slice-no-axes-9", 9, helper.make_node("Slice", ["x"], ["y"], starts=[1], ends=[100]),
     [4, 4, 3], [[3, 4, 3]]),
    ("squeeze-attr-11", 11, helper.make_node("Squeeze", ["x"], ["y"], axes=[1]), [2, 1, 3],
     [[2, 3]]),
    ("unsqueeze-attr-11", 11, helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0, 3]),
     [2, 3], [[1, 2, 3, 1]]),
    ("reduce-mean-attr-13", 13, helper.make_node("ReduceMean", ["x"], ["y"], axes=[1],
                                                 keepdims=0), [2, 4, 3], [[2, 3]]),
    ("reduce-sum-attr-11", 11, helper.make_node("ReduceSum", ["x"], ["y"], axes=[0, 2]),
     [2, 4, 3], [[1, 4, 1]]),
    ("reduce-max-all-11", 11, helper.make_node("ReduceMax", ["x"], ["y"], keepdims=0),
     [2, 4, 3], [[]]),
    ("pad-attr-10", 10, helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 1, 0], value=2.5),
     [2, 3], [[3, 4]]),
    ("pad-reflect-10", 10, helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 1],
                                            mode="reflect"), [2, 3], [[2, 5]]),
    ("clip-attr-10", 10, helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.5), [2, 3],
     [[2, 3]]),
    ("clip-max-only-10", 10, helper.make_node("Clip", ["x"], ["y"], max=0.1), [2, 3], [[2, 3]]),
    ("softmax-flatten-11", 11, helper.make_node("Softmax", ["x"], ["y"], axis=1),
     [2, 3, 2, 2], [[2, 3, 2, 2]]),
    ("softmax-default-9", 9, helper.make_node("Softmax", ["x"], ["y"]), [2, 3, 4], [[2, 3, 4]]),
    ("softmax-last-11", 11, helper.make_node("Softmax", ["x"], ["y"], axis=2), [2, 3, 4],
     [[2, 3, 4]]),
    ("logsoftmax-flatten-11", 11, helper.make_node("LogSoftmax", ["x"], ["y"], axis=1),
     [2, 3, 4], [[2, 3, 4]]),
    ("dropout-ratio-10", 10, helper.make_node("Dropout", ["x"], ["y"], ratio=0.3), [2, 3],
     [[2, 3]]),
    ("dropout-mask-unused-12", 12, helper.make_node("Dropout", ["x"], ["y", "mask"]), [2, 3],
     [[2, 3]]),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_old_opset_node_matches_onnxruntime(case) -> None:
    _, opset, node, input_shape, output_shapes = case
    outputs = [helper.make_tensor_value_info(name, F, shape)
               for name, shape in zip(node.output, output_shapes)]  # fmt: skip
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, input_shape)],
                              outputs)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)
    x = np.random.default_rng(0).standard_normal(input_shape).astype(np.float32)
    expected = run_onnxruntime(model, {"x": x})
    got = ember.reference.run(ember.import_onnx(model), [x])
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [12, 22])
def test_dropout_mask_output_is_all_true(opset: int) -> None:
    """For inference Dropout keeps every element: its mask output is all true."""
    node = helper.make_node("Dropout", ["x", "ratio"], ["y", "mask"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 3]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3])],
        [numpy_helper.from_array(np.array(0.4, np.float32), "ratio")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    expected = run_onnxruntime(model, {"x": x})
    got = ember.compile(model).run({"x": x})
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)
    assert got[1].dtype == np.bool_ and got[1].all()


def test_batch_norm_opset9_running_statistics_mean_training() -> None:
    """Before opset 14, a BatchNormalization giving its running mean and var
    is in training mode."""
    names = ["scale", "bias", "mean", "var"]
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.random(3) + 0.5).astype(np.float32), n) for n in names]
    node = helper.make_node("BatchNormalization", ["x", *names], ["y", "m", "v", "sm", "sv"],
                            momentum=0.8)  # fmt: skip
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, [2, 3, 4])],
                              [helper.make_tensor_value_info(n, F, None) for n in "ymv"],
                              inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=7)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    got = ember.reference.run(ember.import_onnx(model), [x])
    for a, b in zip(got, run_onnxruntime(model, {"x": x}), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_batch_norm_opset7_spatial() -> None:
    names = ["scale", "bias", "mean", "var"]
    rng = np.random.default_rng(0)
    inits = [helper.make_tensor(n, F, [3], (rng.random(3) + 0.5).tolist()) for n in names]
    node = helper.make_node("BatchNormalization", ["x", *names], ["y"], spatial=1, epsilon=1e-3)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", F, [2, 3, 4])], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)], ir_version=7)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(ember.reference.run(ember.import_onnx(model), [x])[0],
                               run_onnxruntime(model, {"x": x})[0], rtol=1e-5, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize(
    "attrs, expected",
    [({"value_floats": [1.0, 2.5]}, np.array([1.0, 2.5], np.float32)),
     ({"value_int": 7}, np.array(7, np.int64)),
     ({"value": helper.make_tensor("v", TensorProto.INT32, [2], [3, 4])}, np.array([3, 4], np.int32))],
)  # fmt: skip
def test_constant_forms(attrs, expected) -> None:
    node = helper.make_node("Constant", [], ["y"], **attrs)
    dtype = {np.float32: F, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}[
        expected.dtype.type
    ]
    graph = helper.make_graph(
        [node], "g", [], [helper.make_tensor_value_info("y", dtype, list(expected.shape))]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    (got,) = ember.reference.run(ember.import_onnx(model), [])
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
