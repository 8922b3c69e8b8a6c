"""Compile-time values of shape arithmetic on symbolic sizes.

Exporters compute shapes in the graph: `Shape -> Gather -> Unsqueeze ->
Concat -> Reshape`, `Shape -> Slice -> Mul`, `Where(Equal(shape, -1), ...)`.
When a tensor's dims are symbols (`N`, `S`), those values are NumPy *object*
arrays holding ints and `SymExpr`s, and shape inference follows them so that
the Reshape at the end still has a symbolic result shape.

Only ops whose result is exact on symbols are followed: data movement (the
reference kernel runs on the object array), `+ - *`, `Div` and `Mod` where
the quotient is exact or a size's floor division by a positive constant,
integer `Cast`, and
`Equal`/`Where` where the answer does not depend on the symbols' values
(`N + 1 == 0` is false for every size N). Anything else leaves the value
unknown, and the shape rule sees an unknown operand, as it would at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ember.dialects.graph import (
    AddOp,
    CastOp,
    ConcatOp,
    DivOp,
    EqualOp,
    ExpandOp,
    FlattenOp,
    GatherOp,
    GraphOp,
    IdentityOp,
    ModOp,
    MulOp,
    NegOp,
    ReshapeOp,
    SliceOp,
    SplitOp,
    SqueezeOp,
    SubOp,
    TileOp,
    TransposeOp,
    UnsqueezeOp,
    WhereOp,
)
from ember.dialects.graph.symbolic import Dim, SymExpr, UndecidedComparison, exact_quotient
from ember.reference.kernels import KERNELS

DATA_MOVEMENT: frozenset[type[GraphOp]] = frozenset(
    {ConcatOp, ExpandOp, FlattenOp, GatherOp, IdentityOp, ReshapeOp, SliceOp, SplitOp,
     SqueezeOp, TileOp, TransposeOp, UnsqueezeOp}
)  # fmt: skip
"""Ops whose reference kernel only moves elements, which it does for objects too."""


def _sign(value: Dim) -> int | None:
    """1, 0 or -1 where a sum of sizes' sign is the same for every size, else None."""
    if isinstance(value, int):
        return (value > 0) - (value < 0)
    if all(c > 0 for _, c in value.terms):
        return 1 if value.terms[0][0] == () else None  # a positive constant term
    if all(c < 0 for _, c in value.terms):
        return -1 if value.terms[0][0] == () else None
    return None


def _equal(a: Dim, b: Dim) -> bool:
    sign = _sign(a - b)
    if sign is None:
        raise UndecidedComparison(f"whether {a} == {b} depends on the sizes")
    return sign == 0


def _divide(a: Dim, b: Dim) -> Dim:
    """ONNX's integer Div (truncating), where it is exact on symbols: a
    quotient without remainder, or a size's floor division by a positive
    constant (which truncates alike)."""
    if isinstance(a, int) and isinstance(b, int):
        return int(np.trunc(a / b)) if b else _raise_undecided(f"{a} / 0")
    quotient = exact_quotient(a, b)
    if quotient is not None:
        return quotient
    if isinstance(a, SymExpr) and isinstance(b, int) and b > 0 and a.nonnegative():
        return a // b
    return _raise_undecided(f"{a} / {b} is not a floor division of a size")


def _modulo(a: Dim, b: Dim) -> Dim:
    """ONNX's integer Mod (fmod=0: the sign of the divisor, as Python's %),
    where the quotient is exact or a size's floor division."""
    if isinstance(a, int) and isinstance(b, int):
        return a % b if b else _raise_undecided(f"{a} mod 0")
    return a - _divide(a, b) * b


def _raise_undecided(message: str) -> Any:
    raise UndecidedComparison(message)


_ELEMENTWISE: Mapping[type[GraphOp], Callable[..., Any]] = {
    AddOp: lambda a, b: a + b,
    SubOp: lambda a, b: a - b,
    MulOp: lambda a, b: a * b,
    NegOp: lambda a: -a,
    DivOp: _divide,
    ModOp: _modulo,
    EqualOp: _equal,
    WhereOp: lambda condition, a, b: a if _decided(condition) else b,
}


def _decided(condition: Any) -> bool:
    if isinstance(condition, SymExpr):
        raise UndecidedComparison(f"{condition} is not a condition")
    return bool(condition)


def symbolic_values(
    op: GraphOp, inputs: Sequence[np.ndarray | None], attrs: dict[str, Any]
) -> list[np.ndarray] | None:
    """The results of `op` on operands some of which hold symbols (`attrs`
    ONNX-native, as the kernels take them), or None where they are not exact
    or not computable."""
    kind = type(op)
    try:
        if kind in DATA_MOVEMENT:
            outputs = KERNELS[op.SPEC.onnx_type](list(inputs), attrs)
        elif isinstance(op, CastOp) and np.dtype(_cast_target(attrs)).kind in "iu":
            outputs = [np.asarray(inputs[0], dtype=object)]
        elif kind in _ELEMENTWISE and not (isinstance(op, ModOp) and attrs.get("fmod", 0)):
            function = np.frompyfunc(_ELEMENTWISE[kind], len(inputs), 1)
            outputs = [np.asarray(function(*(np.asarray(i, dtype=object) for i in inputs)))]
        else:
            return None
    except (UndecidedComparison, ValueError, IndexError, TypeError, KeyError):
        return None
    if len(outputs) != len(op.results):
        return None
    return [settled(np.asarray(o, dtype=object)) for o in outputs]


def _cast_target(attrs: dict[str, Any]) -> Any:
    from onnx.helper import tensor_dtype_to_np_dtype

    return tensor_dtype_to_np_dtype(attrs["to"])


def settled(value: np.ndarray) -> np.ndarray:
    """An object array as int64 once no symbol is left in it (bools as bools)."""
    items = value.reshape(-1)
    if any(isinstance(v, SymExpr) for v in items):
        return value
    if all(isinstance(v, bool | np.bool_) for v in items) and items.size:
        return value.astype(np.bool_)
    return value.astype(np.int64)
