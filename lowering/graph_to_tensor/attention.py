"""Graph-to-tensor lowering of the transformer family: Attention,
RMSNormalization, RotaryEmbedding, SwiGLU, TensorScatter and
CausalConvWithState.

Attention becomes a composition of tensor-level ops (docs/attention.md):
the 3-D layout's K and V are split into heads ([batch, heads, sequence,
size]) and appended to the past caches (`tensor.concat`); Q is viewed as
[batch, kv heads, group, sequence, size], so that grouped-query attention
needs no copy of the keys (query head h of group g reads key head h); then
one contraction generic gives the scores, one parallel generic scales,
softcaps and masks them (the causal and window limits from the row and
column indices, a boolean mask as a select, a float one added, both padded
with "hidden" past their last column, `nonpad_kv_seqlen` per batch entry),
the softmax is a max reduction, an exp-sum reduction and a division (a row
with every column hidden gives zeros), and a second contraction generic
multiplies by V, writing Y in the layout of Q.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, TensorType, f32, i1, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Region, SSAValue

from ember.dialects import ember_linalg
from ember.dialects.graph import (
    AttentionOp,
    CausalConvWithStateOp,
    GraphOp,
    LinearAttentionOp,
    RMSNormalizationOp,
    RotaryEmbeddingOp,
    SwiGLUOp,
    TensorScatterOp,
)
from ember.dialects.graph.types import tensor_type
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    _bits,
    _dim,
    _dims_map,
    _elem,
    _identity,
    _map,
    _normalize_axis,
    _shape,
    _transpose,
    broadcast_map,
    generic,
)
from ember.lowering.graph_to_tensor.normalization import _sum

# ----------------------------------------------------------- element-wise


def _lower_rms_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A sum of squares over dims [axis, rank), in f32 for narrower inputs
    when stash_type is 1; then x / sqrt(sum / count + epsilon) * scale."""
    x, scale = op.operand_group("X")[0], op.operand_group("scale")[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    ct = f32 if op.attr("stash_type") == 1 and _bits(t) < 32 else t
    count, eps = math.prod(shape[axis:]), op.attr("epsilon")

    def square(b: Body, a: list[SSAValue]) -> SSAValue:
        v = b.convert(a[0], ct)
        return _sum(b, a[1], b.mul(v, v))

    squares = e.reduction(x, range(axis, rank), 0, ct, square)

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        mean = b.div(a[1], b.const(count, ct))
        rms = b.math(xmath.SqrtOp, b.add(mean, b.const(eps, ct)))
        return b.convert(b.mul(b.div(b.convert(a[0], ct), rms), b.convert(a[2], ct)), t)

    maps = [_identity(rank), _dims_map(rank, range(axis)), broadcast_map(_shape(scale), shape)]
    return [e.parallel([x, squares, scale], shape, t, body, maps=maps)]


def _lower_swiglu(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """a / (1 + exp(-alpha * a)) * b."""
    a, b_ = op.operand_group("A")[0], op.operand_group("B")[0]
    t, alpha = _elem(a), op.attr("alpha")

    def body(b: Body, v: list[SSAValue]) -> SSAValue:
        one = b.const(1.0, t)
        gate = b.add(one, b.exp(b.mul(b.const(-alpha, t), v[0])))
        return b.mul(b.div(v[0], gate), v[1])

    return [e.parallel([a, b_], _shape(a), t, body)]


# ------------------------------------------------------- rotary embedding


def _lower_rotary(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Views X as [batch, sequence, heads, size] (3-D) or keeps [batch,
    heads, sequence, size]; the halves (or even and odd features) of the
    rotated part are strided slices, cos and sin are gathered at the
    positions, one generic gives both rotated halves, and concatenations
    (through a trailing pair axis when interleaved) put them back."""
    x = op.operand_group("X")[0]
    cos, sin = op.operand_group("cos_cache")[0], op.operand_group("sin_cache")[0]
    shape, t = _shape(x), _elem(x)
    if len(shape) == 3:
        heads = op.attr("num_heads")
        x4 = e.reshape(x, [shape[0], shape[1], heads, shape[2] // heads])
        sequence = 1
    else:
        x4, sequence = x, 2
    view = _shape(x4)
    size = view[3]
    rotary = op.attr("rotary_embedding_dim") or size
    half = rotary // 2
    positions = op.operand_group("position_ids")
    batch_sequence = [view[0], view[sequence], half]
    if positions:
        maps = ember_linalg.along_axis(2, 0, 2)
        cos, sin = (e.value(ember_linalg.GatherOp.on_tensors(c, positions[0],
                                                             tensor_type(t, batch_sequence), maps))
                    for c in (cos, sin))  # fmt: skip
    interleaved = op.attr("interleaved")
    part = [*view[:3], half]
    stride = [1, 1, 1, 2 if interleaved else 1]
    first = e.extract(x4, [0, 0, 0, 0], part, stride)
    second = e.extract(x4, [0, 0, 0, 1 if interleaved else half], part, stride)
    table = _dims_map(4, [0, sequence, 3])
    block = Block(arg_types=[t] * 6)
    b = Body(block, op)
    x1, x2, c, s = block.args[:4]
    real = b.sub(b.mul(c, x1), b.mul(s, x2))
    imaginary = b.add(b.mul(s, x1), b.mul(c, x2))
    block.add_op(linalg.YieldOp(real, imaginary))
    turned = list(e.emit(generic(
        [first, second, cos, sin], [e.empty(part, t), e.empty(part, t)],
        [_identity(4), _identity(4), table, table, _identity(4), _identity(4)],
        [PARALLEL] * 4, Region(block))).results)  # fmt: skip
    if interleaved:
        pairs = [e.reshape(v, [*part, 1]) for v in turned]
        joined = e.value(tensor.ConcatOp(pairs, 4, TensorType(t, [*part, 2])))
        turned = [e.reshape(joined, [*view[:3], rotary])]
    rest = [e.extract(x4, [0, 0, 0, rotary], [*view[:3], size - rotary])] if rotary < size else []
    y = e.value(tensor.ConcatOp([*turned, *rest], 3, TensorType(t, list(view))))
    return [e.reshape(y, shape)]


# ---------------------------------------------------------- tensor scatter


def _lower_tensor_scatter(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """`ember_linalg.scatter` of the update (ScatterElements along `axis`)
    at the indices write_indices[b] + i (modulo the cache's length when
    circular); a linear write past the end is skipped, as a scatter skips
    every index out of range."""
    past, update = op.operand_group("past_cache")[0], op.operand_group("update")[0]
    shape, rank = _shape(past), len(_shape(past))
    axis = _normalize_axis(op.attr("axis"), rank)
    starts = op.operand_group("write_indices")
    start = starts[0] if starts else e.fill(0, [shape[0]], i64)
    circular = op.attr("mode") == "circular"

    def index(b: Body, a: list[SSAValue]) -> SSAValue:
        row = b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(axis)), i64))
        value = b.add(b.convert(a[0], i64), row)
        return b.rem(value, b.const(shape[axis], i64)) if circular else value

    indices = e.parallel([start], _shape(update), i64, index, maps=[_dims_map(rank, [0])])
    block = Block(arg_types=[_elem(past)] * 2)
    block.add_op(linalg.YieldOp(block.args[0]))
    maps = ember_linalg.per_element(rank, axis)
    return [e.value(ember_linalg.ScatterOp.build_scatter(update, indices, past, maps,
                                                         Region(block)))]  # fmt: skip


# ------------------------------------------------------------- causal conv


def _lower_causal_conv(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """The past state (zeros by default) and the input concatenated along the
    length; a reduction generic over the window, reading the sequence at
    t + k (each channel its own weights); bias and SiLU in one generic; the
    new state a slice of the sequence's last k - 1 positions."""
    x, weight = op.operand_group("input")[0], op.operand_group("weight")[0]
    (batch, channels, length), t = _shape(x), _elem(x)
    window = _shape(weight)[2]
    past = op.operand_group("past_state")
    state = past[0] if past else e.fill(0, [batch, channels, window - 1], t)
    sequence = x if window == 1 else e.value(tensor.ConcatOp(
        [state, x], 2, TensorType(t, [batch, channels, length + window - 1])))  # fmt: skip
    b, c, step, k = (_dim(i) for i in range(4))
    maps = [_map(4, [b, c, step + k]), _map(4, [c, 0, k]), _dims_map(4, [0, 1, 2])]
    ct = f32 if _bits(t) < 32 else t  # f16 sums in f32, as ONNX's reference
    total = e.generic(
        [sequence, weight], [e.fill(0, [batch, channels, length], ct)], maps,
        [PARALLEL] * 3 + [REDUCTION],
        lambda bd, a: [bd.add(a[2], bd.mul(bd.convert(a[0], ct), bd.convert(a[1], ct)))],
    )[0]  # fmt: skip
    bias = op.operand_group("bias")
    silu = op.attr("activation") in ("silu", "swish")

    def finish(bd: Body, a: list[SSAValue]) -> SSAValue:
        """The convolution rounded to t (bias included), then SiLU in ct."""
        value = bd.convert(bd.add(a[0], bd.convert(a[1], ct)) if bias else a[0], t)
        if silu:
            wide = bd.convert(value, ct)
            gate = bd.add(bd.const(1.0, ct), bd.exp(bd.neg(wide)))
            value = bd.convert(bd.div(wide, gate), t)
        return value

    maps = [_identity(3), *([_dims_map(3, [1])] if bias else [])]
    y = e.parallel([total, *bias], [batch, channels, length], t, finish, maps=maps)
    present = e.extract(sequence, [0, 0, length], [batch, channels, window - 1])
    return [y, present]


# -------------------------------------------------------- linear attention


def _lower_linear_attention(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """An `scf.for` over the steps carrying the state [batch, kv heads, key
    size, value size] (in f32) and the output: each step slices its query,
    key, value, decay and beta, decays the state (gated rules), corrects the
    value by the state's reading of the key times beta (delta rules), adds
    key x value, and reads the state with the query heads of each group."""
    q, k, v = (op.operand_group(n)[0] for n in ("query", "key", "value"))
    t = _elem(q)
    batch, steps, _ = _shape(q)
    q_heads, kv_heads = op.attr("q_num_heads"), op.attr("kv_num_heads")
    state_shape = _shape(op.results[1])
    key_size, value_size = state_shape[2], state_shape[3]
    group = q_heads // kv_heads
    scale = op.attr("scale") or 1 / math.sqrt(key_size)
    past = op.operand_group("past_state")
    state = (e.parallel([past[0]], state_shape, f32, lambda b, a: b.convert(a[0], f32)) if past
             else e.fill(0, state_shape, f32))  # fmt: skip
    output = e.fill(0, [batch, steps, q_heads * value_size], f32)
    block = Block(arg_types=[IndexType(), state.type, output.type])
    step, carried, out = block.args
    inner = e.inside(block)

    def at_step(x: SSAValue, heads: int) -> SSAValue:
        """x's row at the step as [batch, heads, size]."""
        width = _shape(x)[2]
        row = inner.extract(x, [0, step, 0], [batch, 1, width])
        return inner.reshape(row, [batch, heads, width // heads])

    key = at_step(k, kv_heads)
    value = at_step(v, kv_heads)
    four = _identity(4)
    decay, beta = op.operand_group("decay"), op.operand_group("beta")
    if decay:
        gate = at_step(decay[0], kv_heads)
        gate_map = _dims_map(4, [0, 1, 2]) if _shape(gate)[2] == key_size else _map(
            4, [_dim(0), _dim(1), 0])  # fmt: skip
        carried = inner.parallel([carried, gate], state_shape, f32,
                                 lambda b, a: b.mul(a[0], b.exp(b.convert(a[1], f32))),
                                 maps=[four, gate_map])  # fmt: skip
    if beta:
        weights = at_step(beta[0], _shape(beta[0])[2])
        read = inner.generic(
            [carried, key], [inner.fill(0, [batch, kv_heads, value_size], f32)],
            [four, _dims_map(4, [0, 1, 2]), _dims_map(4, [0, 1, 3])],
            [PARALLEL, PARALLEL, REDUCTION, PARALLEL],
            lambda b, a: [b.add(a[2], b.mul(a[0], b.convert(a[1], f32)))],
        )[0]  # fmt: skip
        beta_map = _map(3, [_dim(0), _dim(1) if _shape(weights)[1] == kv_heads else 0, 0])
        value = inner.parallel(
            [value, read, weights], [batch, kv_heads, value_size], f32,
            lambda b, a: b.mul(b.convert(a[2], f32), b.sub(b.convert(a[0], f32), a[1])),
            maps=[_identity(3), _identity(3), beta_map],
        )  # fmt: skip
    carried = inner.parallel(
        [carried, key, value], state_shape, f32,
        lambda b, a: b.add(a[0], b.mul(b.convert(a[1], f32), b.convert(a[2], f32))),
        maps=[four, _dims_map(4, [0, 1, 2]), _dims_map(4, [0, 1, 3])],
    )  # fmt: skip
    # out[b, kh, g, m] = scale * sum_d query[b, kh * group + g, d] * state[b, kh, d, m]
    query = inner.reshape(at_step(q, q_heads), [batch, kv_heads, group, key_size])
    read = inner.generic(
        [query, carried], [inner.fill(0, [batch, kv_heads, group, value_size], f32)],
        [_dims_map(5, [0, 1, 2, 4]), _dims_map(5, [0, 1, 4, 3]), _dims_map(5, [0, 1, 2, 3])],
        [PARALLEL] * 4 + [REDUCTION],
        lambda b, a: [b.add(a[2], b.mul(b.convert(a[0], f32), a[1]))],
    )[0]  # fmt: skip
    scaled = inner.parallel(
        [read], _shape(read), f32, lambda b, a: b.mul(a[0], b.const(scale, f32))
    )
    row = inner.reshape(scaled, [batch, 1, q_heads * value_size])
    block.add_op(scf.YieldOp(carried, inner.insert(row, out, [0, step, 0])))
    bounds = [e.sizes.size(d) for d in (0, steps, 1)]
    final_state, final_output = e.emit(scf.ForOp(*bounds, [state, output], block)).results
    return [_cast(e, final_output, t), _cast(e, final_state, _elem(op.results[1]))]


# ---------------------------------------------------------------- attention


def _heads_first(e: Emitter, x: SSAValue, heads: int) -> SSAValue:
    """[batch, sequence, heads * size] -> [batch, heads, sequence, size]."""
    batch, sequence, hidden = _shape(x)
    return _transpose(e, e.reshape(x, [batch, sequence, heads, hidden // heads]), (0, 2, 1, 3))


def _lower_attention(e: Emitter, op: GraphOp) -> list[SSAValue]:
    q, k, v = (op.operand_group(name)[0] for name in ("Q", "K", "V"))
    t = _elem(q)
    layout3 = len(_shape(q)) == 3
    if layout3:
        q = e.reshape(q, [*_shape(q)[:2], op.attr("q_num_heads"),
                          _shape(q)[2] // op.attr("q_num_heads")])  # fmt: skip
        q = _transpose(e, q, (0, 2, 1, 3))
        k, v = (_heads_first(e, x, op.attr("kv_num_heads")) for x in (k, v))
    past_key, past_value = op.operand_group("past_key"), op.operand_group("past_value")
    past = _shape(past_key[0])[2] if past_key else 0
    if past_key:
        k, v = (e.value(tensor.ConcatOp([p[0], x], 2, op.result_types[i]))
                for i, p, x in ((1, past_key, k), (2, past_value, v)))  # fmt: skip
    batch, q_heads, q_len, size = _shape(q)
    kv_heads, total, v_size = _shape(k)[1], _shape(k)[2], _shape(v)[3]
    group = q_heads // kv_heads
    ct = f32 if op.attr("softmax_precision") == 1 or _bits(t) < 32 else t

    # scores[b, kh, g, i, j] = sum_d q[b, kh * group + g, i, d] * k[b, kh, j, d], the
    # keys transposed first so that the key index j, the scores' innermost, is
    # theirs too: the contraction then runs as the CPU's vector micro-kernels
    q5 = e.reshape(q, [batch, kv_heads, group, q_len, size])
    keys = _transpose(e, k, (0, 1, 3, 2))
    space = 6
    maps = [_dims_map(space, [0, 1, 2, 3, 5]), _dims_map(space, [0, 1, 5, 4]),
            _dims_map(space, [0, 1, 2, 3, 4])]  # fmt: skip
    scores5 = e.generic(
        [q5, keys], [e.fill(0, [batch, kv_heads, group, q_len, total], ct)], maps,
        [PARALLEL] * 5 + [REDUCTION],
        lambda b, a: [b.add(a[2], b.mul(b.convert(a[0], ct), b.convert(a[1], ct)))],
    )[0]  # fmt: skip
    grid = [batch, q_heads, q_len, total]
    scores = e.reshape(scores5, grid)
    scale, softcap = op.attr("scale"), op.attr("softcap")
    scale = 1 / math.sqrt(size) if scale is None else scale

    scaled = e.parallel([scores], grid, ct, lambda b, a: b.mul(a[0], b.const(scale, ct)))
    capped = scaled
    if softcap > 0:

        def cap(b: Body, a: list[SSAValue]) -> SSAValue:
            ratio = b.div(a[0], b.const(softcap, ct))
            return b.mul(b.math(xmath.TanhOp, ratio), b.const(softcap, ct))

        capped = e.parallel([scaled], grid, ct, cap)
    biased = _masked(e, op, capped, past, q_len, total)
    probabilities = _softmax(e, biased)
    p5 = e.reshape(probabilities, [batch, kv_heads, group, q_len, total])
    # y[b, kh, g, i, c] = sum_j p[b, kh, g, i, j] * v[b, kh, j, c], written in Q's layout
    out5 = [batch, kv_heads, group, q_len, v_size]
    maps = [_dims_map(space, [0, 1, 2, 3, 5]), _dims_map(space, [0, 1, 5, 4]),
            _dims_map(space, [0, 1, 2, 3, 4])]  # fmt: skip
    y5 = e.generic(
        [p5, v], [e.fill(0, out5, ct)], maps, [PARALLEL] * 5 + [REDUCTION],
        lambda b, a: [b.add(a[2], b.mul(a[0], b.convert(a[1], ct)))],
    )[0]  # fmt: skip
    y = e.reshape(y5, [batch, q_heads, q_len, v_size])
    if layout3:
        y = _transpose(e, y, (0, 2, 1, 3))
    y = e.reshape(_cast(e, y, t), _shape(op.results[0]))
    mode = op.attr("qk_matmul_output_mode")
    qk = {0: scaled, 1: capped, 2: biased, 3: probabilities}[mode]
    return [y, k, v, _cast(e, qk, t)]


def _cast(e: Emitter, x: SSAValue, t: object) -> SSAValue:
    if _elem(x) == t:
        return x
    return e.parallel([x], _shape(x), t, lambda b, a: b.convert(a[0], t))  # type: ignore[arg-type]


def _masked(e: Emitter, op: GraphOp, scaled: SSAValue, past: int, q_len: int, total: int):  # noqa: ANN202
    """scaled + the mask, with -inf where the causal, window or padding
    limits hide a column (a boolean mask's False hides one too)."""
    grid, ct = _shape(scaled), _elem(scaled)
    inputs, maps = [scaled], [_identity(4)]
    masks = op.operand_group("attn_mask")
    if masks:
        mask = masks[0]
        missing = total - _shape(mask)[-1]
        mask = e.pad(mask, [0] * len(_shape(mask)), [0] * (len(_shape(mask)) - 1) + [missing],
                     0 if _elem(mask) == i1 else -math.inf)  # fmt: skip
        inputs.append(mask)
        maps.append(broadcast_map(_shape(mask), grid))
    nonpad = op.operand_group("nonpad_kv_seqlen")
    if nonpad:
        inputs.append(nonpad[0])
        maps.append(_dims_map(4, [0]))
    causal = op.attr("is_causal")
    left, right = op.attr("left_window_size"), op.attr("right_window_size")

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        value, hidden = a[0], b.const(-math.inf, ct)
        rest = a[1:]
        if masks:
            mask = rest.pop(0)
            value = b.select(mask, value, hidden) if mask.type == i1 else (
                b.add(value, b.convert(mask, ct)))  # fmt: skip
        row, column = (b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(d)), i64)) for d in (2, 3))
        conditions = []
        if nonpad:
            length = b.convert(rest[0], i64)
            conditions.append(b.cmp("lt", column, length))
            offset = b.sub(length, b.const(q_len, i64))
        else:
            offset = b.const(past, i64)
        frontier = b.add(row, offset)  # the query's position among the keys
        if causal:
            conditions.append(b.cmp("le", column, frontier))
        if left >= 0:
            conditions.append(b.cmp("le", b.sub(frontier, column), b.const(left, i64)))
        if right >= 0:
            conditions.append(b.cmp("le", b.sub(column, frontier), b.const(right, i64)))
        for condition in conditions:
            value = b.select(condition, value, hidden)
        return value

    return e.parallel(inputs, grid, ct, body, maps=maps)


def _softmax(e: Emitter, x: SSAValue) -> SSAValue:
    """Softmax over the last axis; a row whose every entry is -inf gives zeros
    (its maximum counts as 0, its sum is 0)."""
    shape, ct = _shape(x), _elem(x)
    rank = len(shape)
    kept = _dims_map(rank, range(rank - 1))
    peak = e.reduction(x, [rank - 1], -math.inf, ct, lambda b, a: b.max(a[1], a[0]))

    def shifted_exp(b: Body, a: list[SSAValue]) -> SSAValue:
        finite = b.cmpf("one", a[1], b.const(-math.inf, ct))
        return b.exp(b.sub(a[0], b.select(finite, a[1], b.const(0, ct))))

    powers = e.parallel([x, peak], shape, ct, shifted_exp, maps=[_identity(rank), kept])
    total = e.reduction(powers, [rank - 1], 0, ct, lambda b, a: _sum(b, a[1], a[0]))

    def normalize(b: Body, a: list[SSAValue]) -> SSAValue:
        positive = b.cmpf("ogt", a[1], b.const(0, ct))
        return b.select(positive, b.div(a[0], a[1]), b.const(0, ct))

    return e.parallel([powers, total], shape, ct, normalize, maps=[_identity(rank), kept])


class TransformerPattern(FamilyPattern):
    """Attention, CausalConvWithState, RMSNormalization, RotaryEmbedding, SwiGLU,
    TensorScatter."""

    lowerings = {
        AttentionOp: _lower_attention,
        CausalConvWithStateOp: _lower_causal_conv,
        LinearAttentionOp: _lower_linear_attention,
        RMSNormalizationOp: _lower_rms_norm,
        RotaryEmbeddingOp: _lower_rotary,
        SwiGLUOp: _lower_swiglu,
        TensorScatterOp: _lower_tensor_scatter,
    }
