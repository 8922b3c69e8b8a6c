"""graph-fold-batchnorm keeps the meaning of models and removes every
BatchNormalization with constant statistics: on the light models that have
them (with random weights and random statistics, so no normalisation is the
identity), and on small Conv/Gemm/MatMul + BatchNormalization graphs checked
against onnxruntime. Outputs agree up to rounding: the folded weights are
rounded once to float32 where the unfolded graph rounds each step."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import ember
from ember.compiler import compile_module
from ember.context import make_context
from ember.passes.graph.fold_batchnorm import FoldBatchNormPass
from tests.support.models import (
    LIGHT_MODELS,
    SLOW_IN_PASS_TESTS,
    light_model_path,
    random_inputs,
    run_onnxruntime,
    with_random_weights,
)

LIGHT_MODELS_WITH_BATCHNORM = [
    pytest.param(name, marks=[pytest.mark.slow] if name in SLOW_IN_PASS_TESTS else [])
    for name in LIGHT_MODELS
    if any(n.op_type == "BatchNormalization" for n in onnx.load(light_model_path(name)).graph.node)
]  # fmt: skip


def _op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk()]


def _fold(module: ModuleOp) -> ModuleOp:
    FoldBatchNormPass().apply(Context(), module)
    DeadCodeElimination().apply(Context(), module)
    module.verify()
    return module


def with_random_statistics(model: onnx.ModelProto, seed: int) -> onnx.ModelProto:
    """The model with every BatchNormalization's scale, B, mean and var
    initializer random (var positive): the light models ship scale 1, B 0."""
    rng = np.random.default_rng(seed)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    variances = {n.input[4] for n in model.graph.node if n.op_type == "BatchNormalization"}
    statistics = {name for n in model.graph.node if n.op_type == "BatchNormalization"
                  for name in n.input[1:5]}  # fmt: skip
    for tensor in model.graph.initializer:
        if tensor.name in statistics:
            shape = numpy_helper.to_array(tensor).shape
            values = rng.standard_normal(shape).astype(np.float32)
            if tensor.name in variances:
                values = np.abs(values) + np.float32(0.5)
            tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
    return model


@pytest.mark.parametrize("name", LIGHT_MODELS_WITH_BATCHNORM)
def test_light_models_keep_their_outputs_without_batchnorm(name: str) -> None:
    model = with_random_weights(onnx.load(light_model_path(name)), seed=2)
    model = with_random_statistics(model, seed=4)
    inputs = random_inputs(model, seed=3)
    module = ember.import_onnx(model)
    before = ember.reference.run(module, inputs)
    assert "graph.batch_normalization" in _op_names(module)
    after = ember.reference.run(_fold(module), inputs)
    assert "graph.batch_normalization" not in _op_names(module)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------ built graphs


def _statistics(rng: np.random.Generator, channels: int) -> list[onnx.TensorProto]:
    values = {
        "bn_scale": rng.standard_normal(channels),
        "bn_bias": rng.standard_normal(channels),
        "bn_mean": rng.standard_normal(channels),
        "bn_var": np.abs(rng.standard_normal(channels)) + 0.5,
    }
    return [numpy_helper.from_array(v.astype(np.float32), k) for k, v in values.items()]


def _batchnorm(x: str, output: str = "y") -> onnx.NodeProto:
    return helper.make_node("BatchNormalization", [x, "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                            [output], epsilon=1e-3)  # fmt: skip


def _weights(rng: np.random.Generator, **shapes: tuple[int, ...]) -> list[onnx.TensorProto]:
    return [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), name)
            for name, s in shapes.items()]  # fmt: skip


def _model(nodes: list[onnx.NodeProto], x_shape: list[int], outputs: list[str],
           initializers: list[onnx.TensorProto]) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(
        nodes, "batchnorm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def conv_bias(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             _batchnorm("c")]  # fmt: skip
    inits = _weights(rng, w=(6, 3, 3, 3), b=(6,)) + _statistics(rng, 6)
    return _model(nodes, [2, 3, 9, 9], ["y"], inits)


def conv_no_bias(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), _batchnorm("c")]
    return _model(nodes, [1, 4, 5, 5], ["y"], _weights(rng, w=(5, 4, 3, 3)) + _statistics(rng, 5))


def grouped_conv(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=2, pads=[1, 1, 1, 1]),
             _batchnorm("c")]  # fmt: skip
    inits = _weights(rng, w=(6, 2, 3, 3), b=(6,)) + _statistics(rng, 6)
    return _model(nodes, [1, 4, 6, 6], ["y"], inits)


def depthwise_conv_1d(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], group=4), _batchnorm("c")]
    return _model(nodes, [2, 4, 10], ["y"], _weights(rng, w=(4, 1, 3)) + _statistics(rng, 4))


def gemm_trans_b(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Gemm", ["x", "w", "bias"], ["g"], transB=1, alpha=0.5, beta=2.0),
             _batchnorm("g")]  # fmt: skip
    inits = _weights(rng, w=(7, 5), bias=(7,)) + _statistics(rng, 7)
    return _model(nodes, [3, 5], ["y"], inits)


def gemm_row_bias(rng: np.random.Generator) -> onnx.ModelProto:
    """C of shape [M, 1]: one bias per row, which the fold broadcasts to [M, N]."""
    nodes = [helper.make_node("Gemm", ["x", "w", "bias"], ["g"], beta=-1.5), _batchnorm("g")]
    inits = _weights(rng, w=(5, 7), bias=(3, 1)) + _statistics(rng, 7)
    return _model(nodes, [3, 5], ["y"], inits)


def gemm_no_c(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Gemm", ["x", "w"], ["g"], transA=1), _batchnorm("g")]
    return _model(nodes, [5, 3], ["y"], _weights(rng, w=(5, 7)) + _statistics(rng, 7))


def matmul(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), _batchnorm("m")]
    return _model(nodes, [4, 6], ["y"], _weights(rng, w=(6, 3)) + _statistics(rng, 3))


def standalone(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["r"]), _batchnorm("r")]
    return _model(nodes, [2, 3, 4, 5], ["y"], _statistics(rng, 3))


def conv_with_another_user(rng: np.random.Generator) -> onnx.ModelProto:
    """The conv's own result is an output too, so it stays and the BN becomes Mul/Add."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), _batchnorm("c")]
    inits = _weights(rng, w=(4, 3, 1, 1)) + _statistics(rng, 4)
    return _model(nodes, [1, 3, 4, 4], ["c", "y"], inits)


