"""Random `graph` ops: ONNX RandomUniform, RandomUniformLike, RandomNormal,
RandomNormalLike, Bernoulli and Multinomial, and the counter-based generator they share
with Dropout's masks.

The generator is SplitMix64 (Steele, Lea and Flood, 2014) used as a
counter: the n-th number (from 1) from a 64-bit seed is a function of the
seed and n alone, so every element draws its numbers from its flat
position (row-major) with no state carried between elements, and the
reference interpreter and the compiled code give the same bits. A uniform
in [0, 1) is the number's top 24 bits times 2^-24: exact in f32.

- RandomUniform(Like): element n (from 1) is low + (high - low) * U(n),
  computed in f32 (high - low rounded to f32 once), then converted to the
  output type (rounding may reach `high` itself).
- RandomNormal(Like): Box-Muller on two uniforms per element (positions 2n
  - 1 and 2n): z = sqrt(-2 ln(1 - U(2n - 1))) cos(2 pi U(2n)) in f64 (libm's
  log and cos), rounded to f32, then mean + scale * z in f32, converted to
  the output type. 1 - U is in (0, 1], so |z| <= sqrt(48 ln 2) ~ 5.77.
- Bernoulli: element n is 1 where U(n) < p (compared in f64, exactly),
  else 0, in the output type.
- Multinomial: per row of logits, w = exp(x - max) in f64 (libm's exp) and
  its running sums left to right; output element n (row-major) is the first
  class whose running sum is not <= U(n) * the row's total (the last class
  if none).

ONNX's `seed` of these ops is a float: the generator's seed is its float32
bits read as an unsigned integer (distinct seeds never collide). Without a
seed attribute the seed is `DEFAULT_RANDOM_SEED` (0, Dropout's default):
every run, and every unseeded op of one shape, gives the same numbers.
ONNX leaves the generator to the runtime, so the numbers differ from
onnxruntime's and NumPy's.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType, i32, i64
from xdsl.ir import Attribute

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result
from ember.dialects.graph.spec import AttrSpec, OpSpec, float_attr, int_attr, ints_attr, one
from ember.dialects.graph.types import (
    UnsupportedTypeError,
    element_type_from_onnx,
    is_float,
)

# ---------------------------------------------------------------- the generator

SPLITMIX64_INCREMENT = 0x9E3779B97F4A7C15
SPLITMIX64_STEPS = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, 1))
"""SplitMix64: the n-th number (from 1) from `seed` is seed + n * INCREMENT,
then for each (shift, factor) z = (z ^ z >> shift) * factor, modulo 2^64."""
UNIFORM_BITS = 24
"""A uniform in [0, 1) is the top 24 bits of a SplitMix64 number times
2^-24: exact in every float type that has 24 bits of precision."""
DEFAULT_RANDOM_SEED = 0
"""The seed of a random op without a `seed` attribute."""
TWO_PI = 2 * math.pi
"""2 pi in f64, the factor of Box-Muller's angle."""


def splitmix64(seed: int, positions: np.ndarray) -> np.ndarray:
    """The SplitMix64 numbers (uint64) at `positions` (from 1) from `seed`."""
    z = np.uint64(seed % 2**64) + positions.astype(np.uint64) * np.uint64(SPLITMIX64_INCREMENT)
    for shift, factor in SPLITMIX64_STEPS:
        z = (z ^ (z >> np.uint64(shift))) * np.uint64(factor)
    return z


def counter_uniforms(seed: int, positions: np.ndarray) -> np.ndarray:
    """The uniforms in [0, 1) (float32) at `positions` (from 1) from `seed`."""
    top = splitmix64(seed, positions) >> np.uint64(64 - UNIFORM_BITS)
    return top.astype(np.float32) * np.float32(2.0**-UNIFORM_BITS)


