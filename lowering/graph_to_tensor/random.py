"""Graph-to-tensor lowering of the random ops (RandomUniform, RandomNormal,
their Like forms, Bernoulli, Multinomial) and the generator's scalar code
that Dropout's masks share.

Each op but Multinomial is one all-parallel generic over its result whose body computes,
from the element's flat position, the SplitMix64 numbers
`ember.dialects.graph.ops_random` defines, in the same arithmetic as the
reference kernels (so the bits agree): the uniform in f32, Box-Muller's
log, square root and cosine in f64, the affine map in f32, then the
conversion to the result type. A Like op and Bernoulli read only their
input's shape (Bernoulli its probabilities too). Multinomial reduces its
logits first (`_lower_multinomial`). Positions need static sizes: symbolic
ones are refused.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import f32, f64, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue

from ember.dialects.graph import (
    BernoulliOp,
    GraphOp,
    MultinomialOp,
    RandomNormalLikeOp,
    RandomNormalOp,
    RandomUniformLikeOp,
    RandomUniformOp,
)
from ember.dialects.graph.ops_random import (
    SPLITMIX64_INCREMENT,
    SPLITMIX64_STEPS,
    TWO_PI,
    UNIFORM_BITS,
    generator_seed,
)
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    Shape,
    _dims_map,
    _elem,
    _identity,
    _shape,
)


def _signed(value: int) -> int:
    """A 64-bit pattern as the i64 constant that holds it."""
    return value - 2**64 if value >= 2**63 else value


def splitmix64(b: Body, seed: int, position: SSAValue) -> SSAValue:
    """The SplitMix64 number at `position` (i64, from 1) from `seed`
    (`SPLITMIX64_STEPS`); i64 arithmetic wraps, as the generator's does."""
    z = b.add(b.const(_signed(seed % 2**64), i64),
              b.mul(position, b.const(_signed(SPLITMIX64_INCREMENT), i64)))  # fmt: skip
    for shift, factor in SPLITMIX64_STEPS:
        z = b.xor(z, b.emit(arith.ShRUIOp(z, b.const(shift, i64))))
        if factor != 1:
            z = b.mul(z, b.const(_signed(factor), i64))
    return z


def counter_uniform(b: Body, seed: int, position: SSAValue) -> SSAValue:
    """The uniform in [0, 1) (f32) at `position` from `seed`: the top 24
    bits of its SplitMix64 number times 2^-24 (`counter_uniforms`)."""
    top = b.emit(arith.ShRUIOp(splitmix64(b, seed, position), b.const(64 - UNIFORM_BITS, i64)))
    return b.mul(b.emit(arith.SIToFPOp(top, f32)), b.const(2.0**-UNIFORM_BITS, f32))


def flat_position(b: Body, shape: Shape) -> SSAValue:
    """The row-major position of the current element, from 1, as i64."""
    position = b.const(1, i64)
    for dim in range(len(shape)):
        index = b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(dim)), i64))
        stride = math.prod(shape[dim + 1 :])
        position = b.add(position, index if stride == 1 else b.mul(index, b.const(stride, i64)))
    return position


def _uniform(b: Body, seed: int, shape: Shape) -> SSAValue:
    """low + (high - low) * U at the element, in f32."""
    low, high = (b.attr(name) for name in ("low", "high"))
    span = float(np.float32(high) - np.float32(low))  # rounded once, as the reference
    u = counter_uniform(b, seed, flat_position(b, shape))
    return b.add(b.const(low, f32), b.mul(b.const(span, f32), u))


def _normal(b: Body, seed: int, shape: Shape) -> SSAValue:
    """mean + scale * z at the element (f32), z by Box-Muller in f64 from
    the uniforms at positions 2n - 1 and 2n, rounded to f32."""
    second = b.mul(flat_position(b, shape), b.const(2, i64))
    first = b.sub(second, b.const(1, i64))
    u1 = b.sub(b.const(1, f32), counter_uniform(b, seed, first))
    u2 = counter_uniform(b, seed, second)
    log = b.math(xmath.LogOp, b.convert(u1, f64))
    radius = b.math(xmath.SqrtOp, b.mul(b.const(-2.0, f64), log))
    angle = b.mul(b.const(TWO_PI, f64), b.convert(u2, f64))
    z = b.convert(b.mul(radius, b.math(xmath.CosOp, angle)), f32)
    return b.add(b.const(b.attr("mean"), f32), b.mul(b.const(b.attr("scale"), f32), z))


