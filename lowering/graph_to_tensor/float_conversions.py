"""Conversions between the narrow floats and f32/f64, as integer bit manipulation.

Ember stores `bf16`, the float8 types (`f8E4M3FN`, `f8E4M3FNUZ`, `f8E5M2`,
`f8E5M2FNUZ`) and `f4E2M1FN` but computes in f32 (docs/types.md); LLVM has
no instructions for most of them, so a conversion is integer arithmetic on
the bits, emitted into a `linalg.generic` body:

- `narrow_to_float`: exact (every narrow value is an f32 value). The
  significand (with its implicit bit for a normal number) converted to f32
  times a power of two built from its exponent bits; the sign, infinities
  and NaNs of the format put back by selects.
- `float_to_narrow`: rounds to nearest, ties to even, once, from the
  source's own bits (f32, or f64 without a detour through f32, which would
  round twice). Out of range (infinities included) saturates to the largest
  finite value when `saturate` (ONNX Cast's attribute, float8 targets only:
  `onnx.numpy_helper.saturate_cast`), else becomes infinity where the format
  has one, NaN where it has only that, and the largest value for `f4E2M1FN`,
  which has neither. Results are those of `ml_dtypes` (what onnx's reference
  computes with) bit for bit, NaN payloads aside
  (tests/lowering/test_float_conversions.py checks every pattern).

`f8E8M0FNU` (a power of two: 8 exponent bits, no sign, no mantissa, 0xFF
NaN) has its own pair: `float_to_e8m0` takes f32's exponent bits and
rounds as ONNX Cast's `round_mode` says (up, the default, when any
fraction bit is set; down; or nearest, ties up), stopping at the largest
value (2^127) when `saturate`; `e8m0_to_float` is the power of two.

Both work in the source's integer width (i32 for f32, i64 for f64) and
treat it as unsigned; the narrow value's bits are an `arith.bitcast` of it,
which the LLVM lowering makes no instruction (a narrow float's LLVM type is
the integer of its width, `llvm_types.scalar_type`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, bf16, f32, f64
from xdsl.ir import Attribute, Operation, SSAValue

from ember.dialects.graph.types import (
    f4E2M1FN,
    f8E4M3FN,
    f8E4M3FNUZ,
    f8E5M2,
    f8E5M2FNUZ,
    f8E8M0FNU,
)


class Specials(Enum):
    """Which special values a format has."""

    IEEE = "ieee"  # infinities (exponent all ones, mantissa 0) and NaNs (mantissa not 0)
    FN = "fn"  # no infinities; NaN is every bit but the sign set
    FNUZ = "fnuz"  # no infinities, no -0; NaN is the sign bit alone
    NONE = "none"  # neither (f4E2M1FN)


@dataclass(frozen=True)
class FloatFormat:
    exponent: int
    mantissa: int
    bias: int
    specials: Specials

    @property
    def bits(self) -> int:
        return 1 + self.exponent + self.mantissa

    @property
    def max_finite(self) -> int:
        """The bits of the largest finite magnitude."""
        all_ones = (1 << (self.exponent + self.mantissa)) - 1
        match self.specials:
            case Specials.IEEE:
                return all_ones - (1 << self.mantissa)  # exponent all ones but one, mantissa full
            case Specials.FN:
                return all_ones - 1
            case _:
                return all_ones

    @property
    def infinity(self) -> int:
        return ((1 << self.exponent) - 1) << self.mantissa


FORMATS: dict[Attribute, FloatFormat] = {
    bf16: FloatFormat(8, 7, 127, Specials.IEEE),
    f8E4M3FN: FloatFormat(4, 3, 7, Specials.FN),
    f8E4M3FNUZ: FloatFormat(4, 3, 8, Specials.FNUZ),
    f8E5M2: FloatFormat(5, 2, 15, Specials.IEEE),
    f8E5M2FNUZ: FloatFormat(5, 2, 16, Specials.FNUZ),
    f4E2M1FN: FloatFormat(2, 1, 1, Specials.NONE),
}
"""The narrow floats' layouts: sign, exponent and mantissa bits, bias."""

