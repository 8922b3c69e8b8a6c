"""Models with ops of ONNX's other domains (ai.onnx.ml, ai.onnx.preview.training):
ops are found by (domain, op type) at the domain's opset; what Ember does not
read gets one line naming the domain, op and node."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ember
from ember.dialects.graph import BinarizerOp, MomentumOp, ReluOp
from ember.errors import InvalidModelError, ModelShapeError, UnsupportedModelError

ML, TRAINING = "ai.onnx.ml", "ai.onnx.preview.training"


def _tensor(name: str, shape: list[int] | None, dtype: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(nodes, inputs, outputs, opsets: dict[str, int]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    imports = [helper.make_opsetid(domain, version) for domain, version in opsets.items()]
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


def _binarizer(opsets: dict[str, int], domain: str = ML) -> onnx.ModelProto:
    node = helper.make_node("Binarizer", ["x"], ["y"], domain=domain, threshold=0.5, name="bin")
    return _model([node], [_tensor("x", [2, 3])], [_tensor("y", [2, 3])], opsets)


def _ops(module) -> list[type]:
    return [type(op) for op in module.walk()]


def test_a_model_of_one_other_domain_imports() -> None:
    module = ember.import_onnx(_binarizer({ML: 1}))
    assert BinarizerOp in _ops(module)


def test_domains_mix_in_one_model() -> None:
    """ai.onnx Relu feeds ai.onnx.ml Binarizer (at ml opset 3, where Binarizer
    still means what opset 1 defined); compiled, it matches the reference."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Binarizer", ["r"], ["y"], domain=ML, threshold=0.5)]  # fmt: skip
    model = _model(nodes, [_tensor("x", [2, 3])], [_tensor("y", [2, 3])], {"": 21, ML: 3})
    module = ember.import_onnx(model)
    assert {ReluOp, BinarizerOp} <= set(_ops(module))
    x = np.array([[-1.0, 0.5, 0.75], [2.0, np.nan, 0.0]], np.float32)
    expected = ember.reference.run(module, [x])
    np.testing.assert_array_equal(ember.compile(model)(x)[0], expected[0])
    np.testing.assert_array_equal(expected[0], [[0, 0, 1], [1, 0, 0]])


def test_unsupported_ops_of_every_domain_are_listed_in_one_line() -> None:
    nodes = [
        helper.make_node("Binarizer", ["x"], ["a"], domain=ML),
        helper.make_node("Normalizer", ["a"], ["b"], domain=ML, name="norm"),
        helper.make_node("Gradient", ["b"], ["c"], domain=TRAINING, name="grad"),
        helper.make_node("Unique", ["c"], ["y"], name="unique"),
    ]
    model = _model(nodes, [_tensor("x", [2, 3])], [_tensor("y", None)],
                   {"": 21, ML: 5, TRAINING: 1})  # fmt: skip
    with pytest.raises(UnsupportedModelError) as error:
        ember.import_onnx(model)
    message = str(error.value)
    assert "ai.onnx.ml.Normalizer (node 'norm')" in message
    assert "ai.onnx.preview.training.Gradient (node 'grad')" in message
    assert "Unique (node 'unique')" in message
    assert "Binarizer" not in message
    assert "\n" not in message


def test_an_opset_of_the_domain_ember_does_not_read() -> None:
    with pytest.raises(UnsupportedModelError,
                       match=r"unsupported ai\.onnx\.ml opset 9 \(Ember supports ai\.onnx\.ml "
                             r"opsets 1 to 5\)"):  # fmt: skip
        ember.import_onnx(_binarizer({ML: 9}))


def test_a_domain_the_model_does_not_import() -> None:
    with pytest.raises(InvalidModelError,
                       match=r"node 'bin' \(Binarizer\): domain ai\.onnx\.ml is not among the "
                             "model's opset imports"):  # fmt: skip
        ember.import_onnx(_binarizer({"": 21}))


def test_an_ai_onnx_node_needs_an_ai_onnx_opset() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Binarizer", ["r"], ["y"], domain=ML)]  # fmt: skip
    model = _model(nodes, [_tensor("x", [2, 3])], [_tensor("y", [2, 3])], {ML: 1})
    with pytest.raises(UnsupportedModelError, match="the model imports no ai.onnx opset"):
        ember.import_onnx(model)


def _momentum(inputs: list[str], outputs: list[str], **attrs) -> onnx.ModelProto:
    values = {"R": [], "T": []}
    node = helper.make_node("Momentum", inputs, outputs, domain=TRAINING, name="step", **attrs)
    graph_inputs = [_tensor(n, values.get(n, [3]), TensorProto.INT64 if n == "T"
                            else TensorProto.FLOAT) for n in inputs]  # fmt: skip
    return _model([node], graph_inputs, [_tensor(o, [3]) for o in outputs], {TRAINING: 1})


MOMENTUM = {"alpha": 0.9, "beta": 0.1, "norm_coefficient": 0.0}


def test_an_update_rule_imports() -> None:
    model = _momentum(["R", "T", "X", "G", "V"], ["X_new", "V_new"], mode="nesterov", **MOMENTUM)
    assert MomentumOp in _ops(ember.import_onnx(model))


def test_an_update_rule_with_a_missing_state() -> None:
    model = _momentum(["R", "T", "X", "G"], ["X_new", "V_new"], mode="standard", **MOMENTUM)
    with pytest.raises(ModelShapeError,
                       match=r"node 'step' \(Momentum\): Momentum takes X, G, V for each tensor "
                             "it updates"):  # fmt: skip
        ember.import_onnx(model)


def test_an_unknown_momentum_mode() -> None:
    model = _momentum(["R", "T", "X", "G", "V"], ["X_new", "V_new"], mode="heavy", **MOMENTUM)
    with pytest.raises(
        ModelShapeError, match="mode must be one of standard, nesterov, got 'heavy'"
    ):
        ember.import_onnx(model)


def test_an_op_newer_than_the_model_s_opset_of_its_domain() -> None:
    """TreeEnsemble came with ai.onnx.ml opset 5."""
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain=ML, name="tree", tree_roots=[0])
    model = _model([node], [_tensor("x", [2, 3])], [_tensor("y", None)], {ML: 3})
    with pytest.raises(UnsupportedModelError,
                       match=r"node 'tree' \(TreeEnsemble\): Ember supports ai\.onnx\.ml\.TreeEnsemble "
                             "as ai.onnx.ml opset 5 defines it, not opset 3"):  # fmt: skip
        ember.import_onnx(model)


def test_a_missing_required_attribute() -> None:
    model = _momentum(["R", "T", "X", "G", "V"], ["X_new", "V_new"], mode="standard",
                      alpha=0.9, beta=0.1)  # fmt: skip
    with pytest.raises(InvalidModelError, match=r"node 'step' \(Momentum\): .*norm_coefficient"):
        ember.import_onnx(model)
