"""A compiled model checks what it is given, and never reads out of bounds."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ember
from ember.compiler import InputError
from ember.errors import CompileError, InputDependentError


@pytest.fixture(scope="module")
def add_model() -> ember.CompiledModel:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["z"])], "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return ember.compile(model)


def test_positional_and_by_name(add_model: ember.CompiledModel) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    (z,) = add_model(x, y)
    np.testing.assert_array_equal(z, x + y)
    (z,) = add_model.run({"y": y, "x": x})
    np.testing.assert_array_equal(z, x + y)


def test_non_contiguous_input_is_copied(add_model: ember.CompiledModel) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)[:2, :3]
    assert not x.flags.c_contiguous
    (z,) = add_model(x, np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(z, x)


@pytest.mark.parametrize(
    "arrays, message",
    [((np.zeros((2, 3), np.float32),), "takes 2 inputs"),
     ((np.zeros((2, 3), np.float64), np.zeros((2, 3), np.float32)), "got dtype float64"),
     ((np.zeros((3, 2), np.float32), np.zeros((2, 3), np.float32)), "got shape"),
     (([[1.0]], np.zeros((2, 3), np.float32)), "expected a NumPy array")],
)  # fmt: skip
def test_bad_inputs(add_model: ember.CompiledModel, arrays, message: str) -> None:
    with pytest.raises(InputError, match=message):
        add_model(*arrays)


def test_bad_names(add_model: ember.CompiledModel) -> None:
    with pytest.raises(InputError, match=r"missing \['y'\], unknown \['w'\]"):
        add_model.run({"x": np.zeros((2, 3), np.float32), "w": np.zeros((2, 3), np.float32)})


def test_dynamic_shapes_compile_once_or_are_pinned() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    generic = ember.compile(model)
    for batch in (1, 4, 7):
        x = np.linspace(-1, 1, 3 * batch, dtype=np.float32).reshape(batch, 3)
        np.testing.assert_array_equal(generic(x)[0], np.maximum(x, 0))
    compiled = ember.compile(model, input_shapes={"x": [4, 3]})
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(compiled(x)[0], np.maximum(x, 0))
    with pytest.raises(InputError, match="got shape"):
        compiled(np.zeros((5, 3), np.float32))


def _one_node_model(
    node: onnx.NodeProto, inputs: list, output: onnx.ValueInfoProto
) -> onnx.ModelProto:
    graph = helper.make_graph([node], "one", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.mark.parametrize(
    "node, inputs, output",
    [  # axes computed at run time: the importer cannot know the result's rank
     (helper.make_node("Squeeze", ["x", "axes"], ["y"]),
      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3]),
       helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
      helper.make_tensor_value_info("y", TensorProto.FLOAT, None)),
     # Slice starts as an input: the lowering needs them as constants
     (helper.make_node("Slice", ["x", "starts", "ends"], ["y"]),
      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
       helper.make_tensor_value_info("starts", TensorProto.INT64, [1]),
       helper.make_tensor_value_info("ends", TensorProto.INT64, [1])],
      helper.make_tensor_value_info("y", TensorProto.FLOAT, None))],
)  # fmt: skip
def test_input_dependent_models_raise_their_own_error(node, inputs, output) -> None:
    """The ONNX backend specialises exactly these models on their inputs; other
    compile errors (an op without a lowering) are not input dependent."""
    with pytest.raises(InputDependentError):
        ember.compile(_one_node_model(node, inputs, output))


def test_an_unsupported_operand_type_is_not_input_dependent() -> None:
    node = helper.make_node("Pow", ["x", "y"], ["z"])
    inputs = [helper.make_tensor_value_info(n, TensorProto.UINT32, [2]) for n in ("x", "y")]
    output = helper.make_tensor_value_info("z", TensorProto.UINT32, [2])
    with pytest.raises(CompileError) as error:
        ember.compile(_one_node_model(node, inputs, output))
    assert not isinstance(error.value, InputDependentError)
