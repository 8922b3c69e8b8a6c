"""`loop-expand-math`: f32 `math.exp`, `tanh`, `erf` and `powf` by 2, 3, 4, 0.5, 0.75 as inline `arith` code.

`convert-loop-to-llvm` lowers these ops to `llvm.exp.f32` and to libm's
`tanhf`/`erff`: calls that LLVM's loop vectoriser cannot widen without a
vector math library, so a loop holding one (a softmax, a sigmoid, a GELU)
runs one element at a time. This pass replaces each f32 one by
branch-free `arith` code (compares and `select`s instead of branches) that
the vectoriser turns into vector instructions like any other arithmetic:

- exp(x): x clamped to [-104, 89] (beyond, the result is 0 or +inf in f32;
  at -104 itself, 0 is selected, computed without an underflowing product),
  x = n ln 2 + r with n = round(x / ln 2) (the 1.5 * 2^23 rounding trick)
  and |r| <= ln 2 / 2 (ln 2 in two parts, so n * ln2_hi is exact), e^r by
  a degree-6 polynomial (Cephes' expf), scaled by 2^n as two factors
  2^(n >> 1) and 2^(n - (n >> 1)) built from exponent bits, so that a
  result below the normal range rounds once to a subnormal and one above
  it overflows to +inf;
- tanh(x): for |x| < 0.625 by |x| + |x|^3 P(x^2) (Cephes' tanhf), else
  by 1 - 2 / (e^{2|x|} + 1) with e^{2|x|} as above; then x's sign;
- erf(x): x clamped to [-4, 4] (erf is +-1 in f32 beyond), then an odd
  polynomial over an even one in x^2 (degree 13 over 8; the rational
  approximation Eigen and XLA use for f32);
- powf(x, n) for a constant n of 2, 3 or 4 (`POWERS`; the x^3 of a tanh
  GELU arrives as Pow by an initializer): products of x, where
  `llvm.pow` would be a scalar call as well; for n = 0.5 and 0.75 (LRN's
  (bias + alpha/size sum)^beta), square roots, which vectorise
  (`llvm.sqrt`).

The polynomials' products and sums carry `contract`, so LLVM fuses them
into fused multiply-adds where the CPU has them (two roundings become
one); elsewhere they stay a product and a sum.

The clamps are `arith.minimumf`/`maximumf`, which propagate NaN, so NaN
gives NaN; +-inf give the limits (exp: +inf and 0, tanh and erf: +-1).
Accuracy, measured against float64 over every f32 in steps and at the
edges (tests/passes/test_expand_math.py, docs/semantics.md), with or
without fused multiply-adds: exp within 1 ulp, tanh within 1.5 ulp, erf
within 7 ulp (near |x| = 3, where erf is 1 - 1e-5); glibc's expf and
erff are within 1 ulp, its tanhf within 2.5. The CPU pipeline compares
with a relative tolerance, never bit for bit, so the difference is inside
its correctness bar; where libm's results are wanted,
`--disable-pass loop-expand-math` keeps the calls.

Left alone: other element types (f64, f16: libm keeps its precision),
vector-typed operands and every other math op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, ModuleOp, f32, i32
from xdsl.dialects.func import CallOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ember.dialects.loop import WeightOp
from ember.passes.loop.kernel_buffers import calls_by_callee, passed_values

# exp --------------------------------------------------------------------------

EXP_LOWEST = -104.0
"""Below this, e^x is under half the smallest f32 subnormal: 0."""
EXP_HIGHEST = 89.0
"""Above 88.72, e^x overflows f32: +inf (2^128 from the two scale factors)."""
_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375  # 9 significant bits: n * _LN2_HI is exact for |n| <= 151
_LN2_LO = -2.12194440e-4
_ROUNDER = 12582912.0  # 1.5 * 2^23: t + _ROUNDER rounds t to an integer (|t| < 2^22)
_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
             4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)  # fmt: skip
"""Cephes' expf: e^r = 1 + r + r^2 * P(r), highest degree first."""

# tanh -------------------------------------------------------------------------

TANH_SMALL = 0.625
"""Below this |x|, 1 - 2 / (e^2x + 1) cancels too many bits: the polynomial."""
_TANH_POLY = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2,
              1.33314422036e-1, -3.33332819422e-1)  # fmt: skip
"""Cephes' tanhf: tanh(x) = x + x^3 * P(x^2), highest degree first."""

# erf --------------------------------------------------------------------------

ERF_LIMIT = 4.0
"""Beyond +-4, erf(x) rounds to +-1 in f32."""
_ERF_NUMERATOR = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                  -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                  -1.60960333262415e-02)  # fmt: skip
"""x * N(x^2), highest degree first."""
_ERF_DENOMINATOR = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                    -7.37332916720468e-03, -1.42647390514189e-02)  # fmt: skip
"""D(x^2), highest degree first."""


