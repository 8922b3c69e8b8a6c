"""Adversarial models: each ends in one EmberError naming the file, node or
tensor (and `ember import` prints one `error:` line and exits 1), never a
traceback, a hang, a huge allocation or a silently accepted invalid model."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import ember
from ember.cli import main
from ember.errors import (
    EmberError,
    InvalidModelError,
    ModelLoadError,
    ModelShapeError,
    TensorTooLargeError,
    UnsupportedModelError,
)
from ember.inputs import random_array

Model = onnx.ModelProto


def _model(nodes, inputs, outputs, initializers=(), opset=17) -> Model:
    graph = helper.make_graph(nodes, "adversary", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _info(name: str, shape: list[int] | None, dtype: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _const(name: str, values: list[int] | int) -> TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _add_weight(weight: TensorProto) -> Model:
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    return _model([node], [_info("x", [4])], [_info("y", [4])], [weight])


# ------------------------------------------------------------ tensor data


def _short_raw_data() -> Model:
    weight = numpy_helper.from_array(np.ones(4, np.float32), "w")
    weight.raw_data = weight.raw_data[:10]
    return _add_weight(weight)


def _short_float_data() -> Model:
    weight = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    weight.dims[:] = [4]
    return _add_weight(weight)


def _weight_of_type(data_type: int) -> Callable[[], Model]:
    def build() -> Model:
        weight = numpy_helper.from_array(np.ones(4, np.float32), "w")
        weight.data_type = data_type
        return _add_weight(weight)

    return build


def _input_of_type(data_type: int) -> Callable[[], Model]:
    def build() -> Model:
        node = helper.make_node("Relu", ["x"], ["y"], name="relu")
        return _model([node], [_info("x", [4], data_type)], [_info("y", [4])])

    return build


def _cast_to(data_type: int) -> Callable[[], Model]:
    def build() -> Model:
        node = helper.make_node("Cast", ["x"], ["y"], to=data_type, name="cast")
        return _model([node], [_info("x", [4])], [_info("y", [4])])

    return build


def _constant_node_of_type_999() -> Model:
    value = numpy_helper.from_array(np.ones(4, np.float32), "v")
    value.data_type = 999
    node = helper.make_node("Constant", [], ["c"], value=value, name="const")
    add = helper.make_node("Add", ["x", "c"], ["y"], name="add")
    return _model([node, add], [_info("x", [4])], [_info("y", [4])])


# ------------------------------------------------------------- attributes


def _concat(**attrs: object) -> Model:
    node = helper.make_node("Concat", ["x", "x"], ["y"], name="cat", **attrs)
    return _model([node], [_info("x", [4])], [_info("y", [8])])


def _conv_strides_int() -> Model:
    weight = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], strides=2, name="conv")
    return _model([node], [_info("x", [1, 1, 8, 8])], [_info("y", [1, 1, 3, 3])], [weight])


def _pad(mode: object, pads: list[int], shape: list[int], out: list[int]) -> Model:
    node = helper.make_node("Pad", ["x", "p"], ["y"], mode=mode, name="pad")
    return _model([node], [_info("x", shape)], [_info("y", out)], [_const("p", pads)])


def _gather_axis_tensor() -> Model:
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="gather")
    axis = helper.make_attribute("axis", numpy_helper.from_array(np.array(0, np.int64)))
    assert axis.type == AttributeProto.TENSOR
    node.attribute.append(axis)
    return _model([node], [_info("x", [2, 4])], [_info("y", [1, 4])], [_const("i", [0])])


def _maxpool_pads_as_large_as_kernel() -> Model:
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[2, 2, 2, 2], name="pool"
    )
    return _model([node], [_info("x", [1, 1, 4, 4])], [_info("y", [1, 1, 7, 7])])


# -------------------------------------------------------- graph structure


def _two_writers() -> Model:
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="first"),
        helper.make_node("Neg", ["x"], ["y"], name="second"),
    ]
    return _model(nodes, [_info("x", [4])], [_info("y", [4])])


def _redefines_input() -> Model:
    nodes = [
        helper.make_node("Relu", ["x"], ["x"], name="clobber"),
        helper.make_node("Neg", ["x"], ["y"], name="neg"),
    ]
    return _model(nodes, [_info("x", [4])], [_info("y", [4])])


def _redefines_initializer() -> Model:
    nodes = [
        helper.make_node("Relu", ["x"], ["w"], name="clobber"),
        helper.make_node("Add", ["x", "w"], ["y"], name="add"),
    ]
    weight = numpy_helper.from_array(np.ones(4, np.float32), "w")
    return _model(nodes, [_info("x", [4])], [_info("y", [4])], [weight])


# ------------------------------------------------------ sizes and shapes


def _sized(op: str, sizes: list[int], shape: list[int], out: list[int]) -> Model:
    node = helper.make_node(op, ["x", "s"], ["y"], name=op.lower())
    return _model([node], [_info("x", shape)], [_info("y", out)], [_const("s", sizes)])


def _huge_range() -> Model:
    bounds = [_const("start", 0), _const("limit", 10**12), _const("delta", 1)]
    nodes = [
        helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range"),
        helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT, name="cast"),
    ]
    return _model(nodes, [], [_info("y", [10**12])], bounds)


def _huge_constant_of_shape() -> Model:
    nodes = [
        helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"),
        helper.make_node("Add", ["c", "x"], ["y"], name="add"),
    ]
    return _model(nodes, [_info("x", [1])], [_info("y", [2**40])], [_const("s", [2**40])])


def _huge_input() -> Model:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    return _model([node], [_info("x", [2**20, 2**20])], [_info("y", [2**20, 2**20])])


def _negative_input_dim() -> Model:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    return _model([node], [_info("x", [-5, 3])], [_info("y", [-5, 3])])


def _shows_no_chain(error: BaseException) -> bool:
    """Python prints no other exception ("During handling of ...") with it."""
    return error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


CASES: dict[str, tuple[Callable[[], Model], type[EmberError], str]] = {
    "short raw_data": (_short_raw_data, InvalidModelError, r"initializer 'w': .*raw_data size"),
    "short float_data": (_short_float_data, InvalidModelError, r"initializer 'w': .*float_data"),
    "weight UNDEFINED": (_weight_of_type(0), InvalidModelError, r"initializer 'w': .*UNDEFINED"),
    "weight type 999": (_weight_of_type(999), UnsupportedModelError, r"initializer 'w': .*999"),
    "input UNDEFINED": (_input_of_type(0), UnsupportedModelError, r"input 'x': .*UNDEFINED"),
    "input type 999": (_input_of_type(999), UnsupportedModelError, r"input 'x': .*type 999"),
    "Cast to UNDEFINED": (_cast_to(0), UnsupportedModelError, r"node 'cast' \(Cast\):.*UNDEF"),
    "Cast to 999": (_cast_to(999), UnsupportedModelError, r"node 'cast' \(Cast\): .*type 999"),
    "Constant of type 999": (
        _constant_node_of_type_999, UnsupportedModelError,
        r"node 'const' \(Constant\): attribute 'value': .*type 999",
    ),
    "Concat without axis": (
        lambda: _concat(), InvalidModelError, r"node 'cat' \(Concat\): Required attribute 'axis'"
    ),
    "Concat axis FLOAT": (
        lambda: _concat(axis=0.0), InvalidModelError,
        r"node 'cat' \(Concat\): Mismatched attribute type .*Expected: 'INT', actual: 'FLOAT'",
    ),
    "Conv strides INT": (
        _conv_strides_int, InvalidModelError,
        r"node 'conv' \(Conv\): Mismatched attribute type .*Expected: 'INTS', actual: 'INT'",
    ),
    "Pad mode INT": (
        lambda: _pad(3, [0, 1, 0, 1], [2, 4], [2, 6]), InvalidModelError,
        r"node 'pad' \(Pad\): Mismatched attribute type .*'STRING', actual: 'INT'",
    ),
    "Pad mode not UTF-8": (
        lambda: _pad(b"\xff\xfe", [0, 1, 0, 1], [2, 4], [2, 6]), InvalidModelError,
        r"node 'pad' \(Pad\): attribute 'mode': .* not valid UTF-8",
    ),
    "Gather axis TENSOR": (
        _gather_axis_tensor, InvalidModelError,
        r"node 'gather' \(Gather\): Mismatched attribute type .*actual: 'TENSOR'",
    ),
    "MaxPool pads >= kernel": (
        _maxpool_pads_as_large_as_kernel, ModelShapeError,
        r"node 'pool' \(MaxPool\): pads \[2, 2, 2, 2\] must be smaller than kernel_shape",
    ),
    "reflect Pad wider than axis": (
        lambda: _pad("reflect", [0, 4, 0, 0], [2, 4], [2, 8]), ModelShapeError,
        r"node 'pad' \(Pad\): reflect pads \[4, 0\] of axis 1 must be smaller than its extent 4",
    ),
    "edge Pad of an empty axis": (
        lambda: _pad("edge", [0, 1, 0, 1], [2, 0], [2, 2]), ModelShapeError,
        r"node 'pad' \(Pad\): edge padding of axis 1 needs elements",
    ),
    "two nodes write one value": (
        _two_writers, InvalidModelError,
        r"node 'second' \(Neg\): output 'y' is already defined by node 'first' \(Relu\)",
    ),
    "node redefines an input": (
        _redefines_input, InvalidModelError,
        r"node 'clobber' \(Relu\): output 'x' is already defined by graph input 'x'",
    ),
    "node redefines an initializer": (
        _redefines_initializer, InvalidModelError,
        r"node 'clobber' \(Relu\): output 'w' is already defined by initializer 'w'",
    ),
    "Expand to a negative size": (
        lambda: _sized("Expand", [-2, 4], [4], [2, 4]), ModelShapeError,
        r"node 'expand' \(Expand\): shape must be non-negative, got \[-2, 4\]",
    ),
    "Tile by a negative count": (
        lambda: _sized("Tile", [-2], [4], [8]), ModelShapeError,
        r"node 'tile' \(Tile\): repeats must be non-negative, got \[-2\]",
    ),
    "Range of 1e12 elements": (
        _huge_range, TensorTooLargeError,
        r"node 'range' \(Range\): output 'r': .*1000000000000 elements.*limit of 16 GiB",
    ),
    "ConstantOfShape [2^40]": (
        _huge_constant_of_shape, TensorTooLargeError,
        r"node 'fill' \(ConstantOfShape\): output 'c': .*1099511627776 elements",
    ),
    "input dim -5": (
        _negative_input_dim, InvalidModelError,
        r"graph input 'x' declares dimension 0 as -5; a dimension is a size",
    ),
    "2^20 x 2^20 input": (
        _huge_input, TensorTooLargeError, r"input 'x': a tensor of shape 1048576x1048576"
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_bad_model_is_one_named_error(case: str) -> None:
    build, error_type, pattern = CASES[case]
    with pytest.raises(error_type, match=pattern) as error:
        ember.import_onnx(build())
    assert "\n" not in str(error.value)
    assert _shows_no_chain(error.value)
    assert str(error.value).startswith("adversary: ")


CLI_CASES = [
    "short raw_data",
    "weight type 999",
    "Concat axis FLOAT",
    "Gather axis TENSOR",
    "two nodes write one value",
    "MaxPool pads >= kernel",
    "Range of 1e12 elements",
    "input dim -5",
]


@pytest.mark.parametrize("case", CLI_CASES)
@pytest.mark.parametrize("command", ["import", "run"])
def test_cli_prints_one_error_line(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, _, pattern = CASES[case]
    path = tmp_path / "bad.onnx"
    path.write_bytes(build().SerializeToString())
    assert main([command, str(path)]) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), captured.err
    assert captured.out == ""


def test_compile_reports_the_same_errors() -> None:
    with pytest.raises(InvalidModelError, match=r"node 'cat' \(Concat\): Mismatched"):
        ember.compile(_concat(axis=0.0))


def test_compile_errors_from_passes_are_ember_errors() -> None:
    """A pass's diagnostic reaches the Python API as an `EmberError` whose
    message is the diagnostic, without xDSL's exception chained to it."""
    index = numpy_helper.from_array(np.array([0, 7], dtype=np.int64), "index")
    node = helper.make_node("Gather", ["x", "index"], ["y"], name="gather", axis=0)
    model = _model([node], [_info("x", [4, 3])], [_info("y", [2, 3])], [index])
    with pytest.raises(EmberError, match=r"constant index 7 of %y is out of range") as error:
        ember.compile(model)
    assert "\n" not in str(error.value)
    assert _shows_no_chain(error.value)


