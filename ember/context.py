"""The xDSL context with Ember's dialects, shared by the API and the tools."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func

from ember.dialects.graph import Graph


def make_context() -> Context:
    """A context that knows `builtin`, `func` and Ember's dialects."""
    ctx = Context()
    for dialect in (Builtin, Func, Graph):
        ctx.load_dialect(dialect)
    return ctx
