"""The state of lowering one function body to the `llvm` dialect.

A `FunctionBuilder` walks loop-level ops in order and hands each to the
handler its table names for the op's type; a handler emits `llvm` ops at the
builder's current block and returns the lowered value of the op's result.
Tables are plain dicts (`HandlerTable`), one per concern (control flow,
memory addressing, scalars, the CPU ABI), so another path to the `llvm`
dialect (a GPU kernel, say) combines the pieces it shares with its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.quick_ops import quick
from ember.lowering.loop_to_llvm.llvm_types import width

Handler = Callable[["FunctionBuilder", Operation], SSAValue | None]
HandlerTable = dict[type[Operation], Handler]


def registrar(table: HandlerTable) -> Callable[..., Callable[[Handler], Handler]]:
    """A decorator `@lowers(OpA, OpB)` that enters its function into `table`."""

    def lowers(*op_types: type[Operation]) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            table.update(dict.fromkeys(op_types, handler))
            return handler

        return register

    return lowers


def check_supported(pass_name: str, problems: Iterable[str]) -> None:
    """One diagnostic listing every problem (an op a lowering cannot take,
    by name, or by name and type), each with its count, in name order."""
    names = Counter(problems)
    if names:
        listed = ", ".join(f"{name} ({count})" for name, count in sorted(names.items()))
        raise DiagnosticException(f"{pass_name}: unsupported ops: {listed}")


class ValueMap(dict[SSAValue, SSAValue]):
    """The lowered value of each loop-level value. A value in `deferred` is
    not stored: each use builds it anew where it is needed (in the current
    block). The packed ABI defers its buffer pointers this way, because
    loading them all up front keeps thousands of pointers live across the
    whole function, which makes LLVM's code generation crawl."""

    def __init__(self) -> None:
        super().__init__()
        self.deferred: dict[SSAValue, Callable[[], SSAValue]] = {}

    def __missing__(self, value: SSAValue) -> SSAValue:
        return self.deferred[value]()


Index = int | SSAValue
"""An i64 quantity of the lowered code: a constant known here, or a value."""


@dataclass
class StridedLayout:
    """Where the elements of a lowered memref lie, in elements from its base
    pointer: element (i, j, ...) is at `offset + i*strides[0] + j*strides[1]
    + ...`. Each quantity is static (int) or an i64 value of the lowered code."""

    offset: Index
    sizes: list[Index]
    strides: list[Index]


