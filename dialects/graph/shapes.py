"""Shape and type inference for `graph` ops: the context a shape rule sees.

Every `OpSpec` has a shape rule `infer(ctx) -> list[TensorType]`. The rule
reads its operands' types, the values of operands that are known at compile
time (constants, and small integer tensors computed from them, such as the
`Shape -> Gather -> Concat -> Reshape` chains exporters emit) and the op's
attributes with ONNX defaults applied. It raises `ShapeError` naming the
broken rule; callers (the verifier, the importer, `graph-infer-shapes`)
attach the op or node to the message.

Unknown dims are `DYNAMIC` (printed `?`) and propagate: a rule never guesses.
Symbolic dims (`symbolic.SymExpr`: `N`, `2 * S`) are computed with like ints:
`ctx.shape` gives them and `result` records them in the type's `#graph.dims`.
A rule that would have to compare a symbol with something (`N > 1`) raises
`UndecidedComparison` (a `TypeError`, as `math.ceil(N)` does); `infer_types`
then runs it again on the operands with their symbols erased to unknown
dims, so every rule works on symbolic shapes and the ones that can keep the
symbols do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from ember.dialects.graph import symbolic
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.spec import Arity, OpSpec
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.graph.types import DYNAMIC, format_shape, tensor_type

SymShape = tuple[Dim, ...]
"""A shape whose dims may be symbolic."""


class ShapeError(ValueError):
    """A shape or type rule of an op is broken; the message names the rule."""


class UnknownValueError(ShapeError):
    """A result shape depends on an operand's value that is not known at
    compile time (an `axes` input computed at run time, ...)."""


@dataclass
class ShapeContext:
    """What a shape rule may look at. Operands are grouped by spec name."""

    spec: OpSpec
    operand_types: Mapping[str, Sequence[TensorType]]
    operand_values: Mapping[str, Sequence[np.ndarray | None]]
    attributes: Mapping[str, Any]
    num_results: int
    result_names: Sequence[str] = field(default_factory=list)

    # -- operands
    def type(self, name: str) -> TensorType:
        types = self.operand_types.get(name, ())
        if not types:
            raise ShapeError(f"operand '{name}' is required")
        return types[0]

    def optional_type(self, name: str) -> TensorType | None:
        types = self.operand_types.get(name, ())
        return types[0] if types else None

    def types(self, name: str) -> Sequence[TensorType]:
        return self.operand_types.get(name, ())

    def shape(self, name: str) -> SymShape:
        return symbolic_shape(self.type(name))

    def element_type(self, name: str) -> Attribute:
        return self.type(name).element_type

    def value(self, name: str) -> np.ndarray | None:
        """The operand's value when it is known at compile time, else None."""
        values = self.operand_values.get(name, ())
        return values[0] if values else None

    def has(self, name: str) -> bool:
        return bool(self.operand_types.get(name))

    # -- attributes
    def attr(self, name: str) -> Any:
        if name in self.attributes:
            return self.attributes[name]
        return self.spec.attribute(name).default

    def spec_attr_names(self) -> set[str]:
        return {a.name for a in self.spec.attributes}

    # -- helpers for rules
    def error(self, message: str) -> ShapeError:
        return ShapeError(message)

    def rank(self, name: str) -> int:
        return len(self.shape(name))

    def normalize_axis(self, axis: int, rank: int, what: str = "axis") -> int:
        if not -rank <= axis < max(rank, 1):
            raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis

    def int_values(self, name: str) -> list[Dim] | None:
        """The operand's value as a list (ints, and symbols for the sizes a
        `Shape` of a symbolic tensor gives), when it is known."""
        value = self.value(name)
        if value is None:
            return None
        return [v if isinstance(v, SymExpr) else int(v) for v in np.asarray(value).reshape(-1)]

    def erased(self) -> ShapeContext:
        """This context with every symbol made an unknown dim (or value)."""
        types = {
            name: [tensor_type(t.element_type, [DYNAMIC if isinstance(d, SymExpr) else d
                                                for d in symbolic_shape(t)]) for t in group]
            for name, group in self.operand_types.items()
        }  # fmt: skip
        values = {
            name: [None if v is None or has_symbols(v) else v for v in group]
            for name, group in self.operand_values.items()
        }
        return ShapeContext(self.spec, types, values, self.attributes, self.num_results,
                            self.result_names)  # fmt: skip


def has_symbols(value: np.ndarray) -> bool:
    """Whether a compile-time value holds symbolic sizes (an object array)."""
    return value.dtype == object and any(isinstance(v, SymExpr) for v in value.reshape(-1))


