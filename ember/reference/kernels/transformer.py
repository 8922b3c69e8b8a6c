"""Transformer kernels: Attention, RMSNormalization, RotaryEmbedding,
SwiGLU, TensorScatter, CausalConvWithState and LinearAttention (ONNX
opsets 23-28).

Attention follows ONNX's reference for what its conformance cases pin
down: Q and K are each scaled by sqrt(scale) before their product,
`softcap` applies before the masks, a boolean mask shorter than the keys is
padded with False (a float one with -inf), `is_causal` aligns the diagonal
bottom-right (a query at row i with `offset` earlier keys sees keys
j <= i + offset), and a row that every mask hides gives zeros. Of the
`qk_matmul_output` modes, 0 gives the scaled scores, 1 the softcapped ones,
2 those with the masks added and 3 the softmax (ONNX's reference gives the
softcapped scores for mode 0 too; onnxruntime and the operator's text, the
scores before softcap).
"""

from __future__ import annotations

import numpy as np

from ._registry import Attrs, Inputs, arg, norm_axis, register, wide


@register("RMSNormalization")
def rms_normalization(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, scale = np.asarray(inputs[0]), np.asarray(inputs[1])
    axes = tuple(range(norm_axis(int(attrs.get("axis", -1)), x.ndim), x.ndim))
    xw = wide(x)
    rms = np.sqrt((xw * xw).mean(axes, keepdims=True) + attrs.get("epsilon", 1e-5))
    return [(xw / rms * wide(scale)).astype(x.dtype)]


@register("SwiGLU")
def swiglu(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
    aw = wide(a)
    gate = aw / (1 + np.exp(-attrs.get("alpha", 1.0) * aw))
    return [(gate * wide(b)).astype(a.dtype)]


@register("RotaryEmbedding")
def rotary_embedding(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Per head, the first `rotary_embedding_dim` features (all by default)
    form pairs (x1, x2): the two halves, or even and odd features when
    `interleaved`; each pair turns by its position's angle."""
    x, cos, sin, positions = (np.asarray(inputs[0]), np.asarray(inputs[1]),
                              np.asarray(inputs[2]), arg(inputs, 3))  # fmt: skip
    if x.ndim == 4:  # [batch, heads, sequence, head] -> [batch, sequence, heads, head]
        heads = np.transpose(wide(x), (0, 2, 1, 3))
    else:
        count = int(attrs["num_heads"])
        heads = wide(x).reshape(x.shape[0], x.shape[1], count, x.shape[2] // count)
    if positions is not None:
        cos, sin = cos[positions], sin[positions]
    cos, sin = wide(cos)[:, :, None, :], wide(sin)[:, :, None, :]
    rotary = int(attrs.get("rotary_embedding_dim", 0)) or heads.shape[-1]
    turned = heads[..., :rotary]
    if attrs.get("interleaved", 0):
        x1, x2 = turned[..., 0::2], turned[..., 1::2]
    else:
        x1, x2 = turned[..., : rotary // 2], turned[..., rotary // 2 :]
    real, imaginary = cos * x1 - sin * x2, sin * x1 + cos * x2
    if attrs.get("interleaved", 0):
        turned = np.stack([real, imaginary], axis=-1).reshape(turned.shape)
    else:
        turned = np.concatenate([real, imaginary], axis=-1)
    y = np.concatenate([turned, heads[..., rotary:]], axis=-1)
    y = np.transpose(y, (0, 2, 1, 3)) if x.ndim == 4 else y.reshape(x.shape)
    return [y.astype(x.dtype)]


@register("TensorScatter")
def tensor_scatter(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """present = past; per batch entry b, update's rows along `axis` go to
    rows write_indices[b] + i (modulo the cache's length in circular mode)."""
    past, update, indices = np.asarray(inputs[0]), np.asarray(inputs[1]), arg(inputs, 2)
    axis = norm_axis(int(attrs.get("axis", -2)), past.ndim)
    present = np.moveaxis(past.copy(), axis, 1)
    rows = np.moveaxis(update, axis, 1)
    starts = np.zeros(past.shape[0], np.int64) if indices is None else np.asarray(indices)
    length = present.shape[1]
    for b in range(past.shape[0]):
        targets = int(starts[b]) + np.arange(rows.shape[1])
        if attrs.get("mode", "linear") == "circular":
            targets %= length
        elif targets.size and not 0 <= targets.min() <= targets.max() < length:
            raise ValueError(f"TensorScatter: batch {b} writes rows {targets.min()} to "
                             f"{targets.max()} of a cache of {length}")  # fmt: skip
        present[b, targets] = rows[b]
    return [np.moveaxis(present, 1, axis)]


def _split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """[batch, sequence, heads * size] -> [batch, heads, sequence, size]."""
    return x.reshape(x.shape[0], x.shape[1], heads, -1).transpose(0, 2, 1, 3)


def attention_bias(
    mask: np.ndarray | None, q_len: int, kv_len: int, offset: int | np.ndarray, attrs: Attrs
) -> np.ndarray:
    """The additive bias (0 or -inf, plus a float mask's values) of each
    query row and key column: the mask padded to the keys, the causal and
    window limits at `offset` (one per batch entry for `nonpad_kv_seqlen`)."""
    bias = np.zeros((q_len, kv_len))
    if mask is not None:
        mask = np.asarray(mask)
        pad = [(0, 0)] * (mask.ndim - 1) + [(0, kv_len - mask.shape[-1])]
        if mask.dtype == np.bool_:
            mask = np.where(np.pad(mask, pad, constant_values=False), 0.0, -np.inf)
        else:
            mask = np.pad(wide(mask), pad, constant_values=-np.inf)
        bias = bias + mask
    rows = np.arange(q_len)[:, None] + np.reshape(offset, (-1, 1, 1, 1))  # [batch|1, 1, q, 1]
    columns = np.arange(kv_len)
    allowed = np.ones(rows.shape[:2] + (q_len, kv_len), np.bool_)
    if attrs.get("is_causal", 0):
        allowed &= columns <= rows
    if attrs.get("left_window_size", -1) >= 0:
        allowed &= rows - columns <= attrs["left_window_size"]
    if attrs.get("right_window_size", -1) >= 0:
        allowed &= columns - rows <= attrs["right_window_size"]
    return bias + np.where(allowed, 0.0, -np.inf)


@register("Attention")
def attention(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    q, k, v = (np.asarray(inputs[i]) for i in range(3))
    mask, past_key, past_value, nonpad = (arg(inputs, i) for i in range(3, 7))
    dtype = q.dtype
    if q.ndim == 3:
        q = _split_heads(q, int(attrs["q_num_heads"]))
        k, v = (_split_heads(t, int(attrs["kv_num_heads"])) for t in (k, v))
    if past_key is not None:
        k = np.concatenate([past_key, k], axis=2)
        v = np.concatenate([past_value, v], axis=2)
    present_key, present_value = k, v
    q_len, kv_len = q.shape[2], k.shape[2]
    offset: int | np.ndarray = 0 if past_key is None else past_key.shape[2]
    bias = attention_bias(mask, q_len, kv_len,
                          np.asarray(nonpad) - q_len if nonpad is not None else offset, attrs)  # fmt: skip
    if nonpad is not None:
        padding = np.arange(kv_len) < np.asarray(nonpad)[:, None]
        bias = bias + np.where(padding, 0.0, -np.inf)[:, None, None, :]
    scale = attrs.get("scale")
    root = np.sqrt(1 / np.sqrt(q.shape[3]) if scale is None else scale)
    groups = q.shape[1] // k.shape[1]
    keys, values = np.repeat(wide(k), groups, axis=1), np.repeat(wide(v), groups, axis=1)
    scores = (wide(q) * root) @ np.swapaxes(keys * root, 2, 3)
    softcap, capped = attrs.get("softcap", 0.0), scores
    if softcap > 0:
        capped = softcap * np.tanh(scores / softcap)
    biased = capped + bias
    peak = np.max(biased, axis=-1, keepdims=True)
    powers = np.exp(biased - np.where(np.isneginf(peak), 0.0, peak))
    total = powers.sum(-1, keepdims=True)
    hidden = np.isneginf(np.max(bias, axis=-1, keepdims=True))
    probabilities = np.where(hidden, 0.0, powers / np.where(total == 0, 1.0, total))
    y = probabilities @ values
    if len(inputs[0].shape) == 3:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    mode = attrs.get("qk_matmul_output_mode", 0)
    qk = {0: scores, 1: capped, 2: biased, 3: probabilities}[mode]
    qk = np.broadcast_to(qk, probabilities.shape)
    return [y.astype(dtype), present_key.astype(dtype), present_value.astype(dtype),
            qk.astype(dtype)]  # fmt: skip


@register("CausalConvWithState")
def causal_conv_with_state(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Each channel convolved with its own window over the past state (zeros
    by default) followed by the input; SiLU when asked; the new state is the
    last k - 1 positions of that sequence."""
    x, weight, bias, past = (
        np.asarray(inputs[0]),
        np.asarray(inputs[1]),
        arg(inputs, 2),
        arg(inputs, 3),
    )
    batch, channels, length = x.shape
    window = weight.shape[2]
    if past is None:
        past = np.zeros((batch, channels, window - 1), x.dtype)
    sequence = np.concatenate([np.asarray(past), x], axis=2)
    frames = np.lib.stride_tricks.sliding_window_view(wide(sequence), window, axis=2)
    y = np.einsum("bctk,ck->bct", frames, wide(weight)[:, 0, :])
    if bias is not None:
        y = y + wide(np.asarray(bias))[:, None]
    if attrs.get("activation", "none") in ("silu", "swish"):
        y = y / (1 + np.exp(-y))
    return [y.astype(x.dtype), sequence[:, :, sequence.shape[2] - (window - 1) :]]


@register("LinearAttention")
def linear_attention(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Step by step, per key head: the state [key size, value size] decays by
    exp(decay) (gated rules), the value is corrected by what the state already
    holds for the key, times beta (delta rules), the state adds key x value,
    and each query head of the group reads scale * query . state."""
    q, k, v, past, decay, beta = (arg(inputs, i) for i in range(6))
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    q_heads, kv_heads = int(attrs["q_num_heads"]), int(attrs["kv_num_heads"])
    queries, keys, values = (wide(_split_heads(x, n)) for x, n in
                             ((q, q_heads), (k, kv_heads), (v, kv_heads)))  # fmt: skip
    batch, _, steps, key_size = keys.shape
    group = q_heads // kv_heads
    state = (np.zeros((batch, kv_heads, key_size, values.shape[3])) if past is None
             else wide(np.asarray(past)))  # fmt: skip
    gates = None if decay is None else wide(_split_heads(np.asarray(decay), kv_heads))
    betas = (
        None if beta is None else wide(_split_heads(np.asarray(beta), np.asarray(beta).shape[2]))
    )
    scale = attrs.get("scale", 0.0) or 1 / np.sqrt(key_size)
    out = np.zeros((batch, q_heads, steps, values.shape[3]))
    for t in range(steps):
        key, value = keys[:, :, t], values[:, :, t]
        if gates is not None:
            state = state * np.exp(gates[:, :, t])[..., None]
        if betas is not None:
            value = betas[:, :, t] * (value - np.einsum("bhdm,bhd->bhm", state, key))
        state = state + key[..., :, None] * value[..., None, :]
        out[:, :, t] = scale * np.einsum("bhd,bhdm->bhm", queries[:, :, t],
                                         np.repeat(state, group, axis=1))  # fmt: skip
    output = out.transpose(0, 2, 1, 3).reshape(batch, steps, -1)
    return [output.astype(q.dtype), state.astype(q.dtype if past is None else past.dtype)]