_WIDE = {f32: FloatFormat(8, 23, 127, Specials.IEEE), f64: FloatFormat(11, 52, 1023, Specials.IEEE)}


Emit = Callable[[Operation], SSAValue]
"""Appends an op to the body being built and gives its result (`Body.emit`)."""


Operand = SSAValue | int
"""An SSA value, or an int for a constant of the arithmetic's width."""


def _binary(op_class: type[Operation]) -> Callable[[_Ints, Operand, Operand], SSAValue]:
    def method(self: _Ints, a: Operand, b: Operand) -> SSAValue:
        return self.binary(op_class, a, b)

    return method


class _Ints:
    """Unsigned integer arithmetic of one width, appended to a block by `emit`."""

    def __init__(self, emit: Emit, t: IntegerType):
        self.emit, self.t = emit, t

    def const(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp.from_int_and_width(value, self.t))

    def _value(self, v: Operand) -> SSAValue:
        return self.const(v) if isinstance(v, int) else v

    def binary(self, op: type[Operation], a: Operand, b: Operand) -> SSAValue:
        return self.emit(op(self._value(a), self._value(b)))  # type: ignore[call-arg]

    add = _binary(arith.AddiOp)
    sub = _binary(arith.SubiOp)
    and_ = _binary(arith.AndIOp)
    or_ = _binary(arith.OrIOp)
    shl = _binary(arith.ShLIOp)
    shr = _binary(arith.ShRUIOp)  # unsigned: the values are bit patterns

    def cmp(self, relation: str, a: Operand, b: Operand) -> SSAValue:
        return self.emit(arith.CmpiOp(self._value(a), self._value(b), relation))

    def select(self, c: SSAValue, a: Operand, b: Operand) -> SSAValue:
        return self.emit(arith.SelectOp(c, self._value(a), self._value(b)))


def float_to_narrow(emit: Emit, x: SSAValue, to: Attribute, saturate: bool) -> SSAValue:
    """x (f32 or f64) rounded to the narrow float type `to` (module docstring)."""
    if x.type == f32 and to == bf16:
        return _f32_to_bf16(emit, x)
    source, target = _WIDE[x.type], FORMATS[to]
    wide = _Ints(emit, IntegerType(source.bits))
    u = emit(arith.BitcastOp(x, wide.t))
    top = source.bits - 1
    sign = wide.shr(u, top)
    magnitude = wide.and_(u, (1 << top) - 1)
    is_nan = wide.cmp("ugt", magnitude, source.infinity)
    is_inf = wide.cmp("eq", magnitude, source.infinity)
    exponent = wide.shr(magnitude, source.mantissa)
    is_subnormal = wide.cmp("eq", exponent, 0)
    mantissa = wide.and_(magnitude, (1 << source.mantissa) - 1)
    significand = wide.select(is_subnormal, mantissa, wide.or_(mantissa, 1 << source.mantissa))
    # The target's biased exponent (signed; below 1 where the result is subnormal).
    biased = wide.add(wide.select(is_subnormal, 1, exponent), target.bias - source.bias)
    normal = wide.cmp("sge", biased, 1)
    drop = source.mantissa - target.mantissa
    # A normal result keeps exponent and mantissa side by side, so a rounding
    # carry moves into the exponent; a subnormal one shifts the significand
    # further right (at most past its top bit: then it rounds to 0).
    packed = wide.add(wide.shl(wide.sub(biased, 1), source.mantissa), significand)
    deeper = emit(arith.MinUIOp(wide.sub(drop + 1, biased), wide.const(source.mantissa + 2)))
    value = wide.select(normal, packed, significand)
    shift = wide.select(normal, drop, deeper)
    rounded = _round_half_even(wide, value, shift)
    overflow = emit(arith.OrIOp(is_inf, wide.cmp("ugt", rounded, target.max_finite)))
    magnitude_bits = wide.select(overflow, _overflow_bits(target, saturate), rounded)
    magnitude_bits = wide.select(is_nan, _nan_bits(target), magnitude_bits)
    sign_bit = wide.shl(sign, target.bits - 1)
    if target.specials is Specials.FNUZ:  # no -0: a zero keeps no sign
        sign_bit = wide.select(wide.cmp("eq", magnitude_bits, 0), 0, sign_bit)
    if target.specials is Specials.NONE:  # NaN becomes the zero of the other sign (ml_dtypes)
        flipped = wide.shl(wide.and_(wide.add(sign, 1), 1), target.bits - 1)
        sign_bit = wide.select(is_nan, flipped, sign_bit)
    bits = wide.or_(magnitude_bits, sign_bit)
    narrow = emit(arith.TruncIOp(bits, IntegerType(target.bits)))
    return emit(arith.BitcastOp(narrow, to))


