"""Graph-to-tensor lowering of the elementwise family."""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    IntegerType,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ember.dialects.graph import (
    AbsOp,
    AcoshOp,
    AcosOp,
    AddOp,
    AndOp,
    AsinhOp,
    AsinOp,
    AtanhOp,
    AtanOp,
    BitCastOp,
    BitShiftOp,
    BitwiseAndOp,
    BitwiseNotOp,
    BitwiseOrOp,
    BitwiseXorOp,
    CastOp,
    CeilOp,
    CeluOp,
    ClipOp,
    CoshOp,
    CosOp,
    DivOp,
    DropoutOp,
    EluOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GeluOp,
    GraphOp,
    GreaterOp,
    GreaterOrEqualOp,
    HardSigmoidOp,
    HardSwishOp,
    IdentityOp,
    IsInfOp,
    IsNaNOp,
    LeakyReluOp,
    LessOp,
    LessOrEqualOp,
    LogOp,
    MaxOp,
    MeanOp,
    MinOp,
    MishOp,
    ModOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PowOp,
    PReluOp,
    ReciprocalOp,
    ReluOp,
    RoundOp,
    SeluOp,
    ShrinkOp,
    SigmoidOp,
    SignOp,
    SinhOp,
    SinOp,
    SoftplusOp,
    SoftsignOp,
    SqrtOp,
    SubOp,
    SumOp,
    SwishOp,
    TanhOp,
    TanOp,
    ThresholdedReluOp,
    WhereOp,
    XorOp,
)
from ember.dialects.graph.symbolic import symbols_of
from ember.dialects.graph.types import is_float, is_narrow_float
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    Body,
    Check,
    Emitter,
    FamilyPattern,
    Lowering,
    _bits,
    _elem,
    _identity,
    _is_unsigned,
    _map,
    _shape,
    symbolic_broadcast_problem,
)
from ember.lowering.graph_to_tensor.random import counter_uniform, flat_position

# ------------------------------------------------------------- elementwise

ScalarFn = Callable[[Body, list[SSAValue], Attribute], SSAValue]
"""Builds the scalar body of an elementwise op: (builder, input block arguments,
result element type) -> the value to yield."""


def _math(op_class: type[Operation]) -> ScalarFn:
    return lambda b, x, t: b.math(op_class, x[0])


def _binary(method: Callable[[Body, SSAValue, SSAValue], SSAValue]) -> ScalarFn:
    return lambda b, x, t: method(b, x[0], x[1])


def _compare(relation: str) -> ScalarFn:
    return lambda b, x, t: b.cmp(relation, x[0], x[1])


