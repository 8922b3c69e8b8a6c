"""`graph-bind-symbols{sizes="N=8,S=128"}`: gives symbolic dims sizes.

Each named symbol of the function's `graph.symbols` is replaced by its size
in the input types (the size must lie in the symbol's range), leaves
`graph.symbols`, and `graph-infer-shapes` then recomputes every type, so a
model whose every symbol is bound has static shapes again. This is how a
specialised version of a model is made (`ember.compile(...,
specialize={"N": [1, 8]})` binds each combination of sizes); an unknown
symbol or a size outside its range is an error naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph.dims import (
    SYMBOLS_ATTR,
    symbol_ranges,
    symbolic_shape,
    symbolic_type,
    symbols_attribute,
)
from ember.dialects.graph.symbolic import SymExpr, in_range, range_text
from ember.passes.graph.infer_shapes import infer_function_shapes


def bind_symbols(func: FuncOp, sizes: Mapping[str, int]) -> None:
    """Binds the function's symbols in `sizes` (DiagnosticException on an
    unknown symbol or a size out of range) and re-infers every type."""
    ranges = symbol_ranges(func.attributes.get(SYMBOLS_ATTR))  # type: ignore[arg-type]
    for name, size in sizes.items():
        if name not in ranges:
            known = ", ".join(sorted(ranges)) or "none"
            raise DiagnosticException(
                f"graph-bind-symbols: {func.sym_name.data} has no symbol {name} (its symbols: {known})"
            )
        bounds = ranges.pop(name)
        if not in_range(size, bounds):
            raise DiagnosticException(
                f"graph-bind-symbols: {name} = {size} is outside its range {range_text(bounds)}"
            )
    for arg in list(func.body.block.args):
        if isinstance(arg.type, TensorType):
            dims = [d.substitute(sizes) if isinstance(d, SymExpr) else d
                    for d in symbolic_shape(arg.type)]  # fmt: skip
            Rewriter.replace_value_with_new_type(arg, symbolic_type(arg.type.element_type, dims))
    func.function_type = FunctionType.from_lists(
        [a.type for a in func.body.block.args], func.function_type.outputs.data
    )
    if ranges:
        func.attributes[SYMBOLS_ATTR] = symbols_attribute(ranges)
    else:
        func.attributes.pop(SYMBOLS_ATTR, None)
    infer_function_shapes(func)


def parse_sizes(text: str) -> dict[str, int]:
    """`N=8,S=128` -> {"N": 8, "S": 128} (DiagnosticException if malformed)."""
    sizes: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            raise DiagnosticException(
                f"graph-bind-symbols: sizes must read NAME=SIZE,..., got '{item}'"
            )
        sizes[name.strip()] = int(value)
    return sizes


@dataclass(frozen=True)
class BindSymbolsPass(ModulePass):
    """Replaces the named symbols by sizes and re-infers every type (see the
    module docstring)."""

    name = "graph-bind-symbols"

    sizes: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sizes = parse_sizes(self.sizes)
        for func in op.walk():
            if isinstance(func, FuncOp) and not func.is_declaration:
                bind_symbols(func, sizes)