def _f32_to_bf16(emit: Emit, x: SSAValue) -> SSAValue:
    """An f32 rounded to bfloat16, whose bits are the f32's top half: the
    bits plus 0x7FFF plus the kept half's lowest bit, shifted down (ties to
    even; a carry moves into the exponent, up to infinity for the largest
    values, as IEEE rounding does); a NaN is the quiet NaN of its sign.
    Eight integer ops where the general path takes thirty."""
    wide = _Ints(emit, IntegerType(32))
    u = emit(arith.BitcastOp(x, wide.t))
    odd = wide.and_(wide.shr(u, 16), 1)
    rounded = wide.shr(wide.add(wide.add(u, 0x7FFF), odd), 16)
    is_nan = wide.cmp("ugt", wide.and_(u, 0x7FFFFFFF), 0x7F800000)
    quiet = wide.or_(wide.and_(wide.shr(u, 16), 0x8000), 0x7FC0)
    bits = wide.select(is_nan, quiet, rounded)
    return emit(arith.BitcastOp(emit(arith.TruncIOp(bits, IntegerType(16))), bf16))


def _round_half_even(ints: _Ints, value: SSAValue, shift: Operand) -> SSAValue:
    """value / 2^shift rounded to nearest, ties to even (shift >= 1)."""
    odd = ints.and_(ints.shr(value, shift), 1)
    half_less_one = ints.sub(ints.shl(1, ints.sub(shift, 1)), 1)
    return ints.shr(ints.add(ints.add(value, half_less_one), odd), shift)


def _overflow_bits(target: FloatFormat, saturate: bool) -> int:
    """The magnitude bits of a result out of range (or infinite)."""
    if (saturate and target.bits == 8) or target.specials is Specials.NONE:  # float8 only
        return target.max_finite
    if target.specials is Specials.IEEE:
        return target.infinity
    return _nan_bits(target)


def _nan_bits(target: FloatFormat) -> int:
    """The magnitude bits of NaN (the sign goes on top; FNUZ's NaN is the sign bit)."""
    match target.specials:
        case Specials.IEEE:  # the quiet NaN
            return target.infinity | (1 << (target.mantissa - 1))
        case Specials.FN:
            return (1 << (target.bits - 1)) - 1
        case Specials.FNUZ:
            return 1 << (target.bits - 1)
        case _:
            return 0


