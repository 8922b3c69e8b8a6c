"""Attention, RMSNormalization, RotaryEmbedding, TensorScatter, SwiGLU,
CausalConvWithState and LinearAttention through the reference interpreter
and compiled for the CPU, next to onnxruntime (ONNX's reference evaluator
for SwiGLU, CausalConvWithState and LinearAttention, which onnxruntime
1.32 lacks): masks (boolean and float, broadcast, shorter than the keys),
causal with a KV cache, grouped-query heads in the 3-D layout, softcap,
scale, padded keys and every qk_matmul_output mode; and LayerNormalization's
Mean and InvStdDev outputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import ember
from ember import reference
from tests.support.models import run_onnxruntime

RNG = np.random.default_rng(0)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _model(op: str, inputs: dict[str, np.ndarray | None], outputs: list[str], opset: int,
           **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    node = helper.make_node(op, [n if v is not None else "" for n, v in inputs.items()],
                            outputs, **attrs)  # fmt: skip
    graph = helper.make_graph(
        [node], op,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in inputs.items() if v is not None],
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in outputs if n],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model: onnx.ModelProto, inputs: dict[str, np.ndarray | None],
           onnxruntime: bool = True) -> None:  # fmt: skip
    feeds = {n: v for n, v in inputs.items() if v is not None}
    if onnxruntime:
        want = run_onnxruntime(model, feeds)
    else:
        want = ReferenceEvaluator(model).run(None, feeds)
    interpreted = reference.run(ember.import_onnx(model), feeds)
    compiled = ember.compile(model, threads=1)(*feeds.values())
    compiled = compiled if isinstance(compiled, (list, tuple)) else [compiled]
    for got_reference, got, expected in zip(interpreted, compiled, want):
        np.testing.assert_allclose(got_reference, expected, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, 1])
def test_rms_normalization(axis: int) -> None:
    x = _f32(2, 3, 8)
    inputs = {"X": x, "scale": _f32(*x.shape[axis:])}
    _check(_model("RMSNormalization", inputs, ["Y"], 23, axis=axis, epsilon=1e-3), inputs)


def test_swiglu() -> None:
    inputs = {"A": _f32(2, 5, 6), "B": _f32(2, 5, 6)}
    _check(_model("SwiGLU", inputs, ["Y"], 28, alpha=1.5), inputs, onnxruntime=False)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_4d_partial(interleaved: int) -> None:
    """4-D X, the first 4 of 8 features rotated, angles per (batch, position)."""
    inputs = {"X": _f32(2, 3, 5, 8), "cos_cache": _f32(2, 5, 2), "sin_cache": _f32(2, 5, 2)}
    model = _model("RotaryEmbedding", inputs, ["Y"], 23, interleaved=interleaved,
                   rotary_embedding_dim=4)  # fmt: skip
    _check(model, inputs)


def test_rotary_embedding_3d_positions() -> None:
    inputs = {"X": _f32(2, 5, 12), "cos_cache": _f32(16, 2), "sin_cache": _f32(16, 2),
              "position_ids": np.array([[0, 1, 2, 3, 4], [7, 9, 11, 13, 15]], np.int64)}  # fmt: skip
    _check(_model("RotaryEmbedding", inputs, ["Y"], 23, num_heads=3), inputs)


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter(mode: str) -> None:
    """Batch entry 1 wraps around the cache in circular mode."""
    starts = np.array([0, 5] if mode == "circular" else [1, 3], np.int64)
    inputs = {"past_cache": _f32(2, 3, 6, 4), "update": _f32(2, 3, 3, 4), "write_indices": starts}
    _check(_model("TensorScatter", inputs, ["present_cache"], 24, mode=mode), inputs)


def test_attention_4d_mask_causal_cache() -> None:
    """A boolean [q, kv] mask over past + new keys, causal, the caches out."""
    inputs = {
        "Q": _f32(2, 3, 4, 8), "K": _f32(2, 3, 4, 8), "V": _f32(2, 3, 4, 6),
        "attn_mask": RNG.random((4, 6)) > 0.3,
        "past_key": _f32(2, 3, 2, 8), "past_value": _f32(2, 3, 2, 6),
    }  # fmt: skip
    model = _model("Attention", inputs, ["Y", "present_key", "present_value"], 23, is_causal=1)
    _check(model, inputs)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_attention_3d_gqa_softcap(mode: int) -> None:
    """3-D layout, 4 query heads over 2 key heads, a float mask broadcast
    over batch and heads, softcap and scale; every qk_matmul_output mode."""
    inputs = {"Q": _f32(2, 3, 32), "K": _f32(2, 5, 16), "V": _f32(2, 5, 12),
              "attn_mask": _f32(1, 1, 3, 5)}  # fmt: skip
    model = _model("Attention", inputs, ["Y", "", "", "qk"], 23, q_num_heads=4, kv_num_heads=2,
                   softcap=2.0, scale=0.3, qk_matmul_output_mode=mode)  # fmt: skip
    _check(model, inputs)


def test_attention_padded_keys_fully_masked_row() -> None:
    """nonpad_kv_seqlen (opset 25), with a float mask shorter than the keys
    (padded with -inf): batch entry 1 sees no key at all for its first row
    under the causal limit, which gives zeros."""
    inputs = {"Q": _f32(2, 2, 3, 4), "K": _f32(2, 2, 6, 4), "V": _f32(2, 2, 6, 4),
              "attn_mask": _f32(3, 5), "past_key": None, "past_value": None,
              "nonpad_kv_seqlen": np.array([6, 2], np.int64)}  # fmt: skip
    model = _model("Attention", inputs, ["Y"], 25, is_causal=1)
    _check(model, inputs, onnxruntime=False)


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_normalization_statistics(axis: int) -> None:
    """LayerNormalization's Mean and InvStdDev outputs (opset 17)."""
    x = _f32(2, 3, 8)
    inputs = {"X": x, "Scale": _f32(*x.shape[axis:]), "B": _f32(*x.shape[axis:])}
    model = _model("LayerNormalization", inputs, ["Y", "Mean", "InvStdDev"], 17, axis=axis)
    _check(model, inputs)


