"""Half precision as a deployment mode (docs/types.md): a float16 or bfloat16
version of a model (its float weights, inputs and outputs converted by
`to_half`, a small stand-in for onnxconverter_common's converter) compiles,
keeps half tensors between ops, sums in f32 (`graph-widen-accumulators`),
and matches the float32 model within the half type's precision."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.support.models import (
    HALF,
    gpt_block,
    light_model_path,
    mlp,
    random_inputs,
    to_half,
    transformer_encoder,
    with_random_weights,
)


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


def half_matmul(rows: tuple[int, ...], k: int, n: int, half: int = TensorProto.BFLOAT16,
                seed: int = 0) -> onnx.ModelProto:  # fmt: skip
    """A MatMul in `half` of an input of shape `rows + (k,)` by constant
    weights (k, n)."""
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((k, n)).astype(HALF[half])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
        [helper.make_tensor_value_info("x", half, [*rows, k])],
        [helper.make_tensor_value_info("y", half, [*rows, n])],
        [numpy_helper.from_array(weights, "w")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("half", list(HALF), ids=["float16", "bfloat16"])
@pytest.mark.parametrize(("rows", "k", "n"), [((1,), 768, 3072), ((2, 2), 64, 40), ((3,), 2, 17),
                                              ((8,), 64, 40), ((2,), 63, 40)])  # fmt: skip
def test_half_matmul_sums_in_float32(rows: tuple[int, ...], k: int, n: int, half: int) -> None:
    """A half MatMul of a few rows by constant weights keeps them in the half
    type (`graph-widen-accumulators`' `keeps_half_weights`: 4 rows or fewer;
    bfloat16 on pairs, `vdpbf16ps` where the CPU has it, for an even k;
    float16 widened in registers), the others are widened to f32: either
    way each output is the f32 sum of exact products rounded once, so
    within one rounding to the half type (and the f32 sums' own) of the
    exact product."""
    model = half_matmul(rows, k, n, half)
    weights = numpy_helper.to_array(model.graph.initializer[0]).astype(np.float64)
    x = np.random.default_rng(1).standard_normal((*rows, k)).astype(HALF[half])
    (got,) = ember.compile(model, cache=False)(x)
    exact = x.astype(np.float64) @ weights
    assert got.dtype == np.dtype(HALF[half])
    terms = np.abs(x.astype(np.float64)) @ np.abs(weights)
    bound = unit_roundoff(half) * np.abs(exact) + k * 2.0**-24 * terms
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound + 1e-30)


@pytest.mark.parametrize("half", list(HALF), ids=["float16", "bfloat16"])
@pytest.mark.parametrize(("alpha", "beta"), [(1.0, 1.0), (0.5, 2.0)])
def test_half_gemm_of_one_row_adds_its_bias_before_rounding(
    alpha: float, beta: float, half: int
) -> None:
    """A Gemm of one row (transB, a classifier's layout) keeps its half
    weights too: alpha * AB + beta * C summed in f32 and rounded once."""
    rng = np.random.default_rng(2)
    weights = rng.standard_normal((40, 64)).astype(HALF[half])
    bias = rng.standard_normal(40).astype(HALF[half])
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=alpha, beta=beta)],
        "gemm", [helper.make_tensor_value_info("x", half, [1, 64])],
        [helper.make_tensor_value_info("y", half, [1, 40])],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "c")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = rng.standard_normal((1, 64)).astype(HALF[half])
    (got,) = ember.compile(model, cache=False)(x)
    wide = x.astype(np.float64) @ weights.astype(np.float64).T
    exact = alpha * wide + beta * bias.astype(np.float64)
    scale = np.abs(x.astype(np.float64)) @ np.abs(weights.astype(np.float64)).T
    terms = alpha * scale + beta * np.abs(bias.astype(np.float64))
    bound = unit_roundoff(half) * np.abs(exact) + 64 * 2.0**-23 * terms
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound)


@pytest.mark.parametrize("half", list(HALF), ids=["float16", "bfloat16"])
def test_few_rows_keep_half_weights(half: int) -> None:
    """Kept, the weights stay in the half type in the weights blob (half the
    f32 copy a widened MatMul keeps)."""
    from xdsl.context import Context

    from ember.passes.graph.optimize import graph_passes

    def weights_after_optimize(rows: int) -> list[str]:
        module = ember.import_onnx(half_matmul((rows,), 64, 40, half))
        for graph_pass in graph_passes(2):
            graph_pass.apply(Context(), module)
        return [str(op.results[0].type) for op in module.walk() if op.name == "graph.constant"]

    name = "bf16" if half == TensorProto.BFLOAT16 else "f16"
    assert weights_after_optimize(2) == [f"tensor<64x40x{name}>"]
    assert weights_after_optimize(8) == ["tensor<64x40xf32>"]


def unit_roundoff(half: int) -> float:
    """2^-p for a type of p significant bits: float16 2^-11, bfloat16 2^-8."""
    return 2.0 ** -(ml_dtypes.finfo(HALF[half]).nmant + 1)


@pytest.fixture(scope="module")
def bert_layer() -> tuple[onnx.ModelProto, dict[str, np.ndarray], ember.CompiledModel]:
    """The BERT-base encoder layer (hidden 768, 12 heads, FFN 3072, 128 tokens),
    its inputs and its float32 compile."""
    model = transformer_encoder()
    return model, random_inputs(model), ember.compile(model)


@pytest.mark.parametrize("half", list(HALF), ids=["float16", "bfloat16"])
def test_half_bert_layer_matches_float32(
    half: int, bert_layer: tuple[onnx.ModelProto, dict[str, np.ndarray], ember.CompiledModel]
) -> None:
    """Held against the float32 layer on the same inputs (rounded to the half
    type), so that only what the half model rounds counts: its weights and
    the ~25 tensors between its ops, each rounded once to the half type
    (relative error at most the unit roundoff u), with sums, Softmax and
    LayerNormalization in f32. Those errors mostly cancel in the 768- and
    3072-term sums and the final LayerNormalization rescales, so the layer
    ends about 3u from float32 (measured: float16 3.0u, bfloat16 2.6u);
    8u, relative to the output's largest magnitude, leaves room for
    other inputs and machines without admitting a lost bit of precision
    (which doubles the error) in more than one place."""
    model, inputs, float32 = bert_layer
    rounded = {k: v.astype(HALF[half]) if v.dtype == np.float32 else v for k, v in inputs.items()}
    (want,) = float32.run({k: v.astype(np.float32) if v.dtype == HALF[half] else v
                           for k, v in rounded.items()})  # fmt: skip
    (got,) = ember.compile(to_half(model, half)).run(rounded)
    assert got.dtype == np.dtype(HALF[half])
    error = np.abs(got.astype(np.float64) - want).max() / np.abs(want).max()
    assert error < 8 * unit_roundoff(half), error / unit_roundoff(half)


@pytest.mark.slow
def test_bf16_gpt_decode_step_matches_float32() -> None:
    """A GPT-2 block on one token in bfloat16, whose four products (768 x
    2304, 768 x 768, 768 x 3072, 3072 x 768 weights) run on bfloat16 pairs,
    within the BERT layer's bound of its float32 original; two threads give
    the same bits as one."""
    model = gpt_block(seq=1)
    inputs = random_inputs(model, seed=3)
    rounded = {k: v.astype(ml_dtypes.bfloat16) if v.dtype == np.float32 else v
               for k, v in inputs.items()}  # fmt: skip
    (want,) = ember.compile(model).run({k: v.astype(np.float32) if v.dtype != np.int64 else v
                                        for k, v in rounded.items()})  # fmt: skip
    half = to_half(model, TensorProto.BFLOAT16)
    (got,) = ember.compile(half, cache=False).run(rounded)
    error = np.abs(got.astype(np.float64) - want).max() / np.abs(want).max()
    assert error < 8 * unit_roundoff(TensorProto.BFLOAT16), error
    (two,) = ember.compile(half, cache=False, threads=2).run(rounded)
    np.testing.assert_array_equal(got, two)


@pytest.mark.slow
@pytest.mark.parametrize("half", list(HALF), ids=["float16", "bfloat16"])
def test_half_resnet50_matches_float32(half: int) -> None:
    model = with_random_weights(onnx.load(light_model_path("resnet50")), 0)
    x = np.random.default_rng(2).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (want,) = ember.compile(model)(x)
    (got,) = ember.compile(to_half(model, half))(x.astype(HALF[half]))
    error = np.abs(got.astype(np.float32) - want).max() / np.abs(want).max()
    assert error < 10 * TOLERANCE[half], error
