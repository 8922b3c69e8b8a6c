"""Models with symbolic dims compiled as static versions: each runs and
matches onnxruntime, the entry check binds the symbols from the inputs and
names what is wrong, and the choice of version follows the sizes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.compiler import InputError
from ember.targets.versions import VersionedModel

RNG = np.random.default_rng(0)


def _attention_like() -> onnx.ModelProto:
    """x[batch, seq, 16] -> MatMul -> split into 4 heads by a Reshape whose shape
    is computed from Shape(x) -> Softmax; and a strided Conv + MaxPool on img."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "zero", "two"], ["batch_and_sequence"]),
        helper.make_node("Concat", ["batch_and_sequence", "heads"], ["split"], axis=0),
        helper.make_node("Reshape", ["y", "split"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Softmax", ["t"], ["out"], axis=-1),
        helper.make_node("Conv", ["img", "k"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[3, 3], strides=[2, 2]),
    ]
    weights = [
        numpy_helper.from_array(RNG.standard_normal((16, 16)).astype(np.float32), "w"),
        numpy_helper.from_array(np.array([0]), "zero"),
        numpy_helper.from_array(np.array([2]), "two"),
        numpy_helper.from_array(np.array([4, -1]), "heads"),
        numpy_helper.from_array(RNG.standard_normal((8, 3, 3, 3)).astype(np.float32), "k"),
    ]
    graph = helper.make_graph(
        nodes, "versions",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 16]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, ["batch", 3, "H", "W"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, None)],
        weights,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODEL = _attention_like()
SPECIALIZE = {"batch": [1, 3], "seq": [1, 7], "H": [9], "W": [12]}


@pytest.fixture(scope="module")
def versioned() -> VersionedModel:
    model = ember.compile(MODEL, specialize=SPECIALIZE, threads=1)
    assert isinstance(model, VersionedModel)
    return model


def _inputs(batch: int, seq: int, h: int = 9, w: int = 12) -> list[np.ndarray]:
    return [RNG.standard_normal((batch, seq, 16)).astype(np.float32),
            RNG.standard_normal((batch, 3, h, w)).astype(np.float32)]  # fmt: skip


@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (1, 7), (3, 1), (3, 7)])
def test_each_version_matches_onnxruntime(versioned: VersionedModel, batch: int, seq: int) -> None:
    x, img = _inputs(batch, seq)
    session = ort.InferenceSession(MODEL.SerializeToString())
    expected = session.run(None, {"x": x, "img": img})
    got = versioned(x, img)
    for a, b in zip(got, expected, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert versioned.run({"x": x, "img": img})[0].shape == (batch, 4, seq, 4)


def test_versions_and_specs(versioned: VersionedModel) -> None:
    assert len(versioned.versions) == 4
    assert [s.describe() for s in versioned.inputs] == [
        "'x' float32[batch, seq, 16]",
        "'img' float32[batch, 3, H, W]",
    ]
    assert versioned.outputs[1].describe() == (
        "'p' float32[batch, 8, (H + 3) floordiv 4 - 1, (W + 3) floordiv 4 - 1]"
    )


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ((_inputs(3, 7)[0], _inputs(1, 7)[1]),
         "input 'img' axis 0 is 1, but batch is 3 from input 'x' axis 0"),
        (_inputs(2, 7), "no version of the model for H=9, W=12, batch=2, seq=7: it was compiled for"),
        ((_inputs(1, 1)[0].astype(np.float64), _inputs(1, 1)[1]), "got dtype float64"),
        (_inputs(0, 1), "input 'x' axis 0: batch = 0 is outside its range 1.."),
        ((_inputs(1, 1)[0],), "the model takes 2 inputs"),
    ],
)  # fmt: skip
def test_the_entry_check_names_the_input_and_symbol(
    versioned: VersionedModel, arrays: tuple, message: str
) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        versioned(*arrays)


@pytest.mark.parametrize(
    ("specialize", "message"),
    [
        ({"batch": [1]}, "specialize gives no sizes for H, W, seq"),
        ({**SPECIALIZE, "N": [1]}, "specialize names unknown symbol"),
        ({**SPECIALIZE, "H": [3]}, "H = 3 is outside its range 5.."),  # the pool needs H >= 5
    ],
)
def test_bad_specializations_are_errors(specialize: dict, message: str) -> None:
    with pytest.raises(ember.EmberError, match=message):
        ember.compile(MODEL, specialize=specialize, threads=1)


def test_a_symbolic_model_without_sizes_names_its_symbols() -> None:
    with pytest.raises(ember.EmberError) as error:
        ember.compile(MODEL, threads=1)
    message = str(error.value)
    assert "'x' has a dynamic shape tensor<?x?x16xf32, #graph.dims<batch, seq>>" in message
    assert "pin batch, seq with --dim batch=SIZE" in message
    assert "specialize={'batch': [SIZES]}" in message
