"""`loop-form-kernels`: every loop nest or structured op outside a kernel becomes a kernel of its own.

Bufferization keeps each fused group's ops in one `loop.kernel`; the ops
of unfused ops lie at the top level of the function: structured ops on
buffers until `loop-generate`, loop nests after. This pass wraps each such
top-level loop (`scf.for`/`scf.parallel`) or structured op on buffers
(`linalg.generic`, a named linalg op, `linalg.fill`/`copy`,
`ember_linalg.gather`/`scatter`) in a `loop.kernel` (no kind) of its own,
so that afterwards every loop nest of the function runs inside exactly one
kernel: the unit a target outlines, launches or offloads
(`loop-outline-kernels` runs it first). A `linalg.fill` of the buffer that
the structured op right after it writes joins that op's kernel (its
micro-kernels may start from the fill's value instead). Nests inside
kernels, the ops between nests, a structured op marked with an epilogue
(`loop.epilogue`: the generics after it run in its micro-kernels, so they
stay together where they are) and functions already outlined as kernels
(`ember.kernel`) are left alone.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ember.dialects.ember_linalg import GatherOp, ScatterOp
from ember.dialects.loop import KERNEL_ATTR, KernelOp
from ember.dialects.loop_nests import is_loop
from ember.dialects.schedule import STRUCTURED_OPS
from ember.passes.loop.epilogue import EPILOGUE_ATTR

BUFFER_OPS = (*STRUCTURED_OPS, linalg.FillOp, linalg.CopyOp, GatherOp, ScatterOp)
"""The structured ops `loop-generate` makes loops of, on buffers."""


def _structured_on_buffers(op: Operation) -> bool:
    return (isinstance(op, BUFFER_OPS) and EPILOGUE_ATTR not in op.attributes
            and any(isinstance(v.type, MemRefType) for v in op.operands))  # fmt: skip


def _fills_for_next(op: Operation) -> bool:
    """Whether `op` is a fill of the one output of the structured op after it."""
    after = op.next_op
    outputs = getattr(after, "outputs", ())
    return (isinstance(op, linalg.FillOp) and after is not None and _structured_on_buffers(after)
            and len(outputs) == 1 and outputs[0] is op.outputs[0])  # fmt: skip


def form_kernels(func: FuncOp) -> None:
    """Wraps each top-level loop and structured op on buffers of `func` in
    a `loop.kernel` of its own (a fill with the op it fills for)."""
    block = func.body.block
    pending: list[Operation] = []
    for op in list(block.ops):
        if not (is_loop(op) or _structured_on_buffers(op)):
            continue
        pending.append(op)
        if _fills_for_next(op):
            continue
        kernel = KernelOp(Block())
        kernel.location = op.location  # the source names of its nest
        Rewriter.insert_op(kernel, InsertPoint.before(pending[0]))
        for member in pending:
            member.detach()
            kernel.body.block.insert_op_before(member, kernel.terminator)
        pending = []


class FormKernelsPass(ModulePass):
    """Wraps each loop nest and structured op outside any `loop.kernel` in a
    kernel of its own."""

    name = "loop-form-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.ops:
            if (
                isinstance(func, FuncOp)
                and not func.is_declaration
                and KERNEL_ATTR not in func.attributes
            ):
                form_kernels(func)


__all__ = ["BUFFER_OPS", "FormKernelsPass", "form_kernels"]
