"""The xDSL context with Ember's dialects, shared by the API and the tools."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.llvm import LLVM
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf

from ember.dialects.graph import Graph
from ember.dialects.loop import Loop
from ember.dialects.tensor import Tensor


def make_context() -> Context:
    """A context that knows `builtin`, `func`, `arith`, `math`, `memref`, `scf`,
    `llvm` and Ember's dialects."""
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math, MemRef, Scf, LLVM, Graph, Tensor, Loop):
        ctx.load_dialect(dialect)
    return ctx
