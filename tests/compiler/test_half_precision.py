"""Half precision as a deployment mode (docs/types.md): a float16 or bfloat16
version of a model (its float weights, inputs and outputs converted by
`to_half`, a small stand-in for onnxconverter_common's converter) compiles,
keeps half tensors between ops, sums in f32 (`graph-widen-accumulators`),
and matches the float32 model within the half type's precision."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.support.models import HALF, light_model_path, mlp, to_half, with_random_weights


def small_convnet(seed: int = 0) -> onnx.ModelProto:
    """Conv, BatchNormalization, Relu, AveragePool, GlobalAveragePool, Gemm, Softmax."""
    rng = np.random.default_rng(seed)

    def weight(name: str, *shape: int, scale: float = 0.3) -> onnx.TensorProto:
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name
        )

    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "g", "beta", "mean", "var"], ["n"]),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("AveragePool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"]),
    ]
    initializers = [
        weight("w", 8, 3, 3, 3), weight("b", 8), weight("g", 8, scale=0.1),
        weight("beta", 8), weight("mean", 8), weight("w2", 16, 8, 3, 3, scale=0.1),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "var"),
        weight("fc", 10, 16), weight("fcb", 10),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])], initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# Relative to the output's largest magnitude: float16 keeps 11 significant
# bits, bfloat16 8; the tensors between ops are rounded to them.
TOLERANCE = {TensorProto.FLOAT16: 3e-3, TensorProto.BFLOAT16: 3e-2}


@pytest.mark.parametrize("half", list(HALF), ids=["float16", "bfloat16"])
@pytest.mark.parametrize(
    "build",
    [lambda: mlp(batch=4, sizes=(256, 128, 10)), pytest.param(small_convnet, marks=pytest.mark.slow)],
    ids=["mlp", "convnet"],
)  # fmt: skip
def test_half_model_matches_float32_model(half: int, build: object) -> None:
    model = build()  # type: ignore[operator]
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    (want,) = ember.compile(model)(x)
    half_model = to_half(model, half)
    (got,) = ember.compile(half_model)(x.astype(HALF[half]))
    assert got.dtype == np.dtype(HALF[half])
    error = np.abs(got.astype(np.float32) - want).max() / np.abs(want).max()
    assert error < TOLERANCE[half], error


@pytest.mark.parametrize("op", ["MatMul", "ReduceSum"])
def test_half_sums_accumulate_in_float32(op: str) -> None:
    # 2048 times float16(0.1) is 204.75 exactly in f32 (and in f16); summed in
    # f16 the running total stops gaining 0.1 once its spacing passes 0.2.
    x = np.full((1, 2048), 0.1, np.float16)
    if op == "MatMul":
        ones = numpy_helper.from_array(np.ones((2048, 1), np.float16), "w")
        node, initializers = helper.make_node("MatMul", ["x", "w"], ["y"]), [ones]
    else:
        axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
        node, initializers = helper.make_node("ReduceSum", ["x", "axes"], ["y"]), [axes]
    graph = helper.make_graph(
        [node], "sum", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 2048])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 1])], initializers,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (got,) = ember.compile(model)(x)
    assert got.dtype == np.float16
    assert got[0, 0] == np.float16(2048 * np.float32(np.float16(0.1)))


@pytest.mark.slow
@pytest.mark.parametrize("half", list(HALF), ids=["float16", "bfloat16"])
def test_half_resnet50_matches_float32(half: int) -> None:
    model = with_random_weights(onnx.load(light_model_path("resnet50")), 0)
    x = np.random.default_rng(2).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (want,) = ember.compile(model)(x)
    (got,) = ember.compile(to_half(model, half))(x.astype(HALF[half]))
    error = np.abs(got.astype(np.float32) - want).max() / np.abs(want).max()
    assert error < 10 * TOLERANCE[half], error
