"""Models for tests: the light zoo that ships with `onnx`, with random weights,
and MLP / transformer-encoder graphs built with `onnx.helper`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ember.inputs import random_array

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_MODELS = sorted(p.stem.removeprefix("light_") for p in LIGHT_DIR.glob("light_*.onnx"))


def light_model_path(name: str) -> Path:
    return LIGHT_DIR / f"light_{name}.onnx"


def light_expected_output(name: str) -> np.ndarray:
    return numpy_helper.to_array(onnx.load_tensor(str(LIGHT_DIR / f"light_{name}_output_0.pb")))


def _variance_inputs(model: onnx.ModelProto) -> set[str]:
    return {n.input[4] for n in model.graph.node if n.op_type == "BatchNormalization"}


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """The model with every constant weight (ConstantOfShape outputs and float
    initializers) replaced by random values; BatchNorm variances stay positive."""
    rng = np.random.default_rng(seed)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    variances = _variance_inputs(model)
    weights: dict[str, np.ndarray] = {}
    kept = []
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes:
            shape = tuple(int(d) for d in shapes[node.input[0]])
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            values = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
            if node.output[0] in variances:
                values = np.abs(values) + np.float32(0.5)
            weights[node.output[0]] = values
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    used = {i for n in kept for i in n.input}
    initializers = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in weights.items())
    real_inputs = [i for i in graph.input if i.name not in shapes and i.name not in weights]
    del graph.input[:]
    graph.input.extend(real_inputs)
    return model


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    inputs = {}
    for info in model.graph.input:
        if info.name in initializers:
            continue
        shape = [d.dim_value or 1 for d in info.type.tensor_type.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
        inputs[info.name] = random_array(shape, dtype, rng)
    return inputs


def run_onnxruntime(
    model: onnx.ModelProto, inputs: dict[str, np.ndarray], threads: int = 1
) -> list[np.ndarray]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, inputs)


# ------------------------------------------------------------ built graphs


def _init(
    rng: np.random.Generator, name: str, shape: tuple[int, ...], scale: float = 0.05
) -> onnx.TensorProto:
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def mlp(
    batch: int = 64, sizes: tuple[int, ...] = (784, 1024, 1024, 10), seed: int = 0
) -> onnx.ModelProto:
    """Gemm+Relu layers ending in Softmax."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = "input"
    for i, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:])):
        inits += [_init(rng, f"w{i}", (fan_out, fan_in)), _init(rng, f"b{i}", (fan_out,))]
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [f"fc{i}"], transB=1))
        x = f"fc{i}"
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [x], [f"relu{i}"]))
            x = f"relu{i}"
    nodes.append(helper.make_node("Softmax", [x], ["probs"], axis=-1))
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, sizes[0]])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, sizes[-1]])],
        inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def transformer_encoder(
    seq: int = 128, hidden: int = 768, heads: int = 12, ffn: int = 3072, seed: int = 0
) -> onnx.ModelProto:
    """One BERT-style encoder layer as exporters write it: MatMul+Add projections,
    Reshape/Transpose into heads, scaled Softmax attention with a mask, residual
    LayerNormalization, and an Erf-based Gelu FFN."""
    rng = np.random.default_rng(seed)
    head = hidden // heads
    inits = [
        _init(rng, n, s) for n, s in [
            ("wq", (hidden, hidden)), ("wk", (hidden, hidden)), ("wv", (hidden, hidden)),
            ("wo", (hidden, hidden)), ("w1", (hidden, ffn)), ("w2", (ffn, hidden)),
            ("bq", (hidden,)), ("bk", (hidden,)), ("bv", (hidden,)), ("bo", (hidden,)),
            ("b1", (ffn,)), ("b2", (hidden,)),
        ]
    ] + [
        numpy_helper.from_array(np.ones(hidden, np.float32), "ln1_scale"),
        numpy_helper.from_array(np.zeros(hidden, np.float32), "ln1_bias"),
        numpy_helper.from_array(np.ones(hidden, np.float32) * 1.1, "ln2_scale"),
        numpy_helper.from_array(np.full(hidden, 0.1, np.float32), "ln2_bias"),
        numpy_helper.from_array(np.array([1, seq, heads, head], np.int64), "heads_shape"),
        numpy_helper.from_array(np.array([1, seq, hidden], np.int64), "merged_shape"),
        numpy_helper.from_array(np.array(np.sqrt(head), np.float32), "scale"),
        numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array(-10000.0, np.float32), "neg"),
        numpy_helper.from_array(np.array([1, 2], np.int64), "mask_axes"),
    ]  # fmt: skip
    n = helper.make_node
    nodes = []
    for name in ("q", "k", "v"):
        nodes += [
            n("MatMul", ["hidden", f"w{name}"], [f"{name}_mm"]),
            n("Add", [f"{name}_mm", f"b{name}"], [f"{name}_lin"]),
            n("Reshape", [f"{name}_lin", "heads_shape"], [f"{name}_heads"]),
            n("Transpose", [f"{name}_heads"], [f"{name}_t"],
              perm=[0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]),
        ]  # fmt: skip
    nodes += [
        n("MatMul", ["q_t", "k_t"], ["scores_raw"]),
        n("Div", ["scores_raw", "scale"], ["scores_scaled"]),
        n("Cast", ["mask"], ["mask_f"], to=TensorProto.FLOAT),
        n("Sub", ["one", "mask_f"], ["mask_inv"]),
        n("Mul", ["mask_inv", "neg"], ["mask_add"]),
        n("Unsqueeze", ["mask_add", "mask_axes"], ["mask_4d"]),
        n("Add", ["scores_scaled", "mask_4d"], ["scores"]),
        n("Softmax", ["scores"], ["probs"], axis=-1),
        n("MatMul", ["probs", "v_t"], ["context"]),
        n("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["context_t", "merged_shape"], ["context_merged"]),
        n("MatMul", ["context_merged", "wo"], ["attn_mm"]),
        n("Add", ["attn_mm", "bo"], ["attn_out"]),
        n("Add", ["attn_out", "hidden"], ["res1"]),
        n("LayerNormalization", ["res1", "ln1_scale", "ln1_bias"], ["ln1"], axis=-1, epsilon=1e-12),
        n("MatMul", ["ln1", "w1"], ["ff1_mm"]),
        n("Add", ["ff1_mm", "b1"], ["ff1"]),
        n("Div", ["ff1", "sqrt2"], ["gelu_div"]),
        n("Erf", ["gelu_div"], ["gelu_erf"]),
        n("Add", ["gelu_erf", "one"], ["gelu_add"]),
        n("Mul", ["ff1", "gelu_add"], ["gelu_mul"]),
        n("Mul", ["gelu_mul", "half"], ["gelu"]),
        n("MatMul", ["gelu", "w2"], ["ff2_mm"]),
        n("Add", ["ff2_mm", "b2"], ["ff2"]),
        n("Add", ["ff2", "ln1"], ["res2"]),
        n("LayerNormalization", ["res2", "ln2_scale", "ln2_bias"], ["output"], axis=-1, epsilon=1e-12),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "encoder",
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, [1, seq])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, seq, hidden])],
        inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