# ------------------------------------------------------------ names


def _with_bytes_replaced(old: bytes, new: bytes) -> bytes:
    node = helper.make_node("Relu", ["xx"], ["yy"], name="nn")
    data = _model([node], [_info("xx", [4])], [_info("yy", [4])]).SerializeToString()
    assert data.count(old) >= 1
    return data.replace(old, new)


@pytest.mark.parametrize(
    ("old", "pattern"),
    [
        (b"xx", r"<bytes>: graph input name b'\\xff\\xfe' is not valid UTF-8"),
        (b"nn", r"<bytes>: node #0 \(Relu\): name b'\\xff\\xfe' is not valid UTF-8"),
        (b"yy", r"<bytes>: graph output name b'\\xff\\xfe' is not valid UTF-8"),
    ],
)
def test_names_that_are_not_utf8(old: bytes, pattern: str) -> None:
    with pytest.raises(InvalidModelError, match=pattern):
        ember.import_onnx(_with_bytes_replaced(old, b"\xff\xfe"))


# ------------------------------------------------------------- sources


@pytest.mark.parametrize("source", [None, 12345, 1.5, ["model.onnx"]])
def test_sources_of_the_wrong_kind(source: object) -> None:
    pattern = f"expected a model path, serialized bytes or an onnx.ModelProto, got {type(source).__name__}"
    with pytest.raises(ModelLoadError, match=pattern):
        ember.import_onnx(source)  # type: ignore[arg-type]
    with pytest.raises(ModelLoadError, match=pattern):
        ember.compile(source)  # type: ignore[arg-type]