BUILT = [conv_bias, conv_no_bias, grouped_conv, depthwise_conv_1d, gemm_trans_b, gemm_row_bias,
         gemm_no_c, matmul, standalone, conv_with_another_user]  # fmt: skip

# What each graph computes after the fold and `dce`, constants aside.
EXPECTED_OPS = {
    conv_bias: ["graph.conv"], conv_no_bias: ["graph.conv"], grouped_conv: ["graph.conv"],
    depthwise_conv_1d: ["graph.conv"], gemm_trans_b: ["graph.gemm"],
    gemm_row_bias: ["graph.gemm"], gemm_no_c: ["graph.gemm"], matmul: ["graph.gemm"],
    standalone: ["graph.relu", "graph.mul", "graph.add"],
    conv_with_another_user: ["graph.conv", "graph.mul", "graph.add"],
}  # fmt: skip


def _computing_ops(module: ModuleOp) -> list[str]:
    return [n for n in _op_names(module) if n.startswith("graph.") and n != "graph.constant"]


def _inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    return random_inputs(model, seed=1)


@pytest.mark.parametrize("build", BUILT, ids=lambda b: b.__name__)
def test_built_graphs_match_onnxruntime_after_folding(build) -> None:
    model = build(np.random.default_rng(0))
    inputs = _inputs(model)
    want = run_onnxruntime(model, inputs)
    module = _fold(ember.import_onnx(model))
    assert _computing_ops(module) == EXPECTED_OPS[build]
    for got, expected in zip(ember.reference.run(module, inputs), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("build", [conv_bias, grouped_conv, gemm_trans_b, matmul, standalone],
                         ids=lambda b: b.__name__)  # fmt: skip
def test_folded_graphs_compile_and_match_onnxruntime(build) -> None:
    model = build(np.random.default_rng(0))
    inputs = _inputs(model)
    want = run_onnxruntime(model, inputs)
    compiled = compile_module(_fold(ember.import_onnx(model)))
    for got, expected in zip(compiled.run(inputs), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_float16_weights_stay_float16() -> None:
    model = conv_bias(np.random.default_rng(0))
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for tensor in model.graph.initializer:
        half = numpy_helper.to_array(tensor).astype(np.float16)
        tensor.CopyFrom(numpy_helper.from_array(half, tensor.name))
    for info in [*model.graph.input, *model.graph.output]:
        info.type.tensor_type.elem_type = TensorProto.FLOAT16
    inputs = {k: v.astype(np.float16) for k, v in _inputs(model).items()}
    module = ember.import_onnx(model)
    before = ember.reference.run(module, inputs)
    after = ember.reference.run(_fold(module), inputs)
    assert _computing_ops(module) == ["graph.conv"]
    assert after[0].dtype == np.float16
    np.testing.assert_allclose(after[0], before[0], rtol=1e-2, atol=1e-2)


def test_training_mode_is_left_alone() -> None:
    # Training mode normalises with the batch's statistics: nothing to fold.
    source = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %s = graph.constant dense<1.0> : tensor<3xf32>
      %y = graph.batch_normalization %x, %s, %s, %s, %s {training_mode = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      func.return %y : tensor<2x3xf32>
    }
    """  # fmt: skip
    module = Parser(make_context(), source).parse_module()
    FoldBatchNormPass().apply(Context(), module)
    assert "graph.batch_normalization" in _op_names(module)
