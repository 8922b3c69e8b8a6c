"""Symbolic dimensions in the IR: `#graph.dims` and `#graph.range`.

A tensor type keeps `?` for every dimension that is not a constant; its
encoding says what each `?` is, in order:

    tensor<?x?x768xf32, #graph.dims<N, S>>
    tensor<?x64x?x?xf32, #graph.dims<N, (H + 1) floordiv 2, W floordiv 2>>
    tensor<?x?xi64, #graph.dims<N, ?>>          # the second size is unknown

Without an encoding every `?` is unknown, as before. The function that uses
symbols lists them, with the range each may take, in its `graph.symbols`
attribute: `{N = #graph.range<1, 64>, S = #graph.range<1, ?>}` (`?`: no upper
bound). The expressions are `symbolic.SymExpr`s in the syntax of MLIR's
affine expressions with symbol names: `+`, `-`, `*`, `floordiv`, `ceildiv`,
`mod` (the last three by a positive constant) and parentheses.

`symbolic_shape` reads a type's dims (ints, `DYNAMIC`, `SymExpr`s) and
`symbolic_type` builds one; `parse_dim` reads one expression from text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    IntAttr,
    NoneAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import BaseParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from ember.dialects.graph.symbolic import Dim, Range, SymExpr, UndecidedComparison

UNKNOWN = "?"
"""The text of an unknown dimension in `#graph.dims`."""

SYMBOLS_ATTR = "graph.symbols"
"""The function attribute listing its symbols and their ranges."""


@irdl_attr_definition
class DimsAttr(ParametrizedAttribute):
    """A tensor type's encoding: what each of its `?` dims is."""

    name = "graph.dims"

    dims: ArrayAttr[StringAttr]

    def __init__(self, dims: Sequence[Dim]):
        super().__init__(ArrayAttr([StringAttr(dim_text(d)) for d in dims]))

    @property
    def values(self) -> list[Dim]:
        return [_parsed(d.data) for d in self.dims.data]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{', '.join(d.data for d in self.dims.data)}>")

    @classmethod
    def parse_parameters(cls, parser: BaseParser) -> list[Attribute]:
        dims = parser.parse_comma_separated_list(
            parser.Delimiter.ANGLE, lambda: _parse_dim_or_unknown(parser)
        )
        return [ArrayAttr([StringAttr(dim_text(d)) for d in dims])]