def require_at_least(value: Dim, bound: int, problem: str) -> None:
    """A rule's requirement `value >= bound`, which for symbolic sizes narrows
    the range of the symbol it depends on (`symbolic.require_at_least`); a
    ShapeError (`problem`, and why) where it cannot hold."""
    why = symbolic.require_at_least(value, bound)
    if why is not None:
        raise ShapeError(f"{problem} ({why})")


def infer_types(ctx: ShapeContext) -> list[TensorType]:
    """The result types of the op `ctx` describes: its shape rule on the
    symbolic shapes, or on the erased ones where the rule cannot decide."""
    try:
        return ctx.spec.infer(ctx)
    except TypeError:  # UndecidedComparison, or a rule that computes with ints only
        return ctx.spec.infer(ctx.erased())


def broadcast_shapes(shapes: Sequence[SymShape], what: str = "operands") -> SymShape:
    """NumPy/ONNX multidirectional broadcasting, keeping unknown dims unknown.

    A symbol against a size c > 1 gives c (the symbol must be 1 or c, which
    is a contradiction only where its range holds neither); one symbol against
    1s gives the symbol; different symbols give an unknown dim (they may be
    equal, or one may be 1)."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[Dim] = []
    for axis in range(rank):
        dims = [s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0]
        sizes = {d for d in dims if isinstance(d, int) and d != DYNAMIC and d != 1}
        symbols = {d for d in dims if isinstance(d, SymExpr)}
        if len(sizes) > 1 or (sizes and not all(_may_be(s, (1, *sizes)) for s in symbols)):
            listing = ", ".join(format_shape(s) for s in shapes)
            raise ShapeError(f"{what} are not broadcast-compatible: {listing}")
        if sizes:
            result.append(sizes.pop())
        elif len(symbols) == 1:
            result.append(symbols.pop())
        elif symbols or DYNAMIC in dims:
            result.append(DYNAMIC)
        else:
            result.append(1)
    return tuple(result)


def _may_be(dim: SymExpr, sizes: Sequence[int]) -> bool:
    """Whether the symbolic `dim` may take one of `sizes`, by its range."""
    low, high = dim.bounds()
    return any(low <= size <= high for size in sizes)


def same_element_type(ctx: ShapeContext, types: Sequence[TensorType]) -> Attribute:
    """The common element type of `types`, or a ShapeError that lists them."""
    element_types = {t.element_type for t in types}
    if len(element_types) > 1:
        listing = ", ".join(str(t.element_type) for t in types)
        raise ShapeError(f"operands must have the same element type, got {listing}")
    return types[0].element_type


def result(element_type: Attribute, shape: Sequence[Dim]) -> list[TensorType]:
    return [tensor_type(element_type, tuple(shape))]


def dims_compatible(a: Dim, b: Dim) -> bool:
    return a == b or a == DYNAMIC or b == DYNAMIC


def types_compatible(actual: TensorType, inferred: TensorType) -> bool:
    """Equal element types and ranks; each dim equal or unknown on one side."""
    if actual.element_type != inferred.element_type:
        return False
    a, b = symbolic_shape(actual), symbolic_shape(inferred)
    return len(a) == len(b) and all(dims_compatible(x, y) for x, y in zip(a, b, strict=True))


def refine(actual: TensorType, inferred: TensorType) -> TensorType:
    """The more precise of two compatible types, dim by dim."""
    a, b = symbolic_shape(actual), symbolic_shape(inferred)
    dims = [x if x != DYNAMIC else y for x, y in zip(a, b, strict=True)]
    return tensor_type(actual.element_type, dims)


def spec_slots(spec: OpSpec, values: Sequence[Any], groups: Sequence[int]) -> dict[str, list[Any]]:
    """Groups a flat operand list by spec name, given each slot's size."""
    slots: dict[str, list[Any]] = {}
    index = 0
    for operand, size in zip(spec.operands, groups, strict=True):
        slots[operand.name] = list(values[index : index + size])
        index += size
    return slots


def group_sizes_for(spec: OpSpec, present: Mapping[str, int]) -> list[int]:
    """Slot sizes from a name->count mapping (optional absent => 0)."""
    sizes = []
    for operand in spec.operands:
        count = present.get(operand.name, 0)
        if operand.arity is Arity.SINGLE and count != 1:
            raise ShapeError(f"operand '{operand.name}' is required")
        sizes.append(count)
    return sizes