def test_dev_zero_is_refused_before_reading(capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    with pytest.raises(ModelLoadError, match="/dev/zero: is not a regular file"):
        ember.import_onnx("/dev/zero")
    assert main(["import", "/dev/zero"]) == 1
    assert capsys.readouterr().err.startswith("error: /dev/zero: is not a regular file")


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    # Nobody writes to the FIFO: a blocking open would hang this test.
    with pytest.raises(ModelLoadError, match=r"model\.onnx: is not a regular file"):
        ember.import_onnx(fifo)


def test_file_over_the_protobuf_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.onnx"
    with path.open("wb") as file:
        file.truncate(2**31)  # sparse: no disk space used, nothing to read
    with pytest.raises(ModelLoadError, match=r"huge\.onnx: is 2147483648 bytes, over ONNX's 2 GiB"):
        ember.import_onnx(path)


def _external_weight_model() -> Model:
    weight = numpy_helper.from_array(np.ones(4, np.float32), "w")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    return _add_weight(weight)


@pytest.mark.parametrize("form", ["proto", "bytes"])
def test_external_data_without_a_directory_is_refused(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The data file sits in the working directory: it must not be read from there.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights.bin").write_bytes(np.ones(4, np.float32).tobytes())
    model = _external_weight_model()
    source = model if form == "proto" else model.SerializeToString()
    where = "adversary" if form == "proto" else "<bytes>"
    pattern = f"{where}: tensor 'w' keeps its data in external file 'weights.bin'.*no directory"
    with pytest.raises(ModelLoadError, match=pattern):
        ember.import_onnx(source)
    with pytest.raises(ModelLoadError, match=pattern):
        ember.compile(source)


def test_external_data_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "m.onnx"
    path.write_bytes(_external_weight_model().SerializeToString())
    os.mkfifo(tmp_path / "weights.bin")
    with pytest.raises(ModelLoadError, match="external data 'weights.bin' is not a regular file"):
        ember.import_onnx(path)


# ------------------------------------------------------- allocation limits


def test_random_input_over_the_limit_is_refused_before_allocating() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(TensorTooLargeError, match="1048576x1048576 holds 1099511627776 elements"):
        random_array([2**20, 2**20], np.dtype(np.float32), rng)
    assert random_array([2, 3], np.dtype(np.float32), rng).shape == (2, 3)


def test_input_shape_override_over_the_limit(tmp_path: Path) -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    model = _model([node], [_info("x", [2])], [_info("y", [2])])
    with pytest.raises(TensorTooLargeError, match="input 'x': a tensor of shape 1099511627776"):
        ember.import_onnx(model, {"x": [2**40]})


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"threads": 0}, "threads must be an integer from 1 to 1024, got 0"),
        ({"threads": "4"}, "threads must be an integer from 1 to 1024, got '4'"),
        ({"opt_level": 3}, "opt_level must be 0, 1 or 2, got 3"),
        ({"disabled": "loop-fuse"}, "disabled must be a sequence of pass names"),
        ({"target": "tpu"}, "target 'tpu' is not available"),
    ],
)
def test_compile_argument_checks(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(EmberError, match=pattern):
        ember.compile(_concat(axis=0), **kwargs)  # type: ignore[arg-type]