@irdl_attr_definition
class RangeAttr(ParametrizedAttribute):
    """The sizes a symbol may take: `#graph.range<1, 512>`, `#graph.range<1, ?>`."""

    name = "graph.range"

    low: IntAttr
    high: IntAttr | NoneAttr

    def __init__(self, low: int, high: int | None):
        super().__init__(IntAttr(low), NoneAttr() if high is None else IntAttr(high))

    @property
    def bounds(self) -> tuple[int, int | None]:
        return self.low.data, self.high.data if isinstance(self.high, IntAttr) else None

    def verify(self) -> None:
        problem = range_problem(*self.bounds)
        if problem:
            raise VerifyException(f"{self.name}: {problem}")

    def print_parameters(self, printer: Printer) -> None:
        low, high = self.bounds
        printer.print_string(f"<{low}, {UNKNOWN if high is None else high}>")

    @classmethod
    def parse_parameters(cls, parser: BaseParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            low = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            high = None
            if parser.parse_optional_punctuation(UNKNOWN) is None:
                high = parser.parse_integer(allow_boolean=False)
        return [IntAttr(low), NoneAttr() if high is None else IntAttr(high)]


def range_problem(low: int, high: int | None) -> str | None:
    if low < 0:
        return f"a size cannot be below 0, the range starts at {low}"
    if high is not None and high < low:
        return f"the range {low}..{high} is empty"
    return None


# ------------------------------------------------------------ expressions


def dim_text(dim: Dim) -> str:
    if isinstance(dim, SymExpr):
        return str(dim)
    return UNKNOWN if dim == DYNAMIC_INDEX else str(dim)


@lru_cache(maxsize=4096)
def _parsed(text: str) -> Dim:
    return DYNAMIC_INDEX if text == UNKNOWN else parse_dim(text)


def parse_dim(text: str) -> Dim:
    """One expression (`2 * S + 1`) from text; raises ValueError naming the problem."""
    parser = Parser(Context(), text)
    try:
        dim = _parse_sum(parser)
        if parser.pos < len(text.rstrip()):
            parser.raise_error("expected the end of the expression")
    except (ParseError, UndecidedComparison) as error:
        raise ValueError(f"'{text}' is not a dimension expression: {_first_line(error)}") from None
    return dim


def _first_line(error: Exception) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(error).__name__


def _parse_dim_or_unknown(parser: BaseParser) -> Dim:
    if parser.parse_optional_punctuation(UNKNOWN) is not None:
        return DYNAMIC_INDEX
    return _parse_sum(parser)


def _parse_sum(parser: BaseParser) -> Dim:
    total = _parse_product(parser)
    while True:
        if parser.parse_optional_punctuation("+") is not None:
            total = total + _parse_product(parser)
        elif parser.parse_optional_punctuation("-") is not None:
            total = total - _parse_product(parser)
        else:
            return total


_BY_CONSTANT: Mapping[str, Callable[[Dim, int], Dim]] = {
    "floordiv": lambda a, b: a // b,
    "ceildiv": lambda a, b: -((-a) // b),
    "mod": lambda a, b: a % b,
}


def _parse_product(parser: BaseParser) -> Dim:
    product = _parse_factor(parser)
    while True:
        if parser.parse_optional_punctuation("*") is not None:
            product = product * _parse_factor(parser)
            continue
        keyword = parser.parse_optional_keyword_in(tuple(_BY_CONSTANT))
        if keyword is None:
            return product
        start = parser.pos
        divisor = parser.parse_integer(allow_boolean=False, allow_negative=False)
        if divisor <= 0:
            parser.raise_error(f"{keyword} needs a positive constant", start, parser.pos)
        product = _BY_CONSTANT[keyword](product, divisor)


def _parse_factor(parser: BaseParser) -> Dim:
    if parser.parse_optional_punctuation("-") is not None:
        return -_parse_factor(parser)
    if parser.parse_optional_punctuation("(") is not None:
        inner = _parse_sum(parser)
        parser.parse_punctuation(")")
        return inner
    number = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
    if number is not None:
        return number
    name = parser.parse_optional_identifier()
    if name is None or name in _BY_CONSTANT:
        parser.raise_error("expected a size, a symbol or '('")
    return SymExpr.symbol(name)


# -------------------------------------------------------------- tensor types


def symbolic_shape(value_type: TensorType) -> tuple[Dim, ...]:
    """The dims of a tensor type: ints, `DYNAMIC`, and the `SymExpr`s its
    `#graph.dims` encoding gives its `?` dims."""
    shape = value_type.get_shape()
    encoding = value_type.encoding
    if not isinstance(encoding, DimsAttr):
        return tuple(shape)
    dynamic = iter(encoding.values)
    return tuple(next(dynamic, DYNAMIC_INDEX) if d == DYNAMIC_INDEX else d for d in shape)


def symbolic_type(element_type: Attribute, dims: Sequence[Dim]) -> TensorType:
    """A tensor type with these dims; the encoding lists the `?` dims when
    one of them is a symbol."""
    shape = [DYNAMIC_INDEX if isinstance(d, SymExpr) else int(d) for d in dims]
    dynamic = [d for d in dims if isinstance(d, SymExpr) or d == DYNAMIC_INDEX]
    if not any(isinstance(d, SymExpr) for d in dynamic):
        return TensorType(element_type, shape)
    return TensorType(element_type, shape, DimsAttr(dynamic))


def encoding_problem(value_type: Attribute) -> str | None:
    """Why a tensor type's `#graph.dims` does not fit its shape, or None."""
    if not isinstance(value_type, TensorType) or not isinstance(value_type.encoding, DimsAttr):
        return None
    expected = sum(1 for d in value_type.get_shape() if d == DYNAMIC_INDEX)
    given = len(value_type.encoding.dims.data)
    if given != expected:
        return f"{value_type} has {expected} '?' dims but its #graph.dims lists {given}"
    return None


# ------------------------------------------------------------------ symbols


def symbol_ranges(attributes: DictionaryAttr | None) -> dict[str, Range]:
    """The symbols a function's `graph.symbols` attribute declares."""
    if attributes is None:
        return {}
    return {
        name: value.bounds
        for name, value in attributes.data.items()
        if isinstance(value, RangeAttr)
    }


def symbols_attribute(ranges: Mapping[str, Range]) -> DictionaryAttr:
    return DictionaryAttr({name: RangeAttr(*bounds) for name, bounds in sorted(ranges.items())})


_KEYWORDS = frozenset(_BY_CONSTANT)


def symbol_name(text: str) -> str:
    """A name the `#graph.dims` syntax reads back as one symbol (`batch size`
    -> `batch_size`, `2d` -> `_2d`)."""
    name = re.sub(r"[^A-Za-z0-9_$.]", "_", text) or "_"
    if not re.match(r"[A-Za-z_]", name) or name in _KEYWORDS:
        name = f"_{name}"
    return name


def dim_from_name(text: str) -> Dim:
    """The dim an ONNX `dim_param` means: an expression over symbols where it
    reads as one (`batch`, `2 * s0 + 1`), else a symbol of that name made
    readable (`symbol_name`)."""
    try:
        dim = parse_dim(text)
    except ValueError:
        dim = None
    return dim if isinstance(dim, SymExpr) else SymExpr.symbol(symbol_name(text))
