"""Symbolic dimensions: integer expressions over named sizes (`N`, `2 * S + 1`).

A dynamic dimension that ONNX names (`dim_param: "batch"`) is a *symbol*; the
same name is the same size everywhere in the model. Shape rules compute with
symbols as they do with ints, so a 3x3 convolution with stride 2 over `H`
gives `(H + 1) floordiv 2 - 1` and a Reshape of `N x S x 768` to `[0, 0, 12, 64]`
gives `N x S x 12 x 64`.

`SymExpr` is an integer polynomial over *atoms* (symbols, and `floordiv` of
an expression by a positive constant) in a canonical form: two expressions
that are equal as polynomials compare equal and hash alike, whatever order
they were built in. Every operation whose result is a constant returns a
plain `int`, so `N - N` is `0` and a `SymExpr` always mentions a symbol.

Comparisons are decided by the ranges the symbols may take (`in_ranges`
sets them while a shape rule runs; a symbol not given one is a size from 1
to `SIZE_LIMIT`): `N + 2 > 0` is true, `min(S, 2**62)` is `S`. What the
ranges do not decide raises `UndecidedComparison` (`N < 3` for N in 1..8),
as do `int(N)` and `range(N)`. A shape rule that needs such a decision sees
its operands' symbols erased to unknown dims instead (see
`shapes.infer_types`). Equality (`==`) is *structural*: `N == 1`
is False because the polynomials differ, which is what a rule that demands
equal sizes needs (it reports the mismatch), not what an op that compares
sizes at run time needs (`Equal` on shape values is folded only where the
sizes cannot change the answer: `ember/reference/shape_values.py`).

Symbols are sizes, so they are never negative: `floordiv` by a positive
constant is ONNX's truncating integer `Div` whenever the dividend is a
polynomial with non-negative coefficients (`nonnegative`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Union

Dim = Union[int, "SymExpr"]
"""One dimension of a symbolic shape: a size, DYNAMIC, or an expression."""


class UndecidedComparison(TypeError):
    """A comparison or conversion that depends on the values of symbols."""


SIZE_LIMIT = 1 << 34
"""No dimension is larger (a tensor of more elements breaks Ember's limit of
16 GiB per tensor): the upper bound of a symbol declared without one."""

Range = tuple[int, int | None]
"""The sizes a symbol may take, `(low, high)`; `high` None: up to `SIZE_LIMIT`."""

DEFAULT_RANGE: Range = (1, None)
"""The range of a symbol nothing bounds: any size from 1 up (`--dim N=0..8`
admits empty tensors)."""

_RANGES: ContextVar[MutableMapping[str, Range] | None] = ContextVar("symbol_ranges", default=None)


@contextmanager
def in_ranges(ranges: MutableMapping[str, Range]) -> Iterator[None]:
    """Decides comparisons by these ranges (which `require_at_least` may narrow)."""
    token = _RANGES.set(ranges)
    try:
        yield
    finally:
        _RANGES.reset(token)


def active_ranges() -> MutableMapping[str, Range]:
    """The ranges in effect (a fresh, empty mapping outside `in_ranges`)."""
    ranges = _RANGES.get()
    return {} if ranges is None else ranges


def require_at_least(value: Dim, bound: int) -> str | None:
    """Makes `value >= bound` hold: None where it does for every size in the
    ranges, or does once the range of the one symbol it depends on (linearly)
    is narrowed, which it then is (the entry checks of a compiled model hold
    inputs to the ranges); else why not: it fails for every size. Raises
    `UndecidedComparison` where neither can be said."""
    if isinstance(value, int):
        return None if value >= bound else f"{value} < {bound}"
    ranges = active_ranges()
    low, high = value.bounds(ranges)
    if low >= bound:
        return None
    if high < bound:
        sizes = ", ".join(f"{n} in {range_text(ranges.get(n, DEFAULT_RANGE))}"
                          for n in sorted(value.symbols()))  # fmt: skip
        return f"{value} < {bound} for every {sizes}"
    constant = value.terms[0][1] if value.terms[0][0] == () else 0
    linear = [(m, c) for m, c in value.terms if m != ()]
    if len(linear) != 1 or len(linear[0][0]) != 1 or linear[0][1] < 0:
        raise UndecidedComparison(f"whether {value} >= {bound} depends on the sizes")
    ((atom,), coefficient) = linear[0]
    least = -((constant - bound) // coefficient)  # atom >= least <=> value >= bound
    if isinstance(atom, FloorDiv):  # floor(x / d) >= k <=> x >= k * d
        return require_at_least(atom.numerator, least * atom.divisor)
    old_low, old_high = ranges.get(atom, DEFAULT_RANGE)
    if old_high is not None and least > old_high:
        return f"{value} >= {bound} needs {atom} >= {least}, but {atom} is at most {old_high}"
    ranges[atom] = (max(old_low, least), old_high)
    return None


@dataclass(frozen=True)
class FloorDiv:
    """The atom `numerator floordiv divisor` (divisor > 1, numerator not a
    multiple of it; see `_floordiv`)."""

    numerator: SymExpr
    divisor: int

    def key(self) -> tuple[str, ...]:
        return ("1", *self.numerator.key(), str(self.divisor))

    def __str__(self) -> str:
        numerator = self.numerator
        inner = str(numerator) if numerator.is_atom() else f"({numerator})"
        return f"{inner} floordiv {self.divisor}"


Atom = str | FloorDiv
Monomial = tuple[Atom, ...]
"""A product of atoms, sorted by `_atom_key` (a repeated atom is a power)."""


def _atom_key(atom: Atom) -> tuple[str, ...]:
    return ("0", atom) if isinstance(atom, str) else atom.key()


def _monomial_key(monomial: Monomial) -> tuple[tuple[str, ...], ...]:
    return tuple(_atom_key(a) for a in monomial)


class SymExpr:
    """A canonical integer polynomial over atoms, never a constant."""

    __slots__ = ("_hash", "terms")
    terms: tuple[tuple[Monomial, int], ...]
    """(monomial, coefficient) pairs, sorted, coefficients non-zero; the
    constant term, if any, has the empty monomial and comes first."""

    def __init__(self, terms: tuple[tuple[Monomial, int], ...]):
        self.terms = terms
        self._hash = hash(terms)

    # ---------------------------------------------------------- building
    @staticmethod
    def symbol(name: str) -> SymExpr:
        return SymExpr(((((name,)), 1),))

    @staticmethod
    def _from(coefficients: Mapping[Monomial, int]) -> Dim:
        terms = tuple(
            sorted(
                ((m, c) for m, c in coefficients.items() if c), key=lambda t: _monomial_key(t[0])
            )
        )
        if not terms:
            return 0
        if len(terms) == 1 and terms[0][0] == ():
            return terms[0][1]
        return SymExpr(terms)

    def _coefficients(self) -> dict[Monomial, int]:
        return dict(self.terms)

    # -------------------------------------------------------- arithmetic
    def __add__(self, other: Dim) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        result = self._coefficients()
        for monomial, coefficient in _terms_of(other):
            result[monomial] = result.get(monomial, 0) + coefficient
        return SymExpr._from(result)

    __radd__ = __add__

    def __neg__(self) -> Dim:
        return SymExpr._from({m: -c for m, c in self.terms})

    def __sub__(self, other: Dim) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other: Dim) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return (-self) + other

    def __mul__(self, other: Dim) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        result: dict[Monomial, int] = {}
        for left, a in self.terms:
            for right, b in _terms_of(other):
                monomial = tuple(sorted(left + right, key=_atom_key))
                result[monomial] = result.get(monomial, 0) + a * b
        return SymExpr._from(result)

    __rmul__ = __mul__

    def __floordiv__(self, other: Dim) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        if isinstance(other, int):
            return _floordiv(self, other)
        quotient = exact_quotient(self, other)
        if quotient is None:
            raise UndecidedComparison(f"({self}) floordiv ({other}) is not a polynomial")
        return quotient

    def __rfloordiv__(self, other: int) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        raise UndecidedComparison(f"{other} floordiv ({self}) is not a polynomial")

    def __mod__(self, other: Dim) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return self - (self // other) * other

    def __rmod__(self, other: int) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        raise UndecidedComparison(f"{other} mod ({self}) is not a polynomial")

    def __truediv__(self, other: Dim) -> Dim:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        quotient = exact_quotient(self, other)
        if quotient is None:
            raise UndecidedComparison(f"({self}) / ({other}) is not a polynomial")
        return quotient

    # -------------------------------------------------------- comparison
    def __eq__(self, other: object) -> bool:
        return isinstance(other, SymExpr) and self.terms == other.terms

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: Dim) -> bool:
        return _decide(self - other, "< 0", lambda lo, hi: hi < 0, lambda lo, hi: lo >= 0)

    def __le__(self, other: Dim) -> bool:
        return _decide(self - other, "<= 0", lambda lo, hi: hi <= 0, lambda lo, hi: lo > 0)

    def __gt__(self, other: Dim) -> bool:
        return _decide(other - self, "< 0", lambda lo, hi: hi < 0, lambda lo, hi: lo >= 0)

    def __ge__(self, other: Dim) -> bool:
        return _decide(other - self, "<= 0", lambda lo, hi: hi <= 0, lambda lo, hi: lo > 0)

    def __bool__(self) -> bool:
        return _decide(self, "!= 0", lambda lo, hi: lo > 0 or hi < 0, lambda lo, hi: lo == hi == 0)

    def __index__(self) -> int:
        raise UndecidedComparison(f"{self} is not a known integer")

    __int__ = __index__

    # ------------------------------------------------------------ queries
    def key(self) -> tuple[str, ...]:
        """A total order over expressions (used to sort atoms)."""
        return (str(self),)

    def is_atom(self) -> bool:
        """A lone symbol or floordiv, printed without parentheses."""
        return len(self.terms) == 1 and len(self.terms[0][0]) == 1 and self.terms[0][1] == 1

    def lone_symbol(self) -> str | None:
        """The symbol's name where the expression is just one symbol (`N`)."""
        atom = self.terms[0][0][0] if self.is_atom() else None
        return atom if isinstance(atom, str) else None

    def symbols(self) -> set[str]:
        names: set[str] = set()
        for monomial, _ in self.terms:
            for atom in monomial:
                names |= {atom} if isinstance(atom, str) else atom.numerator.symbols()
        return names

    def substitute(self, values: Mapping[str, Dim]) -> Dim:
        """The expression with the given symbols replaced (by ints or expressions)."""
        total: Dim = 0
        for monomial, coefficient in self.terms:
            product: Dim = coefficient
            for atom in monomial:
                product = product * _substitute_atom(atom, values)
            total = total + product
        return total

    def evaluate(self, values: Mapping[str, int]) -> int:
        """The value for the given symbol values (every symbol must be given)."""
        result = self.substitute(values)
        if not isinstance(result, int):
            missing = ", ".join(sorted(result.symbols()))
            raise KeyError(f"no value for {missing}")
        return result

    def bounds(self, ranges: Mapping[str, Range] | None = None) -> tuple[int, int]:
        """The least and greatest value over the symbols' ranges (interval
        arithmetic: exact for one occurrence of each symbol, wider otherwise)."""
        ranges = active_ranges() if ranges is None else ranges
        low = high = 0
        for monomial, coefficient in self.terms:
            term = (coefficient, coefficient)
            for atom in monomial:
                term = _interval_product(term, _atom_bounds(atom, ranges))
            low, high = low + term[0], high + term[1]
        return low, high

    def nonnegative(self) -> bool:
        """Provably >= 0 for every value of its symbols (symbols are sizes)."""
        return all(c > 0 for _, c in self.terms)

    # ----------------------------------------------------------- printing
    def __str__(self) -> str:
        text = ""
        constant = 0
        for monomial, coefficient in self.terms:
            if monomial == ():
                constant = coefficient
                continue
            # A leading minus binds tighter than floordiv: -(x floordiv 3) needs its parentheses.
            wrap = len(monomial) > 1 or abs(coefficient) != 1 or (coefficient < 0 and not text)
            factors = " * ".join(_atom_text(a, wrap) for a in monomial)
            magnitude = abs(coefficient)
            term = factors if magnitude == 1 else f"{magnitude} * {factors}"
            if not text:
                text = term if coefficient > 0 else f"-{term}"
            else:
                text += f" + {term}" if coefficient > 0 else f" - {term}"
        if constant:
            text += f" + {constant}" if constant > 0 else f" - {-constant}"
        return text

    def __repr__(self) -> str:
        # The text, so that a list of dims in a message reads [N, 3], not [SymExpr(N), 3].
        return str(self)