def narrow_to_float(emit: Emit, x: SSAValue) -> SSAValue:
    """The f32 value of a narrow float (exact)."""
    source = FORMATS[x.type]
    ints = _Ints(emit, IntegerType(32))
    narrow = emit(arith.BitcastOp(x, IntegerType(source.bits)))
    v = emit(arith.ExtUIOp(narrow, ints.t))
    if source == FORMATS[bf16]:  # the top half of an f32
        return emit(arith.BitcastOp(ints.shl(v, 16), f32))
    top = source.bits - 1
    sign = ints.shl(ints.shr(v, top), 31)
    magnitude = ints.and_(v, (1 << top) - 1)
    exponent = ints.shr(magnitude, source.mantissa)
    mantissa = ints.and_(magnitude, (1 << source.mantissa) - 1)
    is_subnormal = ints.cmp("eq", exponent, 0)
    significand = ints.select(is_subnormal, mantissa, ints.or_(mantissa, 1 << source.mantissa))
    # significand * 2^(exponent - bias - mantissa bits), the power of two built
    # as f32 bits (every format's range lies inside f32's normal exponents).
    scale_exponent = ints.add(ints.select(is_subnormal, 1, exponent),
                              127 - source.bias - source.mantissa)  # fmt: skip
    scale = emit(arith.BitcastOp(ints.shl(scale_exponent, 23), f32))
    value = emit(arith.MulfOp(emit(arith.UIToFPOp(significand, f32)), scale))
    bits = emit(arith.BitcastOp(value, ints.t))
    infinity, nan = 0x7F800000, 0x7FC00000
    match source.specials:
        case Specials.IEEE:
            special = ints.cmp("eq", exponent, (1 << source.exponent) - 1)
            is_inf = emit(arith.AndIOp(special, ints.cmp("eq", mantissa, 0)))
            bits = ints.select(special, ints.select(is_inf, infinity, nan), bits)
        case Specials.FN:
            bits = ints.select(ints.cmp("eq", magnitude, (1 << top) - 1), nan, bits)
        case Specials.FNUZ:
            is_nan = ints.cmp("eq", v, 1 << top)
            bits = ints.select(is_nan, nan, bits)
            sign = ints.select(is_nan, 0, sign)
        case Specials.NONE:
            pass
    return emit(arith.BitcastOp(ints.or_(bits, sign), f32))


def float_to_e8m0(emit: Emit, x: SSAValue, round_mode: str, saturate: bool) -> SSAValue:
    """An f32's magnitude as a power of two (`onnx.numpy_helper.to_float8e8m0`)."""
    ints = _Ints(emit, IntegerType(32))
    u = emit(arith.BitcastOp(x, ints.t))
    exponent = ints.and_(ints.shr(u, 23), 0xFF)
    if round_mode == "up":
        round_up = ints.cmp("ne", ints.and_(u, 0x7FFFFF), 0)
    elif round_mode == "nearest":  # guard bit, and any lower bit or an odd (nonzero) exponent
        guard = ints.cmp("ne", ints.and_(u, 0x400000), 0)
        rest = emit(arith.OrIOp(ints.cmp("ne", ints.and_(u, 0x3FFFFF), 0),
                                ints.cmp("ne", exponent, 0)))  # fmt: skip
        round_up = emit(arith.AndIOp(guard, rest))
    else:
        assert round_mode == "down", round_mode
        round_up = None
    if round_up is not None:
        if saturate:  # the largest exponent stays
            below_max = ints.cmp("ne", exponent, 0xFE)
            round_up = emit(arith.AndIOp(round_up, below_max))
        special = ints.cmp("eq", exponent, 0xFF)
        step = ints.select(special, 0, emit(arith.ExtUIOp(round_up, ints.t)))
        exponent = ints.add(exponent, step)
    # An exponent carried past 0xFE reaches 0xFF, NaN, as to_float8e8m0 wraps it.
    byte = emit(arith.TruncIOp(exponent, IntegerType(8)))
    return emit(arith.BitcastOp(byte, f8E8M0FNU))


def e8m0_to_float(emit: Emit, x: SSAValue) -> SSAValue:
    """2^(e - 127) as f32 (2^-127, for e = 0, is an f32 subnormal); NaN for 0xFF."""
    ints = _Ints(emit, IntegerType(32))
    e = emit(arith.ExtUIOp(emit(arith.BitcastOp(x, IntegerType(8))), ints.t))
    bits = ints.select(ints.cmp("eq", e, 0), 0x00400000, ints.shl(e, 23))
    bits = ints.select(ints.cmp("eq", e, 0xFF), 0x7FC00000, bits)
    return emit(arith.BitcastOp(bits, f32))


__all__ = [
    "e8m0_to_float",
    "float_to_e8m0",
    "FORMATS",
    "FloatFormat",
    "Specials",
    "float_to_narrow",
    "narrow_to_float",
]
