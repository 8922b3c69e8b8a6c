"""Scalars: `arith` and `math` ops to LLVM instructions, intrinsics and libm calls.

Most ops are rows of a table: one LLVM instruction (`_DIRECT`), a conversion
(`_CASTS`), an overloaded `llvm.*` intrinsic (`_INTRINSICS`) or a libm
function (`LIBM`, declared once per module; f16 computes in f32). No
fast-math flags: exact IEEE semantics. The rest need care the LLVM
translator or the JIT cannot give: integer division never traps
(docs/semantics.md: x / 0 and x % 0 are 0, INT_MIN / -1 is INT_MIN and
INT_MIN % -1 is 0, as NumPy computes them), fptosi/fptoui saturate,
uitofp of i64 rounds once, and `powi` avoids libgcc.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    VectorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue

from ember.dialects.graph.types import numpy_dtype
from ember.dialects.quick_ops import quick
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import NARROW_FLOATS, scalar_type, suffix, width

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)

# 1:1 tables --------------------------------------------------------------

# Ops that become one llvm op built from the lowered operands alone.
_DIRECT: dict[type[Operation], type[Operation]] = {
    arith.NegfOp: llvm.FNegOp, arith.SelectOp: llvm.SelectOp, arith.AddfOp: llvm.FAddOp, arith.SubfOp: llvm.FSubOp, arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp, arith.AddiOp: llvm.AddOp, arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp, arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp, arith.XOrIOp: llvm.XOrOp, arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp, arith.ShRUIOp: llvm.LShrOp,
}  # fmt: skip

_CASTS: dict[type[Operation], type[Operation]] = {
    arith.ExtFOp: llvm.FPExtOp, arith.TruncFOp: llvm.FPTruncOp, arith.SIToFPOp: llvm.SIToFPOp,
    arith.ExtSIOp: llvm.SExtOp, arith.ExtUIOp: llvm.ZExtOp, arith.TruncIOp: llvm.TruncOp,
    arith.BitcastOp: llvm.BitcastOp,
}  # fmt: skip

# `llvm.<name>.<type>` intrinsics whose operands and result are the op's own.
_INTRINSICS: dict[type[Operation], str] = {
    arith.MaximumfOp: "maximum", arith.MinimumfOp: "minimum",  # NaN-propagating
    math.ExpOp: "exp", math.Exp2Op: "exp2", math.LogOp: "log", math.Log2Op: "log2",
    math.Log10Op: "log10", math.SqrtOp: "sqrt", math.AbsFOp: "fabs", math.FloorOp: "floor",
    math.CeilOp: "ceil", math.RoundOp: "round", math.RoundEvenOp: "roundeven",
    math.TruncOp: "trunc", math.SinOp: "sin", math.CosOp: "cos", math.PowFOp: "pow",
    math.CopySignOp: "copysign", math.FmaOp: "fma", math.CtPopOp: "ctpop",
    arith.MaxSIOp: "smax", arith.MinSIOp: "smin", arith.MaxUIOp: "umax", arith.MinUIOp: "umin",
}  # fmt: skip

# Functions LLVM has no (long-standing) intrinsic for: libm, `f` suffix for f32.
LIBM: dict[type[Operation], str] = {
    math.TanOp: "tan", math.AsinOp: "asin", math.AcosOp: "acos", math.AtanOp: "atan",
    math.Atan2Op: "atan2", math.SinhOp: "sinh", math.CoshOp: "cosh", math.TanhOp: "tanh",
    math.AsinhOp: "asinh", math.AcoshOp: "acosh", math.AtanhOp: "atanh", math.ErfOp: "erf",
    math.ExpM1Op: "expm1", math.Log1pOp: "log1p", math.CbrtOp: "cbrt",
}  # fmt: skip

# Integer intrinsics that take an extra `i1 false` operand.
_INT_INTRINSICS = {math.AbsIOp: "abs", math.CountLeadingZerosOp: "ctlz",
                   math.CountTrailingZerosOp: "cttz"}  # fmt: skip
_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")  # arith's order
_CMPF = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
         "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")  # fmt: skip


# Scalars: table-driven families --------------------------------------------


# Float ops whose `fastmath` flags their llvm op takes along.
_FLAGGED = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp)


@_lowers(*_DIRECT)
def _direct(lw: FunctionBuilder, op: Operation) -> SSAValue:
    kind, args = _DIRECT[type(op)], lw.args(op)
    if isinstance(op, _FLAGGED) and op.fastmath.data:
        flags = llvm.FastMathAttr([llvm.FastMathFlag(f) for f in op.fastmath.data])
        return lw.emit(kind(*args, flags))
    if len(args) == 2:  # a binary op: its result has its operands' type
        return lw.emit(quick(lambda: kind(*args), kind, kind, args, (args[0].type,)))
    return lw.emit(kind(*args))


@_lowers(*_CASTS)
def _cast(lw: FunctionBuilder, op: Operation) -> SSAValue:
    value, target = lw.values[op.operands[0]], scalar_type(op.results[0].type)
    if isinstance(op, arith.TruncFOp) and value.type == f64 and target == f16:
        # f64 -> f16 needs compiler-rt's __truncdfhf2, which the JIT cannot find;
        # going through f32 rounds twice but stays within f16's precision here.
        value = lw.emit(llvm.FPTruncOp(value, f32))
    if isinstance(op, arith.BitcastOp) and value.type == target:
        return value  # a narrow float's bits: the same LLVM integer
    if isinstance(op, arith.ExtFOp) and op.operands[0].type == bf16 and target == f32:
        # Exact: a bfloat16's bits are the top half of the f32 it stands for.
        wide = lw.emit(llvm.ZExtOp(value, i32))
        return lw.emit(llvm.BitcastOp(lw.emit(llvm.ShlOp(wide, lw.const(16, i32))), f32))
    if isinstance(op, arith.TruncIOp | arith.ExtSIOp | arith.ExtUIOp):
        # Same width (i64 <-> ui64: a constant of an unsigned type) is no
        # instruction in LLVM, where signedness is not part of the type.
        return lw.resize(value, target, signed=not isinstance(op, arith.ExtUIOp))
    return lw.emit(_CASTS[type(op)](value, target))


@_lowers(*_INTRINSICS)
def _intrinsic(lw: FunctionBuilder, op: Operation) -> SSAValue:
    t = scalar_type(op.results[0].type)
    return lw.intrinsic(f"{_INTRINSICS[type(op)]}.{suffix(t)}", lw.args(op), t)


@_lowers(*LIBM)
def _libm(lw: FunctionBuilder, op: Operation) -> SSAValue:
    t, args, name = op.results[0].type, lw.args(op), LIBM[type(op)]
    if isinstance(t, Float64Type):
        return lw.call(name, args, t)
    if isinstance(t, Float32Type):
        return lw.call(name + "f", args, t)
    # libm has no half-precision functions: compute in f32 and round once.
    wide = [lw.emit(llvm.FPExtOp(a, f32)) for a in args]
    return lw.emit(llvm.FPTruncOp(lw.call(name + "f", wide, f32), t))


# Scalars: one-offs -----------------------------------------------------------


@_lowers(arith.ConstantOp)
def _constant(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr | FloatAttr)
    t = op.result.type
    if isinstance(t, NARROW_FLOATS):  # its bits, as the integer LLVM holds it in
        bits = (
            np.asarray(op.value.value.data, numpy_dtype(t))
            .reshape(1)
            .view(f"u{t.bitwidth // 8 or 1}")
        )
        return lw.const(int(bits[0]), scalar_type(t))
    return lw.const(op.value.value.data, scalar_type(t))


@_lowers(arith.CmpiOp)
def _cmpi(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, arith.CmpiOp)
    return lw.icmp(_CMPI[op.predicate.value.data], *lw.args(op))


@_lowers(arith.CmpfOp)
def _cmpf(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, arith.CmpfOp)
    predicate = _CMPF[op.predicate.value.data]
    if predicate in ("false", "true"):  # the translator has no constant predicates
        return lw.const(predicate == "true", i1)
    return lw.emit(llvm.FCmpOp(*lw.args(op), predicate))


# NaN-skipping max and min: (intrinsic on vectors, predicate of "b wins").
_SKIPPING_NAN: dict[type[Operation], tuple[str, str]] = {
    arith.MaxnumfOp: ("maxnum", "ogt"), arith.MinnumfOp: ("minnum", "olt"),
}  # fmt: skip


@_lowers(*_SKIPPING_NAN)
def _max_min_skipping_nan(lw: FunctionBuilder, op: Operation) -> SSAValue:
    """maxnum(a, b) as `b > a or a is NaN ? b : a` (minnum: `b < a`), which
    is maxnum: a NaN operand loses, two NaNs give NaN. Not the `llvm.maxnum`
    intrinsic: LLVM 22's loop vectoriser turns a maxnum reduction inside a
    loop nest (MaxPool's window, its accumulators promoted to registers)
    into AVX-512 code that gives wrong maxima (ONNX's maxpool_2d_strides:
    67 of 300 outputs on a Zen 5, right with AVX2 and without vectorising).
    Vector operands (a micro-kernel's epilogue, already vector code) keep
    the intrinsic."""
    a, b = lw.args(op)
    intrinsic, predicate = _SKIPPING_NAN[type(op)]
    if isinstance(op.results[0].type, VectorType):
        t = scalar_type(op.results[0].type)
        return lw.intrinsic(f"{intrinsic}.{suffix(t)}", [a, b], t)
    wins = lw.emit(llvm.FCmpOp(b, a, predicate))
    a_nan = lw.emit(llvm.FCmpOp(a, a, "uno"))
    return lw.emit(llvm.SelectOp(lw.emit(llvm.OrOp(wins, a_nan)), b, a))


@_lowers(arith.IndexCastOp)
def _index_cast(lw: FunctionBuilder, op: Operation) -> SSAValue:
    return lw.resize(lw.values[op.operands[0]], scalar_type(op.results[0].type), signed=True)


@_lowers(arith.FPToSIOp, arith.FPToUIOp)
def _fp_to_int(lw: FunctionBuilder, op: Operation) -> SSAValue:
    # The translator lacks fptosi/fptoui; the saturating intrinsics agree on
    # every input where those are defined (and pick a value where they are poison).
    (x,) = lw.args(op)
    t = scalar_type(op.results[0].type)
    kind = "fptosi" if isinstance(op, arith.FPToSIOp) else "fptoui"
    return lw.intrinsic(f"{kind}.sat.{suffix(t)}.{suffix(x.type)}", [x], t)


@_lowers(arith.UIToFPOp)
def _uitofp(lw: FunctionBuilder, op: Operation) -> SSAValue:
    # The translator lacks uitofp. Below 64 bits, zero-extend and convert as
    # signed; for i64, halve with a sticky low bit (round to odd), convert, double.
    (x,) = lw.args(op)
    t = op.results[0].type
    if width(x.type) < 64:
        return lw.emit(llvm.SIToFPOp(lw.resize(x, i64, signed=False), t))
    one = lw.const(1, i64)
    halved = lw.emit(llvm.OrOp(lw.emit(llvm.LShrOp(x, one)), lw.emit(llvm.AndOp(x, one))))
    big = lw.emit(llvm.SIToFPOp(halved, t))
    big = lw.emit(llvm.FAddOp(big, big))
    small = lw.emit(llvm.SIToFPOp(x, t))
    return lw.emit(llvm.SelectOp(lw.icmp("slt", x, lw.const(0, i64)), big, small))


# Integer division: sdiv/udiv/srem/urem trap (SIGFPE) on a zero divisor and
# sdiv/srem on INT_MIN / -1. Each divides by a safe divisor instead: 1 where
# the divisor is 0 (the quotient then selected to 0) or where INT_MIN is
# divided by -1 (a / 1 is the wrapped quotient INT_MIN, a % 1 the remainder 0).
_DIVISIONS: dict[type[Operation], tuple[type[Operation], bool]] = {
    # op: (llvm op, signed)
    arith.DivSIOp: (llvm.SDivOp, True), arith.DivUIOp: (llvm.UDivOp, False),
    arith.RemSIOp: (llvm.SRemOp, True), arith.RemUIOp: (llvm.URemOp, False),
}  # fmt: skip


def _divide(
    lw: FunctionBuilder, kind: type[Operation], a: SSAValue, b: SSAValue, *, signed: bool
) -> SSAValue:
    """`kind` (sdiv, udiv, srem, urem) of a by b, without trapping: a zero
    divisor gives 0, INT_MIN / -1 the wrapped INT_MIN (remainder 0)."""
    zero, one = lw.const(0, a.type), lw.const(1, a.type)
    by_zero = lw.icmp("eq", b, zero)
    unsafe = by_zero
    if signed:
        int_min = lw.const(-(1 << (width(a.type) - 1)), a.type)
        overflow = lw.emit(
            llvm.AndOp(lw.icmp("eq", a, int_min), lw.icmp("eq", b, lw.const(-1, a.type)))
        )
        unsafe = lw.emit(llvm.OrOp(by_zero, overflow))
    result = lw.emit(kind(a, lw.emit(llvm.SelectOp(unsafe, one, b))))
    if kind in (llvm.SDivOp, llvm.UDivOp):  # a / 1 is a: the quotient by zero is 0
        result = lw.emit(llvm.SelectOp(by_zero, zero, result))
    return result


@_lowers(*_DIVISIONS)
def _division(lw: FunctionBuilder, op: Operation) -> SSAValue:
    kind, signed = _DIVISIONS[type(op)]
    a, b = lw.args(op)
    return _divide(lw, kind, a, b, signed=signed)


@_lowers(arith.FloorDivSIOp, arith.CeilDivSIOp)
def _rounded_divsi(lw: FunctionBuilder, op: Operation) -> SSAValue:
    # sdiv rounds toward zero; adjust by one when the remainder is nonzero and
    # its sign differs from the divisor's (floor) or matches it (ceil).
    a, b = lw.args(op)
    zero = lw.const(0, a.type)
    quotient = _divide(lw, llvm.SDivOp, a, b, signed=True)
    remainder = _divide(lw, llvm.SRemOp, a, b, signed=True)
    floor = isinstance(op, arith.FloorDivSIOp)
    signs = lw.icmp(
        "ne" if floor else "eq", lw.icmp("slt", remainder, zero), lw.icmp("slt", b, zero)
    )
    adjust = lw.emit(llvm.AndOp(lw.icmp("ne", remainder, zero), signs))
    step = lw.resize(adjust, a.type, signed=False)
    return lw.emit((llvm.SubOp if floor else llvm.AddOp)(quotient, step))


@_lowers(arith.CeilDivUIOp)
def _ceildivui(lw: FunctionBuilder, op: Operation) -> SSAValue:
    a, b = lw.args(op)
    quotient = _divide(lw, llvm.UDivOp, a, b, signed=False)
    remainder = _divide(lw, llvm.URemOp, a, b, signed=False)
    inexact = lw.icmp("ne", remainder, lw.const(0, a.type))
    return lw.emit(llvm.AddOp(quotient, lw.resize(inexact, a.type, signed=False)))


@_lowers(math.RsqrtOp)
def _rsqrt(lw: FunctionBuilder, op: Operation) -> SSAValue:
    (x,) = lw.args(op)
    root = lw.intrinsic(f"sqrt.{suffix(x.type)}", [x], x.type)
    return lw.emit(llvm.FDivOp(lw.const(1.0, x.type), root))


@_lowers(math.FPowIOp)
def _fpowi(lw: FunctionBuilder, op: Operation) -> SSAValue:
    # `llvm.powi` becomes a call to libgcc's __powi*f2, which a JIT process may
    # lack; pow in f64 is exact for i32 exponents and more accurate anyway.
    x, n = lw.args(op)
    wide = x if x.type == f64 else lw.emit(llvm.FPExtOp(x, f64))
    power = lw.intrinsic("pow.f64", [wide, lw.emit(llvm.SIToFPOp(n, f64))], f64)
    return power if x.type == f64 else lw.emit(llvm.FPTruncOp(power, x.type))


@_lowers(*_INT_INTRINSICS)
def _int_intrinsic(lw: FunctionBuilder, op: Operation) -> SSAValue:
    # The i1 flag `false`: abs(INT_MIN) is INT_MIN, ctlz(0)/cttz(0) the width (not poison).
    (x,) = lw.args(op)
    return lw.intrinsic(
        f"{_INT_INTRINSICS[type(op)]}.{suffix(x.type)}", [x, lw.const(0, i1)], x.type
    )