def range_text(bounds: Range) -> str:
    """`1..512`, or `1..` without an upper bound."""
    low, high = bounds
    return f"{low}..{'' if high is None else high}"


def in_range(size: int, bounds: Range) -> bool:
    low, high = bounds
    return low <= size and (high is None or size <= high)


def _decide(value: Dim, what: str, true: Callable[[int, int], bool],
            false: Callable[[int, int], bool]) -> bool:  # fmt: skip
    """Whether `value` (compared with 0 as `what` says) holds over the ranges."""
    if isinstance(value, int):
        return true(value, value)
    low, high = value.bounds()
    if true(low, high):
        return True
    if false(low, high):
        return False
    raise UndecidedComparison(f"whether {value} {what} depends on the sizes ({low}..{high})")


def _atom_bounds(atom: Atom, ranges: Mapping[str, Range]) -> tuple[int, int]:
    if isinstance(atom, str):
        low, high = ranges.get(atom, (1, None))
        return low, SIZE_LIMIT if high is None else high
    low, high = atom.numerator.bounds(ranges)
    return low // atom.divisor, high // atom.divisor


def _interval_product(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


_OPERANDS = (SymExpr, numbers.Integral)
"""What a `SymExpr` computes with (NumPy's integers are `Integral` too)."""


def _atom_text(atom: Atom, in_product: bool) -> str:
    if isinstance(atom, str):
        return atom
    return f"({atom})" if in_product else str(atom)


def _substitute_atom(atom: Atom, values: Mapping[str, Dim]) -> Dim:
    if isinstance(atom, str):
        return values.get(atom, SymExpr.symbol(atom))
    return atom.numerator.substitute(values) // atom.divisor


def _terms_of(value: Dim) -> Iterable[tuple[Monomial, int]]:
    if isinstance(value, SymExpr):
        return value.terms
    return (((), int(value)),)


def _floordiv(numerator: SymExpr, divisor: int) -> Dim:
    """`numerator floordiv divisor` in canonical form. Each coefficient `c`
    splits as `q * divisor + r` with `0 <= r < divisor`; the `q` parts leave
    the atom (`(2 * N + 3) floordiv 2 = N + 1 + 1 floordiv 2 = N + 1`), and
    what stays inside shares no factor with the divisor."""
    if divisor <= 0:
        raise UndecidedComparison(f"({numerator}) floordiv {divisor}: the divisor must be positive")
    whole: dict[Monomial, int] = {}
    rest: dict[Monomial, int] = {}
    for monomial, coefficient in numerator.terms:
        whole[monomial], remainder = divmod(coefficient, divisor)
        if remainder:
            rest[monomial] = remainder
    outside = SymExpr._from(whole)
    if all(m == () for m in rest):  # only a constant in [0, divisor) is left
        return outside
    common = math.gcd(divisor, *rest.values())
    inside = SymExpr._from({m: c // common for m, c in rest.items()})
    assert isinstance(inside, SymExpr)
    divisor //= common
    nested = [m for m, _ in inside.terms if m != ()]
    if len(nested) == 1 and len(nested[0]) == 1 and isinstance(nested[0][0], FloorDiv):
        if dict(inside.terms)[nested[0]] == 1:
            # floor((floor(x / a) + k) / b) = floor((x + k * a) / (a * b))
            inner = nested[0][0]
            k = inside.terms[0][1] if inside.terms[0][0] == () else 0
            return outside + (inner.numerator + k * inner.divisor) // (inner.divisor * divisor)
    return outside + SymExpr((((FloorDiv(inside, divisor),), 1),))


def exact_quotient(numerator: Dim, denominator: Dim) -> Dim | None:
    """`numerator / denominator` when it is a polynomial, else None. The
    denominator is a constant, the numerator itself, or one term
    (`12 * N * S`), which covers the element-count divisions of Reshape."""
    if isinstance(denominator, int):
        if denominator == 0:
            return None
        if all(c % denominator == 0 for _, c in _terms_of(numerator)):
            return SymExpr._from({m: c // denominator for m, c in _terms_of(numerator)})
        return None
    if numerator == denominator:
        return 1
    if len(denominator.terms) != 1:
        return None
    ((divisor_monomial, divisor_coefficient),) = denominator.terms
    result: dict[Monomial, int] = {}
    for monomial, coefficient in _terms_of(numerator):
        remaining = list(monomial)
        for atom in divisor_monomial:
            if atom not in remaining:
                return None
            remaining.remove(atom)
        if coefficient % divisor_coefficient:
            return None
        result[tuple(remaining)] = coefficient // divisor_coefficient
    return SymExpr._from(result)


def is_symbolic(dim: object) -> bool:
    return isinstance(dim, SymExpr)


def symbols_of(dims: Iterable[object]) -> set[str]:
    names: set[str] = set()
    for dim in dims:
        if isinstance(dim, SymExpr):
            names |= dim.symbols()
    return names