class FunctionBuilder:
    """Builds the body of one `llvm.func` from `entry` (whose arguments the
    caller's ABI chose): `block` is where the next op goes. A memref value
    lowers to its base pointer (in `values`) and, where its type leaves a
    part dynamic, its `StridedLayout` (in `layouts`; a memref not there has
    the static layout of its type). `pass_name` starts every diagnostic;
    `externals` collects the functions called and not defined here (libm),
    to be declared once per module."""

    def __init__(self, entry: Block, handlers: HandlerTable, *,
                 externals: dict[str, llvm.LLVMFunctionType], pass_name: str) -> None:  # fmt: skip
        self.entry = self.block = entry
        self.region = Region(entry)
        self.handlers = handlers
        self.externals = externals
        self.pass_name = pass_name
        self.values = ValueMap()
        self.layouts: dict[SSAValue, StridedLayout] = {}
        self.constants: dict[tuple[Attribute, int | str], llvm.ConstantOp] = {}
        self._arithmetic: dict[tuple[type[Operation], SSAValue, SSAValue], SSAValue] = {}
        self._arithmetic_block: Block | None = None

    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            new = self.handlers[type(op)](self, op)
            if new is not None:
                self.values[op.results[0]] = new
                if new.name_hint is None:
                    new.name_hint = op.results[0].name_hint

    def finish(self) -> Region:
        """The body, with the constants placed at the top of the entry block."""
        self.entry.insert_ops_before(list(self.constants.values()), self.entry.ops.first)  # type: ignore[arg-type]
        return self.region

    def args(self, op: Operation) -> list[SSAValue]:
        return self.args_of(op.operands)

    def args_of(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """The lowered values of `values`."""
        return [self.values[v] for v in values]

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def emit_in_entry(self, op: Operation) -> SSAValue:
        """Puts `op` (an alloca) at the top of the entry block, after the
        constants: a loop around where it is asked for must not grow the stack."""
        if self.entry.first_op is None:
            self.entry.add_op(op)
        else:
            self.entry.insert_op_before(op, self.entry.first_op)
        return op.results[0]

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        """A constant, created once per function at the top of the entry block."""
        if isinstance(t, IntegerType):
            bit_count = t.width.data
            bits = int(value) & ((1 << bit_count) - 1)  # two's complement, signed if wider than i1
            value = bits - (1 << bit_count) if bit_count > 1 and bits >> (bit_count - 1) else bits
        key = (t, value if isinstance(value, int) else float(value).hex())  # keeps -0.0 apart
        constant = self.constants.get(key)
        if constant is None:  # attributes are built on a miss only: most calls hit
            attr: Attribute = (
                IntegerAttr(value, t) if isinstance(t, IntegerType) else FloatAttr(float(value), t)  # type: ignore[arg-type]
            )
            constant = self.constants[key] = llvm.ConstantOp(attr, t)  # placed by `finish`
        return constant.result

    def element_address(self, base: SSAValue, index: SSAValue, element: Attribute) -> SSAValue:
        """`&base[index]` for elements of type `element` (an inbounds GEP),
        a pointer in `base`'s address space: the op is made from properties
        built once per element type, as every load and store asks for one."""
        gep = llvm.GEPOp.create(operands=[base, index], result_types=[base.type],
                                properties=_gep_properties(element))  # fmt: skip
        return self.emit(gep)

    def index(self, value: Index) -> SSAValue:
        """`value` as an i64 value (a constant for an int)."""
        return self.const(value, i64) if isinstance(value, int) else value

    def add(self, lhs: Index, rhs: Index) -> Index:
        """lhs + rhs, folded when both are known."""
        if isinstance(lhs, int) and isinstance(rhs, int):
            return lhs + rhs
        if lhs == 0 or rhs == 0:
            return rhs if lhs == 0 else lhs
        return self._reused(llvm.AddOp, self.index(lhs), self.index(rhs))

    def mul(self, lhs: Index, rhs: Index) -> Index:
        """lhs * rhs, folded when both are known."""
        if isinstance(lhs, int) and isinstance(rhs, int):
            return lhs * rhs
        if lhs == 1 or rhs == 1:
            return rhs if lhs == 1 else lhs
        return self._reused(llvm.MulOp, self.index(lhs), self.index(rhs))

    def _reused(
        self, kind: type[llvm.AddOp | llvm.MulOp], lhs: SSAValue, rhs: SSAValue
    ) -> SSAValue:
        """`lhs kind rhs`, or the same computed earlier in the current block.

        Address arithmetic repeats: the accesses of a micro-kernel's block
        share all indices but the last one or two, and each recomputed the
        linear index from scratch (a third of all ops on ResNet-50). An
        earlier op of the block dominates the rest of it, so reusing it
        within the block is always valid."""
        if self._arithmetic_block is not self.block:
            self._arithmetic, self._arithmetic_block = {}, self.block
        key = (kind, lhs, rhs)
        value = self._arithmetic.get(key)
        if value is None:
            op = quick(lambda: kind(lhs, rhs), kind, kind, (lhs, rhs), (lhs.type,))
            value = self._arithmetic[key] = self.emit(op)
        return value

    def icmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        flag = llvm.ICmpPredicateFlag(predicate).to_int()
        return self.emit(llvm.ICmpOp(lhs, rhs, IntegerAttr(flag, i64)))

    def resize(self, value: SSAValue, to: Attribute, *, signed: bool) -> SSAValue:
        """An integer converted to the width of `to` (sign- or zero-extended)."""
        old, new = width(value.type), width(to)
        if old == new:
            return value
        cast = llvm.TruncOp if new < old else llvm.SExtOp if signed else llvm.ZExtOp
        return self.emit(cast(value, to))

    def intrinsic(self, name: str, args: Sequence[SSAValue], t: Attribute) -> SSAValue:
        def build() -> Operation:
            return llvm.CallIntrinsicOp(f"llvm.{name}", args, [t])

        return self.emit(quick(build, (llvm.CallIntrinsicOp, name, len(args)),
                               llvm.CallIntrinsicOp, args, (t,)))  # fmt: skip

    def call(self, name: str, args: Sequence[SSAValue], t: Attribute) -> SSAValue:
        self.externals[name] = llvm.LLVMFunctionType([a.type for a in args], t)
        return self.emit(llvm.CallOp(name, *args, return_type=t))


@cache
def _gep_properties(element: Attribute) -> dict[str, Attribute]:
    """What `llvm.GEPOp.from_mixed_indices(base, [index], element, inbounds=True)`
    gives an inbounds GEP with one SSA index (attributes are immutable:
    one dict serves every such GEP)."""
    return {
        "rawConstantIndices": DenseArrayBase.from_list(i32, [llvm.GEP_USE_SSA_VAL]),
        "elem_type": element,
        "noWrapFlags": IntegerAttr(0, 32),
        "inbounds": UnitAttr(),
    }
