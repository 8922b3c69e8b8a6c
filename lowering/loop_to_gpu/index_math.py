"""Index arithmetic shared by the kernel generators of `convert-loop-to-gpu`
(`contraction.py`, `reduction.py`): `index` constants made once per kernel,
sums, products, bound checks, and a linear point number split into the
indices of a group of dims (row-major, the last dim fastest).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import SSAValue


def index_constant(builder: Builder, value: int) -> SSAValue:
    """`value` as an `index` constant inserted at `builder`."""
    return builder.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).results[0]


class IndexMath:
    """Index arithmetic of one kernel over dims of static `extents`, with
    the constants it needs made once, at `builder` (a point that comes
    before all of their uses)."""

    def __init__(self, builder: Builder, extents: Sequence[int]):
        self.builder = builder
        self.extents = extents
        self.constants: dict[int, SSAValue] = {}

    def const(self, value: int) -> SSAValue:
        if value not in self.constants:
            self.constants[value] = index_constant(self.builder, value)
        return self.constants[value]

    def add(self, builder: Builder, a: SSAValue, b: SSAValue) -> SSAValue:
        return builder.insert(arith.AddiOp(a, b)).results[0]

    def mul(self, builder: Builder, a: SSAValue, b: SSAValue) -> SSAValue:
        return builder.insert(arith.MuliOp(a, b)).results[0]

    def below(self, builder: Builder, values: Sequence[tuple[SSAValue, int]]) -> SSAValue:
        """Whether each value is below its bound, all together (an i1)."""
        checks = [builder.insert(arith.CmpiOp(v, self.const(bound), "ult")).results[0]
                  for v, bound in values]  # fmt: skip
        result = checks[0]
        for check in checks[1:]:
            result = builder.insert(arith.AndIOp(result, check)).results[0]
        return result

    def delinearize(self, builder: Builder, linear: SSAValue, dims: Sequence[int],
                    at: list[SSAValue]) -> None:  # fmt: skip
        """Sets `at[d]` for each of `dims` to its index in point `linear` of
        their row-major numbering (the last dim fastest); `linear` must be
        below the product of their extents."""
        rest = linear
        for position, d in enumerate(reversed(dims)):
            extent = self.const(self.extents[d])
            if position == len(dims) - 1:
                at[d] = rest  # the first dim: what is left, below its extent
            else:
                at[d] = builder.insert(arith.RemUIOp(rest, extent)).results[0]
                rest = builder.insert(arith.DivUIOp(rest, extent)).results[0]


__all__ = ["IndexMath", "index_constant"]