class ArithEmitter:
    """Builds f32/i32 `arith` ops in front of `anchor`."""

    def __init__(self, rewriter: PatternRewriter, anchor: Operation) -> None:
        self.rewriter, self.anchor = rewriter, anchor

    def emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self.emit(arith.ConstantOp(FloatAttr(value, f32)))

    def int_const(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, i32)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddfOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SubfOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.MulfOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.DivfOp(a, b))

    def clamp(self, x: SSAValue, low: float, high: float) -> SSAValue:
        """x within [low, high]; NaN stays NaN (minimumf/maximumf propagate it)."""
        return self.emit(arith.MinimumfOp(self.emit(arith.MaximumfOp(x, self.const(low))),
                                          self.const(high)))  # fmt: skip

    def polynomial(self, x: SSAValue, coefficients: tuple[float, ...]) -> SSAValue:
        """The polynomial in x with `coefficients` (highest degree first), by Horner."""
        result = self.const(coefficients[0])
        contract = arith.FastMathFlagsAttr(["contract"])
        for c in coefficients[1:]:
            product = self.emit(arith.MulfOp(result, x, contract))
            result = self.emit(arith.AddfOp(product, self.const(c), contract))
        return result

    def power_of_two(self, n: SSAValue) -> SSAValue:
        """2^n as f32 for an i32 n in [-126, 127], from its exponent bits."""
        biased = self.emit(arith.AddiOp(n, self.int_const(127)))
        bits = self.emit(arith.ShLIOp(biased, self.int_const(23)))
        return self.emit(arith.BitcastOp(bits, f32))


def expand_exp(e: ArithEmitter, x: SSAValue) -> SSAValue:
    """e^x (module docstring)."""
    x = e.clamp(x, EXP_LOWEST, EXP_HIGHEST)
    # e^x rounds to 0 at the lowest x: computed from x = 0 there and replaced
    # by 0 after, so that no product underflows (on x86 an underflowing
    # product takes a microcode assist, ~100 cycles a vector: a masked
    # softmax's -10000s or -infs would pay one per vector).
    zero = e.const(0.0)
    underflows = e.emit(arith.CmpfOp(x, e.const(EXP_LOWEST), "ole"))
    x = e.emit(arith.SelectOp(underflows, zero, x))
    rounder = e.const(_ROUNDER)
    shifted = e.add(e.mul(x, e.const(_LOG2E)), rounder)  # n + 1.5 * 2^23, exactly
    n_float = e.sub(shifted, rounder)
    n = e.emit(arith.SubiOp(e.emit(arith.BitcastOp(shifted, i32)),
                            e.emit(arith.BitcastOp(rounder, i32))))  # fmt: skip
    r = e.sub(e.sub(x, e.mul(n_float, e.const(_LN2_HI))), e.mul(n_float, e.const(_LN2_LO)))
    p = e.add(e.add(e.mul(e.mul(r, r), e.polynomial(r, _EXP_POLY)), r), e.const(1.0))
    # n lies in [-150, 129]: each half is a normal power of two.
    low = e.emit(arith.ShRSIOp(n, e.int_const(1)))
    high = e.emit(arith.SubiOp(n, low))
    result = e.mul(e.mul(p, e.power_of_two(low)), e.power_of_two(high))
    return e.emit(arith.SelectOp(underflows, zero, result))


def expand_tanh(e: ArithEmitter, x: SSAValue) -> SSAValue:
    """tanh(x) (module docstring), computed for |x| and given x's sign last,
    so that tanh(-0) is -0."""
    magnitude = e.emit(math.AbsFOp(x))
    z = e.mul(magnitude, magnitude)
    small = e.add(magnitude, e.mul(e.mul(magnitude, z), e.polynomial(z, _TANH_POLY)))
    one = e.const(1.0)
    grown = expand_exp(e, e.add(magnitude, magnitude))
    large = e.sub(one, e.div(e.const(2.0), e.add(grown, one)))
    is_small = e.emit(arith.CmpfOp(magnitude, e.const(TANH_SMALL), "olt"))
    return e.emit(math.CopySignOp(e.emit(arith.SelectOp(is_small, small, large)), x))


def expand_erf(e: ArithEmitter, x: SSAValue) -> SSAValue:
    """erf(x) (module docstring)."""
    x = e.clamp(x, -ERF_LIMIT, ERF_LIMIT)
    z = e.mul(x, x)
    # x times the ratio, not x * N over D: x * N underflows for a subnormal x.
    ratio = e.div(e.polynomial(z, _ERF_NUMERATOR), e.polynomial(z, _ERF_DENOMINATOR))
    return e.mul(x, ratio)


EXPANSIONS: dict[type[Operation], Callable[[ArithEmitter, SSAValue], SSAValue]] = {
    math.ExpOp: expand_exp,
    math.TanhOp: expand_tanh,
    math.ErfOp: expand_erf,
}
"""The expanded ops and their f32 code."""


def _cube(e: ArithEmitter, x: SSAValue) -> SSAValue:
    return e.mul(e.mul(x, x), x)


