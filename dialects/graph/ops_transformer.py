"""Transformer `graph` ops of ONNX opsets 23-28: Attention, RMSNormalization,
RotaryEmbedding, TensorScatter, SwiGLU, CausalConvWithState and
LinearAttention.

These ops came after opset 21 and are modelled in their newest form (the
importer accepts models up to opset 28): Attention as in opset 25, with
`nonpad_kv_seqlen` and the sliding-window attributes. Attention always has
its four results (Y, present_key, present_value, qk_matmul_output), as LSTM
has its three: the ones a node does not name are computed from what Y needs
anyway, or left dead for dead-code elimination.

Attention's layout: Q, K and V are either 4-D, [batch, heads, sequence,
head size], or 3-D, [batch, sequence, heads * head size] with the head
counts given by `q_num_heads` and `kv_num_heads`; Q may have a multiple of
K's heads (grouped-query attention: query head h reads key head
h / (q_heads / kv_heads)). The caches (`past_key`, `present_key`, ...) are
4-D in both layouts.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.ops_elementwise import float_only
from ember.dialects.graph.ops_nn import layer_norm
from ember.dialects.graph.shapes import ShapeContext, ShapeError, dims_compatible, result
from ember.dialects.graph.spec import OpSpec, float_attr, int_attr, one, opt, string_attr
from ember.dialects.graph.symbolic import Dim
from ember.dialects.graph.types import DYNAMIC, format_shape, is_float


def _heads(hidden: Dim, heads: int, what: str) -> Dim:
    """The head size of a 3-D operand's last dim split into `heads` heads."""
    if not isinstance(hidden, int) or hidden == DYNAMIC:
        return DYNAMIC
    if heads < 1 or hidden % heads:
        raise ShapeError(f"{what}'s last dim ({hidden}) is not a multiple of {heads} heads")
    return hidden // heads


def _same(a: Dim, b: Dim, what: str) -> None:
    if not dims_compatible(a, b):
        raise ShapeError(f"{what}: {a} vs {b}")


