"""Symbolic dimensions: the algebra agrees with integer arithmetic, its
canonical form makes equal expressions equal, and the text round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import f32

from ember.dialects.graph.dims import DimsAttr, parse_dim, symbolic_shape, symbolic_type
from ember.dialects.graph.symbolic import (
    SymExpr,
    UndecidedComparison,
    in_ranges,
    require_at_least,
)
from ember.dialects.graph.types import DYNAMIC

NAMES = ("N", "S", "H")


def _tree(depth: int) -> st.SearchStrategy:
    leaf = st.one_of(st.integers(-6, 6).map(lambda c: ("const", c)),
                     st.sampled_from(NAMES).map(lambda n: ("sym", n)))  # fmt: skip
    if depth == 0:
        return leaf
    sub = _tree(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(["+", "-", "*"]), sub, sub),
        st.tuples(st.sampled_from(["floordiv", "mod", "ceildiv"]), sub, st.integers(1, 5)),
    )


def _build(tree: tuple, values: dict[str, int] | None):
    """The tree as a SymExpr (values None) or as the int it is for `values`."""
    kind = tree[0]
    if kind == "const":
        return tree[1]
    if kind == "sym":
        return SymExpr.symbol(tree[1]) if values is None else values[tree[1]]
    if kind in ("+", "-", "*"):
        a, b = _build(tree[1], values), _build(tree[2], values)
        return a + b if kind == "+" else a - b if kind == "-" else a * b
    a, c = _build(tree[1], values), tree[2]
    return {"floordiv": a // c, "mod": a % c, "ceildiv": -((-a) // c)}[kind]


def _value(dim, values: dict[str, int]) -> int:
    return dim.evaluate(values) if isinstance(dim, SymExpr) else dim


SIZES = st.fixed_dictionaries({n: st.integers(0, 40) for n in NAMES})


@settings(max_examples=300, deadline=None)
@given(_tree(4), SIZES)
def test_expressions_evaluate_as_integers_do(tree: tuple, values: dict[str, int]) -> None:
    assert _value(_build(tree, None), values) == _build(tree, values)


@settings(max_examples=200, deadline=None)
@given(_tree(3), SIZES)
def test_the_printed_form_reads_back_equal(tree: tuple, values: dict[str, int]) -> None:
    expr = _build(tree, None)
    again = parse_dim(str(expr))
    assert again == expr
    assert _value(again, values) == _build(tree, values)


@settings(max_examples=200, deadline=None)
@given(_tree(2), _tree(2), _tree(2))
def test_the_canonical_form_is_order_free(a: tuple, b: tuple, c: tuple) -> None:
    x, y, z = (_build(t, None) for t in (a, b, c))
    assert x + y == y + x
    assert (x + y) + z == x + (y + z)
    assert x * (y + z) == x * y + x * z
    assert x - x == 0
    assert hash(x * y) == hash(y * x)


def test_common_shapes() -> None:
    n, s, h = (SymExpr.symbol(name) for name in NAMES)
    assert str((h + 2 - 3) // 2 + 1) == "(H + 1) floordiv 2"
    assert str(((h + 1) // 2 + 1) // 2 - 1) == "(H + 3) floordiv 4 - 1"  # nested divisions merge
    assert (n * s * 768) / (n * s * 64) == 12
    assert (4 * n + 6) // 4 == n + 1
    assert str(parse_dim("2*S + 1")) == "2 * S + 1"


def test_comparisons_are_decided_by_ranges() -> None:
    n = SymExpr.symbol("N")
    assert n + 2 > 0 and min(n, 2**62) == n  # sizes are at least 1, at most 2^34
    with pytest.raises(UndecidedComparison):
        bool(n < 3)
    with in_ranges({"N": (4, 8)}):
        assert not n < 3 and n <= 8
    with pytest.raises(UndecidedComparison):
        int(n)


def test_requirements_narrow_ranges_or_fail() -> None:
    h = SymExpr.symbol("H")
    ranges = {"H": (1, None)}
    with in_ranges(ranges):
        assert require_at_least((h + 1) // 2 - 3, 0) is None
    assert ranges["H"] == (5, None)
    with in_ranges({"H": (1, 4)}):
        problem = require_at_least(h - 6, 0)
    assert problem == "H - 6 < 0 for every H in 1..4"
    bounded = {"H": (1, 8)}
    with in_ranges(bounded):
        assert require_at_least(h - 3, 0) is None
    assert bounded["H"] == (3, 8)


def test_types_record_symbols_in_their_encoding() -> None:
    n, h = SymExpr.symbol("N"), SymExpr.symbol("H")
    value_type = symbolic_type(f32, [n, 3, h // 2, DYNAMIC])
    assert str(value_type) == "tensor<?x3x?x?xf32, #graph.dims<N, H floordiv 2, ?>>"
    assert symbolic_shape(value_type) == (n, 3, h // 2, DYNAMIC)
    assert symbolic_type(f32, [2, DYNAMIC]).encoding != DimsAttr([DYNAMIC])  # no symbol: none
