"""The `index` values of a function's symbolic sizes, for the lowerings that
give dynamic dims their SSA sizes (`convert-graph-to-tensor` on tensors,
`convert-tensor-to-loop` on buffers).

A symbol's value is read once from an argument that has it as a dim (the
entry check guarantees that every argument holding the symbol agrees): a
`tensor.dim` on tensors, a `memref.dim` on buffers. An expression over
symbols (`2 * S`, `(H + 1) floordiv 2`) is `arith` on those values. Each
value is made once, at the top of the function's entry block, in the order
first asked for, so every op that needs the size of `S` uses the same SSA
value (what lets `loop-fuse` see that two nests have the same bounds). A
symbol already read at the top of the block (by an earlier pass, say
`convert-conv-to-winograd` before `convert-graph-to-tensor`) is taken as it
is, not read again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.symbolic import Dim, FloorDiv, SymExpr

SYMBOL_ATTR = "ember.symbol"
"""On the op that reads a symbol's value (`tensor.dim`, `memref.dim`): its name,
so that passes further down can tell which size an `index` value is
(`symbolic_size`)."""

ReadDim = Callable[[SSAValue, SSAValue], Operation]
"""Makes the op reading dim `index` (an `index` value) of a shaped value."""


def symbol_bindings(argument_types: Sequence[Attribute]) -> dict[str, tuple[int, int]]:
    """For each symbol that is a whole dim of an argument: (argument, dim),
    the first such."""
    bindings: dict[str, tuple[int, int]] = {}
    for position, arg_type in enumerate(argument_types):
        if not isinstance(arg_type, TensorType):
            continue
        for axis, dim in enumerate(symbolic_shape(arg_type)):
            name = dim.lone_symbol() if isinstance(dim, SymExpr) else None
            if name is not None and name not in bindings:
                bindings[name] = (position, axis)
    return bindings


class SymbolSizes:
    """Index values of sizes in one function (see the module docstring).
    `bindings` says where each symbol not yet read in `block` is read:
    (argument number, dim) in `block`'s arguments."""

    def __init__(self, block: Block, bindings: dict[str, tuple[int, int]], read_dim: ReadDim,
                 where: str):  # fmt: skip
        self.block = block
        self.bindings = bindings
        self.read_dim = read_dim
        self.where = where
        self.values: dict[Dim, SSAValue] = {}
        self.last: Operation | None = None
        self._reuse(symbol_values(block))

    def size(self, dim: Dim) -> SSAValue:
        """The `index` value of `dim` (an int or an expression over symbols)."""
        if dim in self.values:
            return self.values[dim]
        if isinstance(dim, int):
            value = self._insert(arith.ConstantOp(IntegerAttr(dim, IndexType())))
        elif dim.lone_symbol() is not None:
            value = self._symbol(dim.lone_symbol())  # type: ignore[arg-type]
        else:
            value = self._polynomial(dim)
        self.values[dim] = value
        return value

    def sizes(self, shape: Sequence[Dim]) -> list[SSAValue]:
        """The values of the symbolic dims of `shape`, in order (what a
        `tensor.empty` or `memref.alloc` of that shape takes)."""
        return [self.size(d) for d in shape if isinstance(d, SymExpr)]

    def _reuse(self, values: dict[str, SSAValue]) -> None:
        """Takes the symbols' values as already read (by the ops that define
        them, at the top of the block); new ops go after them."""
        for name, value in values.items():
            self.values[SymExpr.symbol(name)] = value
            owner = value.owner
            if isinstance(owner, Operation) and (
                self.last is None or self.last.is_before_in_block(owner)
            ):
                self.last = owner

    def _insert(self, op: Operation) -> SSAValue:
        point = (InsertPoint.after(self.last) if self.last is not None
                 else InsertPoint.at_start(self.block))  # fmt: skip
        Builder(point).insert(op)
        self.last = op
        return op.results[0]

    def _symbol(self, name: str) -> SSAValue:
        if name not in self.bindings:
            raise DiagnosticException(
                f"{self.where}: symbol {name} is not a dim of any input, so its size "
                "cannot be read at run time"
            )
        position, axis = self.bindings[name]
        read = self.read_dim(self.block.args[position], self.size(axis))
        read.attributes[SYMBOL_ATTR] = StringAttr(name)
        value = self._insert(read)
        value.name_hint = name
        return value

    def _atom(self, atom: str | FloorDiv) -> SSAValue:
        if isinstance(atom, str):
            return self.size(SymExpr.symbol(atom))
        numerator = self.size(atom.numerator)
        return self._insert(arith.FloorDivSIOp(numerator, self.size(atom.divisor)))

    def _polynomial(self, dim: SymExpr) -> SSAValue:
        total: SSAValue | None = None
        for monomial, coefficient in dim.terms:
            factors = [self._atom(a) for a in monomial]
            if coefficient != 1 or not factors:
                factors.append(self.size(coefficient))
            term = factors[0]
            for factor in factors[1:]:
                term = self._insert(arith.MuliOp(term, factor))
            total = term if total is None else self._insert(arith.AddiOp(total, term))
        assert total is not None
        return total


def symbol_values(block: Block) -> dict[str, SSAValue]:
    """The values of the symbols read at the top of `block` (`SYMBOL_ATTR`)."""
    found: dict[str, SSAValue] = {}
    for op in block.ops:
        name = op.attributes.get(SYMBOL_ATTR)
        if isinstance(name, StringAttr):
            found.setdefault(name.data, op.results[0])
    return found


def symbolic_size(value: SSAValue, where: str) -> Dim:
    """The size an `index` value holds, as an expression over the symbols:
    followed through constants, symbol reads and `arith` on them."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    if isinstance(owner, Operation) and isinstance(name := owner.attributes.get(SYMBOL_ATTR),
                                                   StringAttr):  # fmt: skip
        return SymExpr.symbol(name.data)
    if isinstance(owner, arith.MuliOp | arith.AddiOp | arith.SubiOp | arith.FloorDivSIOp):
        lhs, rhs = (symbolic_size(v, where) for v in owner.operands)
        if isinstance(owner, arith.MuliOp):
            return lhs * rhs
        if isinstance(owner, arith.AddiOp):
            return lhs + rhs
        if isinstance(owner, arith.SubiOp):
            return lhs - rhs
        if isinstance(rhs, int) and rhs > 0:
            return lhs // rhs
    raise DiagnosticException(f"{where}: a size that is not an expression over the symbols")
