"""Printing IR for people and for tools: whole weights by default, or elided."""

from __future__ import annotations

from typing import IO

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp
from xdsl.printer import Printer

from ember.dialects.graph import ConstantOp

ELIDED_HANDLE = "__elided__"


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


def print_module(module: ModuleOp, stream: IO[str]) -> None:
    Printer(stream=stream).print_op(module)
    stream.write("\n")
