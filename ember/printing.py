"""Printing IR for people and for tools: whole weights by default, or elided.

Two ways to elide, with the same text for a `graph.constant`:

- `elide_large_constants` rewrites the module (what `ember import` prints:
  graph IR whose constants no longer hold their data, still parseable);
- `eliding_printer` leaves the module alone and elides while printing, for
  any op (`graph.constant`, `loop.weight`, `arith.constant`, ...), so
  `ember-opt` can show the IR between passes without losing the weights the
  next pass needs.
"""

from __future__ import annotations

from typing import IO

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer
from xdsl.syntax_printer import SyntaxPrinter

from ember.dialects.graph import ConstantOp
from ember.dialects.loop import WeightOp

ELIDED_HANDLE = "__elided__"

DEFAULT_ELISION_LIMIT = 16
"""Constants of more elements than this are elided when no limit is given."""


def elide_large_constants(module: ModuleOp, limit: int) -> None:
    """Replaces constant data of more than `limit` elements by
    `dense_resource<__elided__>`, as `mlir-opt --mlir-elide-elementsattrs-if-larger`
    does. The result reads well but no longer holds the weights."""
    for op in module.walk():
        if not isinstance(op, ConstantOp):
            continue
        value = op.properties["value"]
        if isinstance(value, DenseIntOrFPElementsAttr) and len(value) > limit:
            op.properties["value"] = DenseResourceAttr.from_params(ELIDED_HANDLE, value.get_type())


def print_module(module: ModuleOp, stream: IO[str], debuginfo: bool = False) -> None:
    """Prints `module`; with `debuginfo`, each op's location (its source names) too."""
    Printer(stream=stream, print_debuginfo=debuginfo).print_op(module)
    stream.write("\n")


def is_large_constant(attribute: Attribute, limit: int) -> bool:
    """Data of more than `limit` elements that are not all one value. Splats
    print as one value whatever their size, so, as in MLIR, they stay."""
    if not isinstance(attribute, DenseIntOrFPElementsAttr):
        return False
    if attribute.get_type().element_count() <= limit:
        return False
    data = attribute.data.data
    element_size = attribute.get_type().element_type.compile_time_size
    return data != data[:element_size] * (len(data) // element_size)


def elided(attribute: DenseIntOrFPElementsAttr) -> DenseResourceAttr:
    return DenseResourceAttr.from_params(ELIDED_HANDLE, attribute.get_type())


# Ops whose custom format prints their data itself rather than through
# `print_attribute`, with what to print instead when that data is elided:
# the custom format given the elided resource (it parses back), or the
# generic format (the custom one cannot show a resource).
_SWAP_INTO_CUSTOM_FORMAT = "custom"
_PRINT_GENERIC = "generic"
_SELF_PRINTED_DATA: dict[type[Operation], tuple[str, str]] = {
    ConstantOp: ("value", _SWAP_INTO_CUSTOM_FORMAT),
    WeightOp: ("value", _PRINT_GENERIC),
}


class _ElidingMixin(Printer):
    """Prints constant data of more than `elide_limit` elements as
    `dense_resource<__elided__>` (the module is not changed)."""

    elide_limit: int

    def print_attribute(self, attribute: Attribute) -> None:
        if is_large_constant(attribute, self.elide_limit):
            assert isinstance(attribute, DenseIntOrFPElementsAttr)
            attribute = elided(attribute)
        super().print_attribute(attribute)

    def print_resource_handle(self, dialect: str, handle: str) -> None:
        # An elided constant names no blob: nothing for `print_metadata` to list.
        if handle == ELIDED_HANDLE:
            self.print_string(handle)
        else:
            super().print_resource_handle(dialect, handle)

    def print_op(self, op: Operation) -> None:
        entry = _SELF_PRINTED_DATA.get(type(op))
        if entry is None or self.print_generic_format:
            super().print_op(op)
            return
        name, form = entry
        value = op.properties.get(name)
        if value is None or not is_large_constant(value, self.elide_limit):
            super().print_op(op)
            return
        if form == _PRINT_GENERIC:
            # The generic format prints properties through print_attribute.
            self.print_generic_format = True
            try:
                super().print_op(op)
            finally:
                self.print_generic_format = False
            return
        # Swapped for the duration of the print only: the module keeps its data.
        assert isinstance(value, DenseIntOrFPElementsAttr)
        op.properties[name] = elided(value)
        try:
            super().print_op(op)
        finally:
            op.properties[name] = value


class ElidingPrinter(_ElidingMixin):
    pass


class ElidingSyntaxPrinter(_ElidingMixin, SyntaxPrinter):
    pass


def make_printer(
    stream: IO[str],
    *,
    elide_limit: int | None = None,
    syntax_highlight: bool = False,
    print_generic_format: bool = False,
    print_properties_as_attributes: bool = False,
    print_debuginfo: bool = False,
) -> Printer:
    """A printer with xDSL's printing options, eliding constants of more than
    `elide_limit` elements when that is given."""
    options = {
        "print_generic_format": print_generic_format,
        "print_properties_as_attributes": print_properties_as_attributes,
        "print_debuginfo": print_debuginfo,
    }
    if elide_limit is None:
        plain_class = SyntaxPrinter if syntax_highlight else Printer
        return plain_class(stream=stream, **options)
    eliding_class = ElidingSyntaxPrinter if syntax_highlight else ElidingPrinter
    printer = eliding_class(stream=stream, **options)
    printer.elide_limit = elide_limit
    return printer
