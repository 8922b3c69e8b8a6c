"""The static cost of a kernel function: float operations and bytes per call.

Counted on loop-level IR (a kernel function of `loop-outline-kernels`):
each float `arith`/`math` op (one with a float or float-vector operand)
counts once per lane per iteration of the loops around it, so the count is
the op times the trip counts of its enclosing `scf.for`/`scf.parallel` dims
(`arith.constant` bounds; a loop with another bound makes the count
unknown, -1). `math.fma` and `vector.fma` count two, `loop.bf16_dot` two per bfloat16 lane. Conversions, selects and constants
move values without arithmetic and count nothing. A matmul kernel of
m x n x k is `mulf` and `addf` m*n*k times each: 2*m*n*k.

The bytes are those of the kernel's buffer arguments, each counted once:
the least memory traffic a call needs, which is what a roofline's
arithmetic intensity divides by.
"""

from __future__ import annotations

import math as pymath
from collections import Counter
from collections.abc import Sequence

from xdsl.dialects import arith, math, memref, scf, vector
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, MemRefType, VectorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ember.dialects.loop import Bf16DotOp, byte_size
from ember.report import KernelCost

UNKNOWN = -1
"""The flop count of a kernel whose loop bounds are not all constants."""

_NO_ARITHMETIC = (arith.ConstantOp, arith.ExtFOp, arith.TruncFOp, arith.FPToSIOp, arith.FPToUIOp,
                  arith.SIToFPOp, arith.UIToFPOp, arith.BitcastOp, arith.SelectOp)  # fmt: skip
_FLOPS_PER_OP: dict[type[Operation], int] = {math.FmaOp: 2, vector.FMAOp: 2, Bf16DotOp: 2}
"""Ops worth more than one flop per lane, and the `vector` ops that count at all
(moving lanes around, as loads and broadcasts do, is no arithmetic).
`loop.bf16_dot` counts two per bfloat16 lane (a product and a sum)."""
_COUNTED_DIALECTS = ("arith", "math")
_CONTRACTION = frozenset({"arith.mulf", "arith.addf"})
_FUSED_MULTIPLY_ADDS = (["vector.fma"], ["math.fma"], ["loop.bf16_dot"])
"""A kernel whose commonest op is one of these is a contraction too (a micro-kernel's body)."""
CONV_DEPTH = 6
"""A multiply-add under this many loops or more reads as a convolution (batch,
two output positions, output channels, two window dims, input channels), under
fewer as a matmul."""


def _lanes(t: Attribute) -> int | None:
    """Lanes of a float (1) or float vector type; None for any other type."""
    if isinstance(t, AnyFloat):
        return 1
    if isinstance(t, VectorType) and isinstance(t.element_type, AnyFloat):
        return pymath.prod(t.get_shape())
    return None


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _trips(bounds: Sequence[tuple[SSAValue, SSAValue, SSAValue]]) -> int | None:
    """Iterations of a loop over these (lower, upper, step) dims; None if unknown."""
    count = 1
    for lower, upper, step in bounds:
        lo, hi, st = _constant(lower), _constant(upper), _constant(step)
        if lo is None or hi is None or st is None or st <= 0:
            return None
        count *= max(0, -(-(hi - lo) // st))
    return count


def _loop_bounds(op: Operation) -> list[tuple[SSAValue, SSAValue, SSAValue]] | None:
    if isinstance(op, scf.ForOp):
        return [(op.lb, op.ub, op.step)]
    if isinstance(op, scf.ParallelOp):
        return list(zip(op.lowerBound, op.upperBound, op.step, strict=True))
    return None


def _flop_lanes(op: Operation) -> int | None:
    if isinstance(op, _NO_ARITHMETIC) or (
        op.dialect_name() not in _COUNTED_DIALECTS and type(op) not in _FLOPS_PER_OP
    ):
        return None
    lanes = [n for v in op.operands if (n := _lanes(v.type)) is not None]
    return max(lanes) * _FLOPS_PER_OP.get(type(op), 1) if lanes else None


class _Counter:
    """Walks a kernel body with the iteration count of the loops around."""

    def __init__(self) -> None:
        self.flops = 0
        self.known = True
        self.by_op: Counter[str] = Counter()
        self.depth_of: dict[str, int] = {}
        self.max_depth = 0

    def block(self, block: Block, iterations: int, depth: int) -> None:
        self.max_depth = max(self.max_depth, depth)
        for op in block.ops:
            bounds = _loop_bounds(op)
            if bounds is not None:
                trips = _trips(bounds)
                if trips is None:
                    self.known = False
                    trips = 1
                for region in op.regions:
                    for inner in region.blocks:
                        self.block(inner, iterations * trips, depth + len(bounds))
                continue
            flops = _flop_lanes(op)
            if flops is not None:
                self.flops += iterations * flops
                self.by_op[op.name] += iterations * flops
                self.depth_of[op.name] = max(self.depth_of.get(op.name, 0), depth)
            for region in op.regions:  # scf.if and the like: counted as if taken
                for inner in region.blocks:
                    self.block(inner, iterations, depth)


def _output_type(kernel: FuncOp) -> str:
    """The shape of the buffer the kernel writes last (its output, as a rule)."""
    targets = [op.memref if isinstance(op, memref.StoreOp) else op.base
               for op in kernel.walk() if isinstance(op, memref.StoreOp | vector.StoreOp)]  # fmt: skip
    if not targets:
        return "?"
    target = targets[-1].type
    assert isinstance(target, MemRefType)
    return "x".join(str(d) if d >= 0 else "?" for d in target.get_shape())


def kernel_cost(kernel: FuncOp) -> KernelCost:
    """The static cost of one call of `kernel` (see the module docstring)."""
    counter = _Counter()
    counter.block(kernel.body.block, 1, 0)
    top = [name for name, _ in counter.by_op.most_common(2)]
    ops = "+".join(name.split(".", 1)[1] for name in top) or "copy"
    depth = max((counter.depth_of[name] for name in top), default=counter.max_depth)
    if set(top) == _CONTRACTION or top[:1] in _FUSED_MULTIPLY_ADDS:
        ops = "conv" if depth >= CONV_DEPTH else "matmul"
    label = f"{ops}, {depth} loops -> {_output_type(kernel)}"
    nbytes = sum(byte_size(t) for t in kernel.function_type.inputs.data
                 if isinstance(t, MemRefType) and all(d >= 0 for d in t.get_shape()))  # fmt: skip
    return KernelCost(kernel.sym_name.data, label, counter.flops if counter.known else UNKNOWN,
                      nbytes)  # fmt: skip


__all__ = ["UNKNOWN", "kernel_cost"]
