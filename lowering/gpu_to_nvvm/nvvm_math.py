"""`arith` and `math` on the GPU: `scalars`' table, less what NVPTX cannot
select, plus PTX's fast approximations for the exponential family.

NVPTX has no libm to call, and LLVM 22 selects no instruction for
`llvm.exp`, `llvm.log`, `llvm.log2`, `llvm.log10`, `llvm.sin`, `llvm.cos`,
`llvm.pow` (a fatal error in code generation, not a diagnostic), so those
ops of `scalars` are dropped (`NOT_ON_NVPTX`, and every `scalars.LIBM` op)
and these, for f32 (and f16, computed in f32 and rounded once), become
PTX's approximate instructions (`APPROXIMATIONS`, CUDA's `__expf`,
`__logf`, ...):

- exp(x) = ex2.approx(x * log2(e)); exp2(x) = ex2.approx(x): ex2.approx
  is within 2 ulp; the product's rounding adds a relative error of about
  |x| * 2^-24 to exp;
- log(x) = lg2.approx(x) * ln(2), log2(x) = lg2.approx(x), log10(x) =
  lg2.approx(x) * log10(2): lg2.approx is within 2^-22.6 absolutely on
  (0.5, 2) and 4 ulp elsewhere;
- tanh(x) = tanh.approx.f32 (sm_75 and later): a relative error up to
  2^-11, which is why `loop-expand-math` (f32 exp, tanh, erf and small
  powers as `arith` code within 1.5 ulp; 7 for erf) belongs before this
  lowering wherever those ops must be accurate.

The rest of `scalars` (IEEE arithmetic, comparisons, conversions, never-
trapping integer division, sqrt, fabs, floor, ceil, round, trunc, fma,
copysign, maximum/minimum) lowers as on the CPU: NVPTX selects each. An
approximation on f64 is a problem that the pass reports (`problem`).
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import Float16Type, Float32Type, f32
from xdsl.ir import Operation, SSAValue

from ember.lowering.loop_to_llvm import scalars
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar

NOT_ON_NVPTX: tuple[type[Operation], ...] = (
    math.ExpOp, math.Exp2Op, math.LogOp, math.Log2Op, math.Log10Op, math.SinOp, math.CosOp,
    math.PowFOp, math.FPowIOp, *scalars.LIBM,
)  # fmt: skip
"""Ops whose CPU lowering (an intrinsic or libm call) NVPTX cannot select."""

APPROXIMATIONS: dict[type[Operation], tuple[str, float, float]] = {
    math.ExpOp: ("nvvm.ex2.approx.f", 1 / pymath.log(2), 1.0),
    math.Exp2Op: ("nvvm.ex2.approx.f", 1.0, 1.0),
    math.LogOp: ("nvvm.lg2.approx.f", 1.0, pymath.log(2)),
    math.Log2Op: ("nvvm.lg2.approx.f", 1.0, 1.0),
    math.Log10Op: ("nvvm.lg2.approx.f", 1.0, pymath.log10(2)),
    math.TanhOp: ("nvvm.tanh.approx.f32", 1.0, 1.0),
}
"""op: (f32 NVVM intrinsic f, scale before, scale after): op(x) = f(x * before) * after."""

HANDLERS: HandlerTable = {
    op: handler for op, handler in scalars.HANDLERS.items() if op not in NOT_ON_NVPTX
}
_lowers = registrar(HANDLERS)


def problem(op: Operation) -> str | None:
    """Why this module cannot lower `op` (an approximation on other than
    f32 or f16), or None."""
    if type(op) in APPROXIMATIONS:
        t = op.results[0].type
        if not isinstance(t, Float32Type | Float16Type):
            return f"{op.name} on {t}"
    return None


@_lowers(*APPROXIMATIONS)
def _approximation(lw: FunctionBuilder, op: Operation) -> SSAValue:
    name, before, after = APPROXIMATIONS[type(op)]
    (x,) = lw.args(op)
    t = x.type
    if t != f32:
        x = lw.emit(llvm.FPExtOp(x, f32))
    if before != 1.0:
        x = lw.emit(llvm.FMulOp(x, lw.const(before, f32)))
    y = lw.intrinsic(name, [x], f32)
    if after != 1.0:
        y = lw.emit(llvm.FMulOp(y, lw.const(after, f32)))
    return y if t == f32 else lw.emit(llvm.FPTruncOp(y, t))