def _fourth(e: ArithEmitter, x: SSAValue) -> SSAValue:
    square = e.mul(x, x)
    return e.mul(square, square)


def _root(e: ArithEmitter, x: SSAValue, root: SSAValue) -> SSAValue:
    """`root` (a power of x built from square roots) where pow differs from
    the square roots only at -inf: pow(-inf, y) is +inf for 0 < y < 1, the
    root NaN; -0 and every other negative x already come out as pow's."""
    minus_infinity = e.emit(arith.CmpfOp(x, e.const(-float("inf")), "oeq"))
    return e.emit(arith.SelectOp(minus_infinity, e.const(float("inf")), root))


def _square_root(e: ArithEmitter, x: SSAValue) -> SSAValue:
    # + 0 makes sqrt(-0) = -0 the +0 that pow(-0, 0.5) is (and changes nothing else).
    return _root(e, x, e.add(e.emit(math.SqrtOp(x)), e.const(0.0)))


def _three_quarters(e: ArithEmitter, x: SSAValue) -> SSAValue:
    # sqrt(-0) * sqrt(sqrt(-0)) = -0 * -0 = +0, as pow(-0, 0.75).
    half = e.emit(math.SqrtOp(x))
    return _root(e, x, e.mul(half, e.emit(math.SqrtOp(half))))


POWERS: dict[float, Callable[[ArithEmitter, SSAValue], SSAValue]] = {
    2.0: lambda e, x: e.mul(x, x),
    3.0: _cube,
    4.0: _fourth,
    0.5: _square_root,
    0.75: _three_quarters,
}
"""x^n by products for a constant exponent n (as a GELU's x^3), and by
square roots for 0.5 and 0.75 (LRN's beta in AlexNet, ZFNet and
Inception-v1): x * x and sqrt(x) are pow's correctly rounded result, x^3
and x^4 round twice (within 1.3 and 1.9 ulp), sqrt(x) * sqrt(sqrt(x))
three times (within 2.5 ulp; 2.2 measured); NaN, +-inf, +-0, negative x and overflow come
out as pow gives them."""


def constant_scalar(value: SSAValue,
                    calls: Mapping[str, Sequence[CallOp]] | None = None) -> float | None:  # fmt: skip
    """The value of `value` where it is a constant: an `arith.constant`, or
    a load from a one-element `loop.weight` (an ONNX initializer that the
    graph level kept as a tensor), or in a kernel function a load from an
    argument that every call (`calls`, by callee) passes such a weight of
    one value."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return owner.value.value.data
    if not isinstance(owner, memref.LoadOp):
        return None
    passed = passed_values(owner.memref, calls or {})
    if passed is None:
        return _one_element(owner.memref)
    values = {_one_element(value) for value in passed}
    return values.pop() if len(values) == 1 else None


def _one_element(buffer: SSAValue) -> float | None:
    """The value of a one-element f32 `loop.weight`, else None."""
    weight = buffer.owner
    if not isinstance(weight, WeightOp):
        return None
    dense = weight.value
    if dense.get_type().element_count() == 1 and isinstance(
        dense.get_type().get_element_type(), Float32Type
    ):
        return float(dense.get_values()[0])
    return None


class ExpandMath(RewritePattern):
    """An f32 scalar op of `EXPANSIONS` becomes its inline `arith` code."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: math.ExpOp | math.TanhOp | math.ErfOp, rewriter: PatternRewriter
    ) -> None:
        if not isinstance(op.result.type, Float32Type):
            return
        emitter = ArithEmitter(rewriter, op)
        rewriter.replace(op, [], [EXPANSIONS[type(op)](emitter, op.operand)])


class ExpandPower(RewritePattern):
    """An f32 `math.powf` whose exponent is a constant of `POWERS` becomes
    products or square roots; `calls` (by callee) find the weights a kernel
    function's arguments receive."""

    def __init__(self, calls: Mapping[str, Sequence[CallOp]] | None = None):
        self.calls = calls

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.PowFOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.result.type, Float32Type):
            return
        power = POWERS.get(constant_scalar(op.rhs, self.calls))  # type: ignore[arg-type]
        if power is None:
            return
        rewriter.replace(op, [], [power(ArithEmitter(rewriter, op), op.lhs)])


@dataclass(frozen=True)
class ExpandMathPass(ModulePass):
    """Replaces f32 `math.exp`, `math.tanh`, `math.erf` and `math.powf` by
    a constant 2, 3, 4, 0.5 or 0.75 by branch-free code that LLVM vectorises
    (exp within 1 ulp, tanh 1.5, erf 7); other types and math ops stay calls."""

    name = "loop-expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([ExpandMath(), ExpandPower(calls_by_callee(op))])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)


__all__ = [
    "EXPANSIONS",
    "POWERS",
    "ArithEmitter",
    "ExpandMath",
    "ExpandMathPass",
    "ExpandPower",
    "constant_scalar",
]