def dropout_uniforms(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """The uniform Dropout compares with ratio at each element of `shape`:
    the one at the element's flat position (row-major, from 1) from `seed`."""
    return counter_uniforms(seed, np.arange(1, math.prod(shape) + 1)).reshape(shape)


def generator_seed(seed: float | None) -> int:
    """The generator's seed for a random op's float `seed` attribute: its
    float32 bits; `DEFAULT_RANDOM_SEED` without one."""
    if seed is None:
        return DEFAULT_RANDOM_SEED
    return int(np.float32(seed).view(np.uint32))


def uniform_values(seed: float | None, shape: tuple[int, ...], low: float,
                   high: float) -> np.ndarray:  # fmt: skip
    """RandomUniform's numbers (float32) for a `seed` attribute."""
    u = dropout_uniforms(generator_seed(seed), shape)
    return np.float32(low) + (np.float32(high) - np.float32(low)) * u


def normal_values(seed: float | None, shape: tuple[int, ...], mean: float,
                  scale: float) -> np.ndarray:  # fmt: skip
    """RandomNormal's numbers (float32) for a `seed` attribute: Box-Muller
    in f64 through Python's `math.log` and `math.cos` (the C library's, as
    the compiled code calls them), rounded to f32 before the affine map."""
    count = math.prod(shape)
    odd = np.arange(1, 2 * count, 2)
    u1 = (np.float32(1) - counter_uniforms(generator_seed(seed), odd)).astype(np.float64)
    u2 = counter_uniforms(generator_seed(seed), odd + 1).astype(np.float64)
    log = np.frompyfunc(math.log, 1, 1)(u1).astype(np.float64)
    cos = np.frompyfunc(math.cos, 1, 1)(TWO_PI * u2).astype(np.float64)
    z = (np.sqrt(-2.0 * log) * cos).astype(np.float32)
    return (np.float32(mean) + np.float32(scale) * z).reshape(shape)


def bernoulli_values(seed: float | None, p: np.ndarray) -> np.ndarray:
    """Bernoulli's draws (bool) for probabilities `p`: U(n) < p in f64."""
    u = dropout_uniforms(generator_seed(seed), p.shape).astype(np.float64)
    return u < p.astype(np.float64)


def multinomial_values(seed: float | None, x: np.ndarray, samples: int) -> np.ndarray:
    """Multinomial's classes (int64 [B, samples]) for logits `x` [B, C]:
    in f64, w = exp(x - max) (`math.exp`, the C library's), running sums
    left to right; sample n (row-major, from 1) of a row is the first class
    whose running sum is not <= U(n) * the row's total (the last class if
    none)."""
    wide = x.astype(np.float64)
    shifted = wide - wide.max(axis=1, keepdims=True)
    running = np.cumsum(np.frompyfunc(math.exp, 1, 1)(shifted).astype(np.float64), axis=1)
    count = x.shape[0] * samples
    u = counter_uniforms(generator_seed(seed), np.arange(1, count + 1)).astype(np.float64)
    threshold = u.reshape(x.shape[0], samples) * running[:, -1:]
    below = (running[:, None, :] <= threshold[:, :, None]).sum(axis=2)
    return np.minimum(below, x.shape[1] - 1).astype(np.int64)


# ---------------------------------------------------------------- shape rules


def _dtype(ctx: ShapeContext, like: str | None) -> Attribute:
    """The element type the `dtype` attribute names; without one, the
    element type of operand `like`, which must then be a float."""
    dtype = ctx.attr("dtype")
    if dtype is None:
        if like is None:  # dtype has a default where there is no input
            raise ShapeError("dtype is missing")
        element = ctx.element_type(like)
        if not is_float(element):
            raise ShapeError(f"{like} must be a float tensor without dtype, got {ctx.type(like)}")
        return element
    try:
        return element_type_from_onnx(int(dtype))
    except UnsupportedTypeError as error:
        raise ShapeError(f"dtype: {error}") from error


def _random_float(element: Attribute) -> None:
    if not is_float(element):
        raise ShapeError(f"dtype must be a float type, got {element}")


def random_of_shape(ctx: ShapeContext) -> list[TensorType]:
    """RandomUniform, RandomNormal: `dtype` (a float) of `shape`."""
    shape = [int(d) for d in ctx.attr("shape")]
    if any(d < 0 for d in shape):
        raise ShapeError(f"shape must not hold negative sizes, got {shape}")
    element = _dtype(ctx, None)
    _random_float(element)
    return result(element, shape)


def random_like(ctx: ShapeContext) -> list[TensorType]:
    """RandomUniformLike, RandomNormalLike: input's shape, in `dtype` (a
    float) or input's type."""
    element = _dtype(ctx, "input")
    _random_float(element)
    return result(element, ctx.shape("input"))


def bernoulli(ctx: ShapeContext) -> list[TensorType]:
    """input's shape (float probabilities), in `dtype` or input's type."""
    if not is_float(ctx.element_type("input")):
        raise ShapeError(f"input must be a float tensor, got {ctx.type('input')}")
    return result(_dtype(ctx, "input"), ctx.shape("input"))


def multinomial(ctx: ShapeContext) -> list[TensorType]:
    """[batch, sample_size] in dtype (int32 or int64) from float logits [batch, classes]."""
    shape = ctx.shape("input")
    if len(shape) != 2 or not is_float(ctx.element_type("input")):
        raise ShapeError(f"input must be a 2-D float tensor, got {ctx.type('input')}")
    element = _dtype(ctx, None)
    if element not in (i32, i64):
        raise ShapeError(f"dtype must be int32 or int64, got {element}")
    samples = int(ctx.attr("sample_size"))
    if samples < 1:
        raise ShapeError(f"sample_size must be positive, got {samples}")
    return result(element, [shape[0], samples])


_SEED = float_attr("seed")
_UNIFORM = (float_attr("high", 1.0), float_attr("low", 0.0), _SEED)
_NORMAL = (float_attr("mean", 0.0), float_attr("scale", 1.0), _SEED)
_DTYPE: AttrSpec = int_attr("dtype")

SPECS = [
    OpSpec("RandomUniform", [], [one("output")], random_of_shape,
           attributes=(int_attr("dtype", 1), *_UNIFORM, ints_attr("shape", required=True)),
           summary="Uniform numbers in [low, high) of `shape`: low + (high - low) * U, U the "
                   "top 24 bits of the SplitMix64 number at each element's flat position."),
    OpSpec("RandomUniformLike", [one("input")], [one("output")], random_like,
           attributes=(_DTYPE, *_UNIFORM),
           summary="RandomUniform of input's shape, in dtype or input's type."),
    OpSpec("RandomNormal", [], [one("output")], random_of_shape,
           attributes=(int_attr("dtype", 1), *_NORMAL, ints_attr("shape", required=True)),
           summary="Normal numbers of `shape`: mean + scale * z, z by Box-Muller on two "
                   "SplitMix64 uniforms per element."),
    OpSpec("RandomNormalLike", [one("input")], [one("output")], random_like,
           attributes=(_DTYPE, *_NORMAL),
           summary="RandomNormal of input's shape, in dtype or input's type."),
    OpSpec("Bernoulli", [one("input")], [one("output")], bernoulli,
           attributes=(_DTYPE, _SEED),
           summary="1 where the SplitMix64 uniform at the element's flat position is below "
                   "the probability input, else 0, in dtype or input's type."),
    OpSpec("Multinomial", [one("input")], [one("output")], multinomial,
           attributes=(int_attr("dtype", 6), int_attr("sample_size", 1), _SEED),
           summary="sample_size classes per row of logits: the first whose running sum "
                   "of exp(x - max) exceeds a SplitMix64 uniform times the row's total."),
]  # fmt: skip


@graph_op(SPECS)
class RandomUniformOp(GraphOp): ...


@graph_op(SPECS)
class RandomUniformLikeOp(GraphOp): ...


@graph_op(SPECS)
class RandomNormalOp(GraphOp): ...


@graph_op(SPECS)
class RandomNormalLikeOp(GraphOp): ...


@graph_op(SPECS)
class BernoulliOp(GraphOp): ...


@graph_op(SPECS)
class MultinomialOp(GraphOp): ...
