"""graph-fuse and loop-fuse keep the meaning of real models, and fusion
reduces the kernels the compiled code runs."""

from __future__ import annotations

import functools

import numpy as np
import onnx
import pytest
from xdsl.context import Context

import ember
from ember.compiler import Options
from ember.dialects.graph import ConstantOp, FusedOp, GraphOp
from ember.fusion_report import count_kernel_calls
from ember.passes.graph.fuse import anchor_kind
from ember.passes.graph.optimize import graph_passes
from tests.support.models import (
    LIGHT_MODELS,
    SLOW_IN_PASS_TESTS,
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    transformer_encoder,
    with_random_weights,
)

MODEL_NAMES = sorted([*LIGHT_MODELS, "mlp", "encoder"])


@functools.cache
def _model(name: str) -> onnx.ModelProto:
    """The model `name`, built when a test first asks for it (not when the
    module is collected: random weights for every light model take seconds)."""
    if name == "mlp":
        return mlp(batch=4)
    if name == "encoder":
        return transformer_encoder(seq=16, hidden=64, heads=4, ffn=128)
    return with_random_weights(onnx.load(light_model_path(name)), seed=5)


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=[pytest.mark.slow] if name in SLOW_IN_PASS_TESTS else [])
     for name in MODEL_NAMES],
)  # fmt: skip
def test_fused_graph_means_the_same(name: str) -> None:
    """After graph-optimize level 2 the reference interpreter (which runs fused
    regions) gives the unoptimised outputs, and no anchor is left unfused."""
    model = _model(name)
    inputs = random_inputs(model, seed=6)
    module = ember.import_onnx(model)
    before = ember.reference.run(module, inputs)
    for graph_pass in graph_passes(2):
        graph_pass.apply(Context(), module)
    module.verify()
    after = ember.reference.run(module, inputs)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    top_level = list(module.walk(region_first=False))
    assert any(isinstance(op, FusedOp) for op in top_level)
    for op in top_level:
        if (
            isinstance(op, GraphOp)
            and not isinstance(op, ConstantOp)
            and not isinstance(op.parent_op(), FusedOp)
        ):
            assert anchor_kind(op) in (None, "elementwise"), op.name


@pytest.mark.parametrize(
    "name", [pytest.param("squeezenet", marks=pytest.mark.slow), "encoder", "mlp"]
)
def test_every_level_matches_onnxruntime(name: str) -> None:
    model = _model(name)
    inputs = random_inputs(model, seed=7)
    expected = run_onnxruntime(model, inputs)
    for level in (0, 1, 2):
        outputs = ember.compile(model, opt_level=level).run(inputs)
        for got, want in zip(outputs, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=f"-O{level}")


@pytest.mark.parametrize("name", [pytest.param("resnet50", marks=pytest.mark.slow), "encoder"])
def test_fusion_runs_fewer_kernels(name: str) -> None:
    module = ember.import_onnx(_model(name))
    unfused = count_kernel_calls(module.clone(), Options(opt_level=1))
    fused = count_kernel_calls(module.clone(), Options(opt_level=2))
    assert fused < unfused / 2, (fused, unfused)


def test_unknown_level_is_a_clear_error() -> None:
    with pytest.raises(ember.EmberError, match="level must be 0, 1 or 2"):
        ember.compile(_model("mlp"), opt_level=3)


def _decomposed_block() -> onnx.ModelProto:
    """LayerNorm, Gelu and Softmax written out op by op, as older exporters do:
    every one of them is a diamond (a value with two users inside the block)."""
    from onnx import TensorProto, helper

    rng = np.random.default_rng(3)
    n = helper.make_node
    consts = {"axes": np.array([-1], np.int64), "two": np.array(2, np.float32),
              "eps": np.array(1e-5, np.float32), "sqrt2": np.array(np.sqrt(2), np.float32),
              "one": np.array(1, np.float32), "half": np.array(0.5, np.float32),
              "gamma": rng.standard_normal(8).astype(np.float32),
              "beta": rng.standard_normal(8).astype(np.float32)}  # fmt: skip
    nodes = [
        n("ReduceMean", ["x", "axes"], ["mean"]), n("Sub", ["x", "mean"], ["d"]),
        n("Pow", ["d", "two"], ["d2"]), n("ReduceMean", ["d2", "axes"], ["var"]),
        n("Add", ["var", "eps"], ["ve"]), n("Sqrt", ["ve"], ["std"]),
        n("Div", ["d", "std"], ["xn"]), n("Mul", ["xn", "gamma"], ["xg"]),
        n("Add", ["xg", "beta"], ["ln"]),
        n("Div", ["ln", "sqrt2"], ["g0"]), n("Erf", ["g0"], ["g1"]),
        n("Add", ["g1", "one"], ["g2"]), n("Mul", ["ln", "g2"], ["g3"]),
        n("Mul", ["g3", "half"], ["gelu"]),
        n("ReduceMax", ["gelu", "axes"], ["mx"]), n("Sub", ["gelu", "mx"], ["s0"]),
        n("Exp", ["s0"], ["s1"]), n("ReduceSum", ["s1", "axes"], ["s2"]),
        n("Div", ["s1", "s2"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "decomposed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 8])],
        [onnx.numpy_helper.from_array(v, k) for k, v in consts.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_decomposed_layer_norm_gelu_softmax_fuse_into_few_kernels() -> None:
    model = _decomposed_block()
    inputs = random_inputs(model, seed=8)
    (expected,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model).run(inputs)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    module = ember.import_onnx(model)
    for graph_pass in graph_passes(2):
        graph_pass.apply(Context(), module)
    groups = [op for op in module.walk() if isinstance(op, FusedOp)]
    assert len(groups) == 1 and groups[0].kind.data == "reduction"
    unfused = count_kernel_calls(ember.import_onnx(model), Options(opt_level=1))
    assert count_kernel_calls(ember.import_onnx(model), Options(opt_level=2)) == 1 < unfused


def test_group_with_scalar_fills_keeps_their_order() -> None:
    """Softmax of a Softmax of a vector: the group's 0-d max and sum buffers get
    their initial values between its nests, and the memory plan may give the
    second Softmax's buffers the first one's arena bytes."""
    from onnx import TensorProto, helper

    node = helper.make_node
    graph = helper.make_graph(
        [node("Softmax", ["x"], ["a"], axis=-1), node("Relu", ["x"], ["r"]),
         node("Softmax", ["a"], ["y"], axis=-1)], "softmax2",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inputs = random_inputs(model, seed=1)
    expected = run_onnxruntime(model, inputs)
    for got, want in zip(ember.compile(model).run(inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # 0-d fills are one-iteration loops, so the group stays one kernel (+ the Relu).
    assert count_kernel_calls(ember.import_onnx(model), Options()) == 2
