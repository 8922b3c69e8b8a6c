"""The xDSL context with Ember's dialects, shared by the API and the tools."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.gpu import GPU
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.llvm import LLVM
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.dialects.tensor import Tensor
from xdsl.dialects.vector import Vector

from ember.dialects.ember_gpu import EmberGpu
from ember.dialects.ember_linalg import EmberLinalg
from ember.dialects.graph import Graph
from ember.dialects.loop import Loop
from ember.dialects.npu.ops import Npu


def make_context() -> Context:
    """A context that knows `builtin`, `func`, `arith`, `math`, `memref`, `scf`,
    `llvm`, `vector` (the micro-kernels' vector code), the tensor level's upstream
    `linalg` and `tensor`, the `gpu` level's `gpu`, and Ember's dialects
    (`graph`, `ember_linalg`, `loop`, `ember_gpu`, `npu`)."""
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math, MemRef, Scf, LLVM, Vector, Linalg, Tensor, GPU,
                    Graph, EmberLinalg, Loop, EmberGpu, Npu):  # fmt: skip
        ctx.load_dialect(dialect)
    return ctx