def _lower_random(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """One generic writing the result; its body draws the element's number
    (`_uniform` or `_normal`) and converts it to the result type."""
    out = op.results[0]
    shape, t = _shape(out), _elem(out)
    seed = generator_seed(op.attr("seed"))
    draw = _normal if isinstance(op, RandomNormalOp | RandomNormalLikeOp) else _uniform

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        return [b.convert(draw(b, seed, shape), t, saturate=False)]

    rank = len(shape)
    return e.generic([], [e.empty(shape, t)], [_identity(rank)], [PARALLEL] * rank, body)


def _lower_bernoulli(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """One generic reading the probabilities: U < p, compared in f64 (both
    exact there), as the result type."""
    p, out = op.operands[0], op.results[0]
    shape, t = _shape(out), _elem(out)
    seed = generator_seed(op.attr("seed"))

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        u = b.convert(counter_uniform(b, seed, flat_position(b, shape)), f64)
        return [b.convert(b.cmp("lt", u, b.convert(a[0], f64)), t)]

    rank = len(shape)
    return e.generic([p], [e.empty(shape, t)], [_identity(rank)] * 2, [PARALLEL] * rank, body)


def _lower_multinomial(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """In f64: the row maxima (a reduction), w = exp(x - max) (one generic),
    the row totals (a reduction, left to right); then one generic over
    (row, sample, class) reducing over the classes, which carries the
    running sum and the chosen class (`classes` until one is chosen): the
    first class whose running sum is not <= U(n) * total (`ugt`: NaN
    chooses); then the choice, at most the last class, in the result type."""
    x, out = op.operands[0], op.results[0]
    (rows, classes), (_, samples) = _shape(x), _shape(out)
    seed = generator_seed(op.attr("seed"))
    by_row = _dims_map(2, [0])
    top = e.reduction(x, [1], float("-inf"), f64, lambda b, a: b.max(a[1], b.convert(a[0], f64)))

    def weight(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.math(xmath.ExpOp, b.sub(b.convert(a[0], f64), a[1]))

    w = e.parallel([x, top], (rows, classes), f64, weight, maps=[_identity(2), by_row])
    total = e.reduction(w, [1], 0.0, f64, lambda b, a: b.add(a[1], a[0]))

    def choose(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        w, total, running, chosen = a
        u = b.convert(counter_uniform(b, seed, flat_position(b, (rows, samples))), f64)
        running = b.add(running, w)
        first = b.and_(b.cmpf("ugt", running, b.mul(u, total)),
                       b.cmp("eq", chosen, b.const(classes, i64)))  # fmt: skip
        here = b.emit(arith.IndexCastOp(b.emit(linalg.IndexOp(2)), i64))
        return [running, b.select(first, here, chosen)]

    outputs = [e.fill(0.0, (rows, samples), f64), e.fill(classes, (rows, samples), i64)]
    maps = [_dims_map(3, [0, 2]), _dims_map(3, [0]), *[_dims_map(3, [0, 1])] * 2]
    _, chosen = e.generic([w, total], outputs, maps, [PARALLEL, PARALLEL, REDUCTION], choose)
    t = _elem(out)

    def last_at_most(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.convert(b.min(a[0], b.const(classes - 1, i64)), t)

    return [e.parallel([chosen], (rows, samples), t, last_at_most)]


class RandomPattern(FamilyPattern):
    """RandomUniform, RandomNormal, their Like forms and Bernoulli: one
    all-parallel generic each; Multinomial (`_lower_multinomial`). Static sizes."""

    lowerings = {
        RandomUniformOp: _lower_random,
        RandomUniformLikeOp: _lower_random,
        RandomNormalOp: _lower_random,
        RandomNormalLikeOp: _lower_random,
        BernoulliOp: _lower_bernoulli,
        MultinomialOp: _lower_multinomial,
    }
