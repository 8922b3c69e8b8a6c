"""Every error the public API documents (`ember.errors`, and `InputError` of
a compiled model's calls) reaches the caller as that `EmberError` subclass:
one line, the diagnostic as its message, no other exception chained to it.

The table holds one way to provoke each class through `ember.import_onnx`,
`ember.compile` or a compiled model's call; a documented class without a row
fails `test_every_documented_error_has_a_case`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

import ember
import ember.errors
from ember.targets.calls import InputError


def _model(nodes, inputs, outputs, initializers=()) -> ModelProto:  # noqa: ANN001
    graph = helper.make_graph(nodes, "errors", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _info(name: str, shape: list[int] | None, dtype: int = TensorProto.FLOAT):  # noqa: ANN202
    return helper.make_tensor_value_info(name, dtype, shape)


def _relu(shape: list[int]) -> ModelProto:
    return _model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                  [_info("x", shape)], [_info("y", shape)])  # fmt: skip


def _missing_file(tmp_path: Path) -> None:
    ember.compile(str(tmp_path / "missing.onnx"))


def _negative_dim(_: Path) -> None:
    ember.import_onnx(_relu([-5, 3]))


def _unknown_op(_: Path) -> None:
    node = helper.make_node("Frobnicate", ["x"], ["y"], name="odd", domain="com.example")
    model = _model([node], [_info("x", [2])], [_info("y", [2])])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    ember.import_onnx(model)


def _mismatched_add(_: Path) -> None:
    node = helper.make_node("Add", ["a", "b"], ["y"], name="add")
    ember.import_onnx(_model([node], [_info("a", [2, 3]), _info("b", [4, 5])], [_info("y", None)]))


def _huge_input(_: Path) -> None:
    ember.import_onnx(_relu([2**20, 2**20]))


def _gather_out_of_range(_: Path) -> None:
    index = numpy_helper.from_array(np.array([0, 7], dtype=np.int64), "index")
    node = helper.make_node("Gather", ["x", "index"], ["y"], name="gather", axis=0)
    ember.compile(_model([node], [_info("x", [4, 3])], [_info("y", [2, 3])], [index]))


def _slice_starts_from_input(_: Path) -> None:
    node = helper.make_node("Slice", ["x", "starts", "ends"], ["y"], name="slice")
    inputs = [_info("x", [4]), _info("starts", [1], TensorProto.INT64),
              _info("ends", [1], TensorProto.INT64)]  # fmt: skip
    ember.compile(_model([node], inputs, [_info("y", None)]))


def _wrong_input_shape(_: Path) -> None:
    ember.compile(_relu([2, 3]))(np.zeros((3, 2), np.float32))


CASES: dict[type[ember.EmberError], tuple[Callable[[Path], None], str]] = {
    ember.errors.ModelLoadError: (_missing_file, r"missing\.onnx"),
    ember.errors.InvalidModelError: (_negative_dim, r"graph input 'x' declares dimension 0 as -5"),
    ember.errors.UnsupportedModelError: (_unknown_op, r"Frobnicate"),
    ember.errors.ModelShapeError: (_mismatched_add, r"node 'add' \(Add\)"),
    ember.errors.TensorTooLargeError: (_huge_input, r"input 'x': a tensor of shape 1048576x1048576"),
    ember.errors.CompileError: (_gather_out_of_range, r"constant index 7 of %y is out of range"),
    ember.errors.InputDependentError: (_slice_starts_from_input, r"'y' has a dynamic shape"),
    InputError: (_wrong_input_shape, r"'x'"),
}  # fmt: skip


def test_every_documented_error_has_a_case() -> None:
    documented = {
        cls
        for _, cls in inspect.getmembers(ember.errors, inspect.isclass)
        if issubclass(cls, ember.EmberError) and cls.__module__ == "ember.errors"
    }
    assert documented - {ember.EmberError} <= set(CASES)


@pytest.mark.parametrize("error_type", list(CASES), ids=lambda cls: cls.__name__)
def test_public_api_raises_the_documented_error(
    error_type: type[ember.EmberError], tmp_path: Path
) -> None:
    provoke, pattern = CASES[error_type]
    with pytest.raises(ember.EmberError, match=pattern) as error:
        provoke(tmp_path)
    assert type(error.value) is error_type, f"{type(error.value).__name__}: {error.value}"
    assert "\n" not in str(error.value)
    chained = error.value.__cause__ or (
        None if error.value.__suppress_context__ else error.value.__context__
    )
    assert chained is None, f"chained {type(chained).__name__}: {chained}"