def rotary_embedding(ctx: ShapeContext) -> list[TensorType]:
    x = ctx.shape("X")
    if len(x) == 3:
        heads = ctx.attr("num_heads")
        if heads is None:
            raise ShapeError("a 3-D X needs num_heads")
        head_size = _heads(x[2], heads, "X")
        batch, sequence = x[0], x[1]
    elif len(x) == 4:
        batch, sequence, head_size = x[0], x[2], x[3]
    else:
        raise ShapeError(f"X must have rank 3 or 4, got {format_shape(x)}")
    rotary = ctx.attr("rotary_embedding_dim") or head_size
    if isinstance(rotary, int) and rotary != DYNAMIC:
        if rotary % 2 or (
            isinstance(head_size, int) and head_size != DYNAMIC and rotary > head_size
        ):
            raise ShapeError(f"rotary_embedding_dim {rotary} must be even and at most the head "
                             f"size {head_size}")  # fmt: skip
    for name in ("cos_cache", "sin_cache"):
        cache = ctx.shape(name)
        expected = 2 if ctx.has("position_ids") else 3
        if len(cache) != expected:
            raise ShapeError(f"{name} must have rank {expected}, got {format_shape(cache)}")
        if isinstance(rotary, int) and rotary != DYNAMIC:
            _same(cache[-1], rotary // 2, f"{name}'s last dim must be rotary_embedding_dim / 2")
        if not ctx.has("position_ids"):
            _same(cache[0], batch, f"{name}'s batch")
            _same(cache[1], sequence, f"{name}'s sequence")
    if ctx.has("position_ids"):
        positions = ctx.shape("position_ids")
        if len(positions) != 2:
            raise ShapeError(f"position_ids must have rank 2, got {format_shape(positions)}")
    if ctx.attr("interleaved") not in (0, 1):
        raise ShapeError(f"interleaved must be 0 or 1, got {ctx.attr('interleaved')}")
    return float_only(ctx)


def swiglu(ctx: ShapeContext) -> list[TensorType]:
    if ctx.type("A") != ctx.type("B"):
        raise ShapeError(f"A and B must have the same type, got {ctx.type('A')} and "
                         f"{ctx.type('B')}")  # fmt: skip
    return float_only(ctx)


def tensor_scatter(ctx: ShapeContext) -> list[TensorType]:
    cache, update = ctx.shape("past_cache"), ctx.shape("update")
    if ctx.attr("mode") not in ("linear", "circular"):
        raise ShapeError(f"mode must be 'linear' or 'circular', got '{ctx.attr('mode')}'")
    if len(cache) != len(update) or len(cache) < 2:
        raise ShapeError(f"update {format_shape(update)} must have past_cache's rank "
                         f"{format_shape(cache)} (at least 2)")  # fmt: skip
    axis = ctx.normalize_axis(ctx.attr("axis"), len(cache))
    if axis == 0:
        raise ShapeError("axis must not be the batch dim 0")
    for i, (c, u) in enumerate(zip(cache, update)):
        if i != axis:
            _same(c, u, f"update's dim {i} must be past_cache's")
        elif isinstance(c, int) and isinstance(u, int) and DYNAMIC not in (c, u) and u > c:
            raise ShapeError(f"update's sequence ({u}) is longer than the cache's ({c})")
    if ctx.element_type("update") != ctx.element_type("past_cache"):
        raise ShapeError("update must have past_cache's element type")
    if ctx.has("write_indices"):
        indices = ctx.shape("write_indices")
        if len(indices) != 1:
            raise ShapeError(f"write_indices must be 1-D, got {format_shape(indices)}")
        _same(indices[0], cache[0], "write_indices has one entry per batch")
    return [ctx.type("past_cache")]


CONV_ACTIVATIONS = ("none", "silu", "swish")


def causal_conv(ctx: ShapeContext) -> list[TensorType]:
    x, weight = ctx.shape("input"), ctx.shape("weight")
    if len(x) != 3 or len(weight) != 3:
        raise ShapeError(f"input and weight must be 3-D, got {format_shape(x)} and "
                         f"{format_shape(weight)}")  # fmt: skip
    batch, channels, _ = x
    _same(weight[0], channels, "weight's channels must be input's")
    _same(weight[1], 1, "weight's dim 1 (depthwise)")
    window = weight[2]
    if ctx.has("bias"):
        _same(ctx.shape("bias")[0] if ctx.rank("bias") == 1 else DYNAMIC, channels,
              "bias must be 1-D with one value per channel")  # fmt: skip
    state = [
        batch,
        channels,
        window - 1 if isinstance(window, int) and window != DYNAMIC else DYNAMIC,
    ]
    if ctx.has("past_state"):
        past = ctx.shape("past_state")
        if len(past) != 3:
            raise ShapeError(f"past_state must be 3-D, got {format_shape(past)}")
        for a, b, what in zip(past, state, ("batch", "channels", "length (k - 1)")):
            _same(a, b, f"past_state's {what}")
    if ctx.attr("activation") not in CONV_ACTIVATIONS:
        raise ShapeError(f"activation must be one of {', '.join(CONV_ACTIVATIONS)}, got "
                         f"'{ctx.attr('activation')}'")  # fmt: skip
    (y,) = float_only(ctx)
    return [y, *result(y.element_type, state)]


UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


def linear_attention(ctx: ShapeContext) -> list[TensorType]:
    """3-D query, key and value ([batch, steps, heads * size]); the state is
    [batch, kv heads, key size, value size]."""
    q, k, v = ctx.shape("query"), ctx.shape("key"), ctx.shape("value")
    if not len(q) == len(k) == len(v) == 3:
        raise ShapeError("query, key and value must be 3-D")
    q_heads, kv_heads = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    if q_heads is None or kv_heads is None:
        raise ShapeError("q_num_heads and kv_num_heads are required")
    if kv_heads < 1 or q_heads % kv_heads:
        raise ShapeError(f"q_num_heads ({q_heads}) must be a multiple of kv_num_heads "
                         f"({kv_heads})")  # fmt: skip
    rule = ctx.attr("update_rule")
    if rule not in UPDATE_RULES:
        raise ShapeError(f"update_rule must be one of {', '.join(UPDATE_RULES)}, got '{rule}'")
    for name, needed in (("decay", "gated" in rule), ("beta", "delta" in rule)):
        if ctx.has(name) != needed:
            raise ShapeError(f"update_rule '{rule}' {'needs' if needed else 'forbids'} {name}")
    key_size = _heads(q[2], q_heads, "query")
    _same(_heads(k[2], kv_heads, "key"), key_size, "query and key must have the same head size")
    value_size = _heads(v[2], kv_heads, "value")
    for name in ("decay", "beta"):
        if ctx.has(name) and (ctx.rank(name) != 3 or ctx.shape(name)[2] not in (
                (kv_heads, kv_heads * key_size) if name == "decay" else (kv_heads, 1))):  # fmt: skip
            raise ShapeError(f"{name} must be [batch, steps, kv heads"
                             f"{' (* key size)' if name == 'decay' else ' or 1'}], got "
                             f"{format_shape(ctx.shape(name))}")  # fmt: skip
    state = [q[0], kv_heads, key_size, value_size]
    if ctx.has("past_state"):
        for a, b in zip(ctx.shape("past_state"), state):
            _same(a, b, f"past_state must be {format_shape(state)}")
    (query,) = float_only(ctx)
    state_type = ctx.element_type("past_state") if ctx.has("past_state") else query.element_type
    out = [q[0], q[1], q_heads * value_size if value_size != DYNAMIC else DYNAMIC]
    return [*result(query.element_type, out), *result(state_type, state)]


def attention_heads(ctx: ShapeContext) -> tuple[int | None, int | None]:
    """(q_num_heads, kv_num_heads) as given, for the rank the operands have."""
    rank = len(ctx.shape("Q"))
    q_heads, kv_heads = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    if rank == 3 and (q_heads is None or kv_heads is None):
        raise ShapeError("3-D Q, K and V need q_num_heads and kv_num_heads")
    return q_heads, kv_heads


def attention(ctx: ShapeContext) -> list[TensorType]:
    q, k, v = ctx.shape("Q"), ctx.shape("K"), ctx.shape("V")
    if not len(q) == len(k) == len(v) or len(q) not in (3, 4):
        raise ShapeError(f"Q, K and V must all be 3-D or all 4-D, got {format_shape(q)}, "
                         f"{format_shape(k)} and {format_shape(v)}")  # fmt: skip
    element_type = ctx.element_type("Q")
    if not is_float(element_type):
        raise ShapeError(f"expects floating-point Q, K and V, got {element_type}")
    q_heads, kv_heads = attention_heads(ctx)
    if len(q) == 3:
        assert q_heads is not None and kv_heads is not None
        batch, q_len, kv_len = q[0], q[1], k[1]
        head = _heads(q[2], q_heads, "Q")
        _same(_heads(k[2], kv_heads, "K"), head, "Q and K must have the same head size")
        v_head = _heads(v[2], kv_heads, "V")
    else:
        batch, q_len, kv_len, head, v_head = q[0], q[2], k[2], q[3], v[3]
        q_heads, kv_heads = q[1], k[1]
        _same(k[3], head, "Q and K must have the same head size")
        _same(v[1], kv_heads, "K and V must have the same heads")
    _same(v[-2 if len(v) == 4 else 1], kv_len, "K and V must have the same sequence")
    if (
        isinstance(q_heads, int)
        and isinstance(kv_heads, int)
        and DYNAMIC not in (q_heads, kv_heads)
    ):
        if kv_heads < 1 or q_heads % kv_heads:
            raise ShapeError(f"Q's heads ({q_heads}) must be a multiple of K's ({kv_heads})")
    total = kv_len
    if ctx.has("past_key") != ctx.has("past_value"):
        raise ShapeError("past_key and past_value must be given together")
    if ctx.has("past_key"):
        if ctx.has("nonpad_kv_seqlen"):
            raise ShapeError("nonpad_kv_seqlen cannot be combined with past_key")
        past_key, past_value = ctx.shape("past_key"), ctx.shape("past_value")
        if len(past_key) != 4 or len(past_value) != 4:
            raise ShapeError("past_key and past_value must be 4-D")
        _same(past_key[3], head, "past_key's head size")
        _same(past_value[3], v_head, "past_value's head size")
        _same(past_key[2], past_value[2], "past_key and past_value must have the same length")
        total = past_key[2] + kv_len if DYNAMIC not in (past_key[2], kv_len) else DYNAMIC
    if ctx.has("attn_mask"):
        mask = ctx.shape("attn_mask")
        if not 1 <= len(mask) <= 4:
            raise ShapeError(f"attn_mask must have rank 1 to 4, got {format_shape(mask)}")
        if len(mask) > 1 and mask[-2] != 1:
            _same(mask[-2], q_len, "attn_mask's rows must be 1 or Q's sequence")
    if ctx.attr("qk_matmul_output_mode") not in (0, 1, 2, 3):
        raise ShapeError(f"qk_matmul_output_mode must be 0 to 3, got "
                         f"{ctx.attr('qk_matmul_output_mode')}")  # fmt: skip
    y = [batch, q_len, q_heads * v_head] if len(q) == 3 and DYNAMIC not in (q_heads, v_head) else (
        [batch, q_len, DYNAMIC] if len(q) == 3 else [batch, q_heads, q_len, v_head])  # fmt: skip
    return [
        *result(element_type, y),
        *result(element_type, [batch, kv_heads, total, head]),
        *result(element_type, [batch, kv_heads, total, v_head]),
        *result(element_type, [batch, q_heads, q_len, total]),
    ]


SPECS = [
    OpSpec("Attention",
           [one("Q"), one("K"), one("V"), opt("attn_mask"), opt("past_key"), opt("past_value"),
            opt("nonpad_kv_seqlen")],
           [one("Y"), one("present_key"), one("present_value"), one("qk_matmul_output")],
           attention,
           attributes=(int_attr("is_causal", 0), int_attr("kv_num_heads"),
                       int_attr("left_window_size", -1), int_attr("q_num_heads"),
                       int_attr("qk_matmul_output_mode", 0), int_attr("right_window_size", -1),
                       float_attr("scale"), float_attr("softcap", 0.0),
                       int_attr("softmax_precision")),
           summary="Scaled dot-product attention over heads, with masks and a KV cache."),
    OpSpec("CausalConvWithState", [one("input"), one("weight"), opt("bias"), opt("past_state")],
           [one("output"), one("present_state")], causal_conv,
           attributes=(string_attr("activation", "none"),),
           summary="Depthwise causal 1-D convolution after a carried state; the new state."),
    OpSpec("LinearAttention",
           [one("query"), one("key"), one("value"), opt("past_state"), opt("decay"),
            opt("beta")], [one("output"), one("present_state")], linear_attention,
           attributes=(int_attr("chunk_size", 64), int_attr("kv_num_heads"),
                       int_attr("q_num_heads"), float_attr("scale", 0.0),
                       string_attr("update_rule", "gated_delta")),
           summary="Attention through a recurrent [key, value] state (linear, gated, delta)."),
    OpSpec("RMSNormalization", [one("X"), one("scale")], [one("Y")], layer_norm,
           mnemonic="rms_normalization", attributes=(int_attr("axis", -1), float_attr("epsilon", 1e-5),
                       int_attr("stash_type", 1)),
           summary="X / sqrt(mean(X^2) + epsilon) * scale over dims [axis, rank)."),
    OpSpec("RotaryEmbedding", [one("X"), one("cos_cache"), one("sin_cache"), opt("position_ids")],
           [one("Y")], rotary_embedding,
           attributes=(int_attr("interleaved", 0), int_attr("num_heads"),
                       int_attr("rotary_embedding_dim", 0)),
           summary="Rotates pairs of each head's first rotary_embedding_dim features."),
    OpSpec("SwiGLU", [one("A"), one("B")], [one("Y")], swiglu, mnemonic="swiglu",
           attributes=(float_attr("alpha", 1.0),),
           summary="A * sigmoid(alpha * A) * B."),
    OpSpec("TensorScatter", [one("past_cache"), one("update"), opt("write_indices")],
           [one("present_cache")], tensor_scatter,
           attributes=(int_attr("axis", -2), string_attr("mode", "linear")),
           summary="Writes update into the cache along axis at each batch entry's index."),
]  # fmt: skip


@graph_op(SPECS)
class AttentionOp(GraphOp): ...


@graph_op(SPECS)
class CausalConvWithStateOp(GraphOp): ...


@graph_op(SPECS)
class LinearAttentionOp(GraphOp): ...


@graph_op(SPECS)
class RMSNormalizationOp(GraphOp): ...


@graph_op(SPECS)
class RotaryEmbeddingOp(GraphOp): ...


@graph_op(SPECS)
class SwiGLUOp(GraphOp): ...


@graph_op(SPECS)
class TensorScatterOp(GraphOp): ...