def _fold(method: Callable[[Body, SSAValue, SSAValue], SSAValue]) -> ScalarFn:
    def body(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
        value = x[0]
        for other in x[1:]:
            value = method(b, value, other)
        return value

    return body


def _mean(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.div(_fold(Body.add)(b, x, t), b.const(len(x), t))


def _relu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.max(x[0], b.const(0, t))


def _sign(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """1, -1, or the input itself (0, -0.0, NaN)."""
    v, zero = x[0], b.const(0, t)
    if _is_unsigned(t) or t == i1:
        return b.select(b.cmp("gt", v, zero), b.const(1, t), zero)
    negative = b.select(b.cmp("lt", v, zero), b.const(-1, t), v if is_float(t) else zero)
    return b.select(b.cmp("gt", v, zero), b.const(1, t), negative)


def _reciprocal(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.div(b.const(1, t), x[0])


def _sigmoid(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    one = b.const(1, t)
    return b.div(one, b.add(one, b.exp(b.neg(x[0]))))


def _softplus_of(b: Body, v: SSAValue) -> SSAValue:
    """log(1 + exp(v)) as max(v, 0) + log1p(exp(-|v|)), which never overflows."""
    tail = b.math(xmath.Log1pOp, b.exp(b.neg(b.abs(v))))
    return b.add(b.max(v, b.const(0, v.type)), tail)


def _softplus(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return _softplus_of(b, x[0])


def _mish(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.mul(x[0], b.math(xmath.TanhOp, _softplus_of(b, x[0])))


def _softsign(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.div(x[0], b.add(b.const(1, t), b.abs(x[0])))


def _clamp01(b: Body, v: SSAValue) -> SSAValue:
    return b.min(b.max(v, b.const(0, v.type)), b.const(1, v.type))


def _hard_sigmoid(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    linear = b.add(b.mul(b.const(b.attr("alpha"), t), x[0]), b.const(b.attr("beta"), t))
    return _clamp01(b, linear)


def _hard_swish(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """x * clamp(x / 6 + 0.5, 0, 1)."""
    linear = b.add(b.div(x[0], b.const(6, t)), b.const(0.5, t))
    return b.mul(x[0], _clamp01(b, linear))


def _leaky_relu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    v = x[0]
    scaled = b.mul(b.const(b.attr("alpha"), t), v)
    return b.select(b.cmp("lt", v, b.const(0, t)), scaled, v)


def _elu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """x < 0 ? alpha * expm1(x) : x."""
    v = x[0]
    negative = b.mul(b.const(b.attr("alpha"), t), b.math(xmath.ExpM1Op, v))
    return b.select(b.cmp("lt", v, b.const(0, t)), negative, v)


def _selu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """gamma * (x > 0 ? x : alpha * expm1(x))."""
    v = x[0]
    negative = b.mul(b.const(b.attr("alpha"), t), b.math(xmath.ExpM1Op, v))
    inner = b.select(b.cmp("gt", v, b.const(0, t)), v, negative)
    return b.mul(b.const(b.attr("gamma"), t), inner)


def _celu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """max(x, 0) + min(0, alpha * expm1(x / alpha))."""
    v, zero, alpha = x[0], b.const(0, t), b.const(b.attr("alpha"), t)
    negative = b.mul(alpha, b.math(xmath.ExpM1Op, b.div(v, alpha)))
    return b.add(b.max(v, zero), b.min(zero, negative))


def _thresholded_relu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    v = x[0]
    return b.select(b.cmp("gt", v, b.const(b.attr("alpha"), t)), v, b.const(0, t))


def _gelu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    v, half, one = x[0], b.const(0.5, t), b.const(1, t)
    if b.attr("approximate") == "tanh":
        cube = b.mul(b.mul(v, v), v)
        inner = b.add(v, b.mul(b.const(0.044715, t), cube))
        curve = b.math(xmath.TanhOp, b.mul(b.const(math.sqrt(2 / math.pi), t), inner))
    else:
        curve = b.math(xmath.ErfOp, b.div(v, b.const(math.sqrt(2), t)))
    return b.mul(b.mul(half, v), b.add(one, curve))


def _swish(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """x * sigmoid(alpha * x)."""
    return b.mul(x[0], _sigmoid(b, [b.mul(b.const(b.attr("alpha"), t), x[0])], t))


def _shrink(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """x + bias below -lambd, x - bias above lambd, 0 between."""
    v = x[0]
    wide = f64 if not is_float(t) else t  # an integer input compares with float bounds
    w = b.convert(v, wide)
    lambd, bias = b.const(b.attr("lambd"), wide), b.const(b.attr("bias"), wide)
    low = b.select(b.cmp("lt", w, b.neg(lambd)), b.add(w, bias), b.const(0, wide))
    return b.convert(b.select(b.cmp("gt", w, lambd), b.sub(w, bias), low), t)


def _is_inf(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    v, src = x[0], x[0].type
    found = b.const(0, i1)
    for attr, infinity in (("detect_positive", math.inf), ("detect_negative", -math.inf)):
        if b.attr(attr):
            found = b.or_(found, b.cmpf("oeq", v, b.const(infinity, src)))
    return found


def _bitwise_not(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.xor(x[0], b.const(-1, t))


def _bit_shift(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """A shift by a negative amount or by the width or more (one unsigned
    comparison) gives 0, or the sign fill for a signed right shift; LLVM's
    shifts are poison there."""
    v, amount = x
    width = b.const(_bits(t), t)
    outside = b.emit(arith.CmpiOp(amount, width, "uge"))
    if b.attr("direction") == "LEFT":
        return b.select(outside, b.const(0, t), b.emit(arith.ShLIOp(v, amount)))
    if _is_unsigned(t):
        return b.select(outside, b.const(0, t), b.emit(arith.ShRUIOp(v, amount)))
    clamped = b.select(outside, b.const(_bits(t) - 1, t), amount)
    return b.emit(arith.ShRSIOp(v, clamped))


def _prelu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    v, slope = x
    return b.select(b.cmp("lt", v, b.const(0, t)), b.mul(v, slope), v)


def _where(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.select(*x)


def _clip(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """x < min ? min : x, then max < that ? max : that, for the bounds that are
    present. Ordered comparisons, as onnxruntime: a NaN input stays NaN, a NaN
    bound clips nothing, and min > max gives max (docs/semantics.md)."""
    value, bounds = x[0], iter(x[1:])
    if b.has("min"):
        low = next(bounds)
        value = b.select(b.cmp("lt", value, low), low, value)
    if b.has("max"):
        high = next(bounds)
        value = b.select(b.cmp("lt", high, value), high, value)
    return value


def _cast(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.convert(x[0], t, bool(b.attr("saturate")), b.attr("round_mode"))


def _bit_cast(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """A float <-> integer reinterpretation is `arith.bitcast`; between integer
    types (i1 and ui8, i8 and ui8: same bits) it is the modular conversion."""
    v = x[0]
    if is_float(v.type) or is_float(t):
        return b.emit(arith.BitcastOp(v, t))
    return b.convert(v, t)


def _pow(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """powf for float bases (exponent converted to the base type); an integer
    base goes through f64 powf and truncates back to the base's type, which is
    exact while the result fits in 53 bits."""
    base, exponent = x
    if is_float(t):
        return b.math(xmath.PowFOp, base, b.convert(exponent, t))
    wide = b.math(xmath.PowFOp, b.convert(base, f64), b.convert(exponent, f64))
    return b.convert(wide, t)


def _mod(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """fmod=1: C remainder (sign of the dividend). fmod=0: Python's (sign of the
    divisor): the remainder plus the divisor when their signs differ."""
    a, d = x
    r = b.rem(a, d)
    if b.attr("fmod") or _is_unsigned(t):
        return r
    zero = b.const(0, t)
    signs_differ = b.xor(b.cmp("lt", r, zero), b.cmp("lt", d, zero))
    adjust = b.and_(b.cmp("ne", r, zero), signs_differ)
    result = b.select(adjust, b.add(r, d), r)
    if is_float(t):  # a zero result takes the divisor's sign, as NumPy's mod does
        result = b.select(b.cmp("eq", result, zero), b.math(xmath.CopySignOp, result, d), result)
    return result


SCALAR_BODIES: dict[type[GraphOp], ScalarFn] = {
    # unary
    AbsOp: lambda b, x, t: b.abs(x[0]),
    NegOp: lambda b, x, t: b.neg(x[0]),
    ReluOp: _relu,
    SignOp: _sign,
    IdentityOp: lambda b, x, t: x[0],
    SigmoidOp: _sigmoid,
    TanhOp: _math(xmath.TanhOp),
    ExpOp: _math(xmath.ExpOp),
    LogOp: _math(xmath.LogOp),
    SqrtOp: _math(xmath.SqrtOp),
    ReciprocalOp: _reciprocal,
    FloorOp: _math(xmath.FloorOp),
    CeilOp: _math(xmath.CeilOp),
    RoundOp: _math(xmath.RoundEvenOp),
    ErfOp: _math(xmath.ErfOp),
    SinOp: _math(xmath.SinOp),
    CosOp: _math(xmath.CosOp),
    TanOp: _math(xmath.TanOp),
    AsinOp: _math(xmath.AsinOp),
    AcosOp: _math(xmath.AcosOp),
    AtanOp: _math(xmath.AtanOp),
    SinhOp: _math(xmath.SinhOp),
    CoshOp: _math(xmath.CoshOp),
    SoftplusOp: _softplus,
    SoftsignOp: _softsign,
    HardSwishOp: _hard_swish,
    MishOp: _mish,
    LeakyReluOp: _leaky_relu,
    EluOp: _elu,
    CeluOp: _celu,
    ThresholdedReluOp: _thresholded_relu,
    SeluOp: _selu,
    HardSigmoidOp: _hard_sigmoid,
    GeluOp: _gelu,
    AcoshOp: _math(xmath.AcoshOp),
    AsinhOp: _math(xmath.AsinhOp),
    AtanhOp: _math(xmath.AtanhOp),
    SwishOp: _swish,
    ShrinkOp: _shrink,
    BitwiseNotOp: _bitwise_not,
    IsInfOp: _is_inf,
    NotOp: lambda b, x, t: b.not_(x[0]),
    IsNaNOp: lambda b, x, t: b.is_nan(x[0]),
    CastOp: _cast,
    BitCastOp: _bit_cast,
    ClipOp: _clip,
    # binary
    AddOp: _binary(Body.add),
    SubOp: _binary(Body.sub),
    MulOp: _binary(Body.mul),
    DivOp: _binary(Body.div),
    EqualOp: _compare("eq"),
    LessOp: _compare("lt"),
    LessOrEqualOp: _compare("le"),
    GreaterOp: _compare("gt"),
    GreaterOrEqualOp: _compare("ge"),
    AndOp: _binary(Body.and_),
    OrOp: _binary(Body.or_),
    XorOp: _binary(Body.xor),
    BitwiseAndOp: _binary(Body.and_),
    BitwiseOrOp: _binary(Body.or_),
    BitwiseXorOp: _binary(Body.xor),
    BitShiftOp: _bit_shift,
    PowOp: _pow,
    ModOp: _mod,
    PReluOp: _prelu,
    WhereOp: _where,
    # variadic
    SumOp: _fold(Body.add),
    MaxOp: _fold(Body.max),
    MinOp: _fold(Body.min),
    MeanOp: _mean,
}


def _elementwise(body: ScalarFn) -> Lowering:
    def lower(e: Emitter, op: GraphOp) -> list[SSAValue]:
        result = op.results[0]
        t = _elem(result)
        return [e.parallel(list(op.operands), _shape(result), t, lambda b, x: body(b, x, t))]

    return lower


def _in_f32(body: ScalarFn) -> ScalarFn:
    """`body` computing in f32 where an operand or the result is a narrow float
    (bf16, float8, float4: stored, not computed in; docs/types.md): the
    operands widened exactly, the result rounded once, to nearest even."""

    def widened(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
        if not any(is_narrow_float(v.type) for v in x) and not is_narrow_float(t):
            return body(b, x, t)
        wide = [b.convert(v, f32) if is_narrow_float(v.type) else v for v in x]
        value = body(b, wide, f32 if is_narrow_float(t) else t)
        return b.convert(value, t, saturate=False)

    return widened


def _lower_dropout(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Without training_mode, data itself (and a mask of true). With it, one
    generic writing output and mask: an element is kept unless training_mode
    is true and its uniform (`dropout_uniforms`: SplitMix64 at its flat
    position, top 24 bits times 2^-24, in f32) is below ratio (in f32); kept
    elements are scaled by 1 / (1 - ratio) (rounded to the data's type)
    when training, dropped ones are 0."""
    data = op.operands[0]
    shape, t = _shape(data), _elem(data)
    (ratio,), (training,) = (op.operand_group(name) or [None]
                             for name in ("ratio", "training_mode"))  # fmt: skip
    if training is None:
        return [data, e.fill(1, shape, i1)][: len(op.results)]
    seed, rank = op.attr("seed"), len(shape)
    scalars = [v for v in (ratio, training) if v is not None]

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        x, on = a[0], a[len(scalars)]
        p = b.convert(a[1], f32) if ratio is not None else b.const(0.5, f32)
        uniform = counter_uniform(b, seed, flat_position(b, shape))
        keep = b.or_(b.not_(on), b.cmp("ge", uniform, p))
        scale = b.convert(b.div(b.const(1, f32), b.sub(b.const(1, f32), p)), t)
        if is_narrow_float(t):  # no arithmetic in t: the exact product in f32, rounded once
            scaled = b.convert(b.mul(b.convert(x, f32), b.convert(scale, f32)), t, saturate=False)
        else:
            scaled = b.mul(x, scale)
        dropped = b.select(keep, scaled, b.const(0, t))
        return [b.select(on, dropped, x), keep][: len(op.results)]

    outputs = [e.empty(shape, t), e.empty(shape, i1)][: len(op.results)]
    maps = [_identity(rank), *[_map(rank, [0] * len(_shape(v))) for v in scalars],
            *[_identity(rank)] * len(outputs)]  # fmt: skip
    return e.generic([data, *scalars], outputs, maps, [PARALLEL] * rank, body)


def _check_dropout(op: GraphOp) -> str | None:
    """Training mode needs float data and, for the flat positions, static sizes."""
    if not op.operand_group("training_mode"):
        return None
    if not is_float(_elem(op.operands[0])):
        return "training mode on integer data"
    names = symbols_of(_shape(op.operands[0]))
    if names:
        return f"symbolic sizes ({', '.join(sorted(names))}) not lowered yet"
    return None


def _check_pow(op: GraphOp) -> str | None:
    if _is_unsigned(_elem(op.operands[0])):
        return "unsigned integer base"
    return None


def _check_cast(op: GraphOp) -> str | None:
    src, to = _elem(op.operands[0]), _elem(op.results[0])
    both_int = isinstance(src, IntegerType) and isinstance(to, IntegerType)
    if both_int and src != to and _bits(src) == _bits(to) == 64:
        return f"cast {src} to {to}"
    return None


def _with_broadcast_check(check: Check | None) -> Check:
    def checked(op: GraphOp) -> str | None:
        return symbolic_broadcast_problem(op) or (check(op) if check is not None else None)

    return checked


class ElementwisePattern(FamilyPattern):
    """Elementwise ops: one all-parallel generic each, body from SCALAR_BODIES;
    Dropout (`_lower_dropout`)."""

    lowerings = {
        **{op_class: _elementwise(body if op_class is CastOp else _in_f32(body))
           for op_class, body in SCALAR_BODIES.items()},
        DropoutOp: _lower_dropout,
    }  # fmt: skip
    checks = {
        **{op_class: _with_broadcast_check({PowOp: _check_pow,
                                            CastOp: _check_cast}.get(op_class))
           for op_class in SCALAR_BODIES},
        DropoutOp: _check_dropout,
    }  # fmt: skip
    symbolic = frozenset({*SCALAR_BODIES, DropoutOp})
