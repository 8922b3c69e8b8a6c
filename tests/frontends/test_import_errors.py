"""Bad models get one clear error naming the file and node, never a traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.errors import (
    InvalidModelError,
    ModelLoadError,
    ModelShapeError,
    UnsupportedModelError,
)
from tests.support.models import light_model_path


def _model(nodes, inputs, outputs, initializers=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _tensor(name: str, shape: list[int], dtype: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"missing\.onnx: no such file"):
        ember.import_onnx(tmp_path / "missing.onnx")


def test_garbage_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\xff\xfe this is not a protobuf \x00\x01" * 10)
    with pytest.raises(ModelLoadError, match=r"garbage\.onnx: not a valid ONNX"):
        ember.import_onnx(path)


def test_truncated_protobuf(tmp_path: Path) -> None:
    data = light_model_path("squeezenet").read_bytes()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError, match=r"truncated\.onnx: not a valid ONNX"):
        ember.import_onnx(path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    with pytest.raises(ModelLoadError, match="empty"):
        ember.import_onnx(path)


def test_every_unsupported_op_is_listed_with_its_nodes() -> None:
    model = _model(
        [
            helper.make_node("Relu", ["x"], ["a"], name="ok"),
            helper.make_node("NonMaxSuppression", ["a", "a"], ["b"], name="nms1"),
            helper.make_node("Unique", ["a"], ["c"], name="unique"),
            helper.make_node("NonMaxSuppression", ["c", "c"], ["d"], name="nms2"),
            helper.make_node("FancyOp", ["d"], ["y"], domain="com.example", name="fancy"),
        ],
        [_tensor("x", [1, 4])], [_tensor("y", [1, 4])],
    )  # fmt: skip
    with pytest.raises(UnsupportedModelError) as error:
        ember.import_onnx(model)
    message = str(error.value)
    assert "NonMaxSuppression (nodes 'nms1', 'nms2')" in message
    assert "Unique (node 'unique')" in message
    assert "com.example.FancyOp (node 'fancy')" in message
    assert "\n" not in message


@pytest.mark.parametrize("opset", [5, 99])
def test_unsupported_opset(opset: int) -> None:
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])], [_tensor("x", [2])], [_tensor("y", [2])]
    )
    model.opset_import[0].version = opset
    with pytest.raises(UnsupportedModelError, match=f"unsupported opset {opset}"):
        ember.import_onnx(model)


def test_an_old_opset_whose_ops_are_unchanged_since_opset_7_imports() -> None:
    """Not and Add (schemas from opsets 1 and 7) mean at opset 1 what they mean
    at opset 7; Relu (revised at opset 6) does not, so that model is refused."""
    model = _model(
        [helper.make_node("Not", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.BOOL, [3])],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [3])], opset=1,
    )  # fmt: skip
    x = np.array([True, False, True])
    np.testing.assert_array_equal(ember.compile(model).run({"x": x})[0], ~x)
    changed = _model([helper.make_node("Relu", ["x"], ["y"])], [_tensor("x", [2])],
                     [_tensor("y", [2])], opset=1)  # fmt: skip
    with pytest.raises(UnsupportedModelError, match="unsupported opset 1"):
        ember.import_onnx(changed)


def test_inconsistent_shapes_name_the_node() -> None:
    model = _model(
        [helper.make_node("Add", ["x", "y"], ["z"], name="the_add")],
        [_tensor("x", [3, 4]), _tensor("y", [5, 4])], [_tensor("z", [3, 4])],
    )  # fmt: skip
    with pytest.raises(
        ModelShapeError, match=r"node 'the_add' \(Add\): operands are not broadcast"
    ):
        ember.import_onnx(model)


def test_declared_output_shape_disagreeing_with_graph() -> None:
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])], [_tensor("x", [3, 4])], [_tensor("y", [4, 3])]
    )
    with pytest.raises(ModelShapeError, match="output 'y' is declared 4x3"):
        ember.import_onnx(model)


def test_conv_channel_mismatch() -> None:
    weight = numpy_helper.from_array(np.zeros((8, 4, 3, 3), np.float32), "w")
    model = _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")],
        [_tensor("x", [1, 3, 8, 8])], [_tensor("y", [1, 8, 6, 6])], [weight],
    )  # fmt: skip
    with pytest.raises(ModelShapeError, match=r"node 'conv1' \(Conv\): input channels \(3\)"):
        ember.import_onnx(model)


def test_unknown_attribute_is_rejected() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"], name="r", bogus=3)],
                   [_tensor("x", [2])], [_tensor("y", [2])])  # fmt: skip
    # Not an attribute of Relu in any opset: the model is invalid, not unsupported.
    with pytest.raises(
        InvalidModelError, match=r"node 'r' \(Relu\): Unrecognized attribute: bogus"
    ):
        ember.import_onnx(model)


def test_used_extra_output_is_rejected() -> None:
    """BatchNormalization-9's saved_mean (training only) has no counterpart
    in opset 15, which Ember models."""
    model = _model(
        [helper.make_node("BatchNormalization", ["x", "s", "s", "s", "s"],
                          ["y", "mean", "var", "saved_mean", "saved_var"], name="bn"),
         helper.make_node("Identity", ["saved_mean"], ["z"])],
        [_tensor("x", [1, 2, 4, 4]), _tensor("s", [2])], [_tensor("z", [2])], opset=9,
    )  # fmt: skip
    with pytest.raises(UnsupportedModelError, match="output 'saved_mean' is used"):
        ember.import_onnx(model)


def test_running_statistics_need_training_mode() -> None:
    model = _model(
        [helper.make_node("BatchNormalization", ["x", "s", "s", "s", "s"], ["y", "mean", "var"],
                          name="bn")],
        [_tensor("x", [1, 2, 4, 4]), _tensor("s", [2])], [_tensor("mean", [2])], opset=15,
    )  # fmt: skip
    with pytest.raises(ModelShapeError, match="node 'bn'.*outputs of training mode"):
        ember.import_onnx(model)


def test_undefined_input_is_reported() -> None:
    model = _model([helper.make_node("Relu", ["nowhere"], ["y"], name="r")],
                   [_tensor("x", [2])], [_tensor("y", [2])])  # fmt: skip
    with pytest.raises(ModelLoadError, match="input 'nowhere' is not produced"):
        ember.import_onnx(model)


def _external_model(tmp_path: Path, location: str) -> Path:
    weight = numpy_helper.from_array(np.ones(4, np.float32), "w")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", location
    model = _model([helper.make_node("Add", ["x", "w"], ["y"])],
                   [_tensor("x", [4])], [_tensor("y", [4])], [weight])  # fmt: skip
    path = tmp_path / "model" / "m.onnx"
    path.parent.mkdir()
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "sub/../../secret.bin"])
def test_external_data_outside_the_model_directory_is_refused(
    tmp_path: Path, location: str
) -> None:
    (tmp_path / "secret.bin").write_bytes(np.ones(4, np.float32).tobytes())
    path = _external_model(tmp_path, location)
    with pytest.raises(ModelLoadError, match="outside the model's directory; refusing"):
        ember.import_onnx(path)


def test_external_data_inside_the_directory_loads(tmp_path: Path) -> None:
    path = _external_model(tmp_path, "weights.bin")
    (path.parent / "weights.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    module = ember.import_onnx(path)
    (y,) = ember.reference.run(module, [np.zeros(4, np.float32)])
    np.testing.assert_array_equal(y, np.arange(4, dtype=np.float32))


def test_symlink_escaping_the_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.bin").write_bytes(np.ones(4, np.float32).tobytes())
    path = _external_model(tmp_path, "link.bin")
    (path.parent / "link.bin").symlink_to(tmp_path / "secret.bin")
    with pytest.raises(ModelLoadError, match="refusing"):
        ember.import_onnx(path)