@pytest.mark.parametrize("activation", ["none", "silu"])
def test_causal_conv_with_state(activation: str) -> None:
    """With a bias and a past state (opset 27; ONNX's reference evaluator)."""
    inputs = {"input": _f32(2, 3, 6), "weight": _f32(3, 1, 4), "bias": _f32(3),
              "past_state": _f32(2, 3, 3)}  # fmt: skip
    model = _model("CausalConvWithState", inputs, ["output", "present_state"], 27,
                   activation=activation)  # fmt: skip
    _check(model, inputs, onnxruntime=False)


@pytest.mark.parametrize(("rule", "decay_width", "beta_width"),
                         [("gated_delta", 2, 2), ("gated", 8, 0), ("delta", 0, 1), ("linear", 0, 0)])  # fmt: skip
def test_linear_attention(rule: str, decay_width: int, beta_width: int) -> None:
    """4 query heads over 2 key heads, 3 steps, a past state; decay per head
    or per key feature, beta per head or shared (opset 27; ONNX's reference)."""
    inputs: dict[str, np.ndarray | None] = {
        "query": _f32(2, 3, 16), "key": _f32(2, 3, 8), "value": _f32(2, 3, 6),
        "past_state": _f32(2, 2, 4, 3),
        "decay": -np.abs(_f32(2, 3, decay_width)) if decay_width else None,
        "beta": 1 / (1 + np.exp(-_f32(2, 3, beta_width))) if beta_width else None,
    }  # fmt: skip
    model = _model("LinearAttention", inputs, ["output", "present_state"], 27, q_num_heads=4,
                   kv_num_heads=2, update_rule=rule)  # fmt: skip
    _check(model, inputs, onnxruntime=False)
