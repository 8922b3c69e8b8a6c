"""`loop-form-kernels`: every loop nest outside a kernel becomes a kernel of its own.

Bufferization keeps each fused group's loop nests in one `loop.kernel`;
the nests of unfused ops lie at the top level of the function. This pass
wraps each such top-level loop (`scf.for`/`scf.parallel`) in a
`loop.kernel` (no kind) of its own, so that afterwards every loop nest of
the function runs inside exactly one kernel: the unit a target outlines,
launches or offloads (`loop-outline-kernels` runs it first). Nests inside
kernels, the ops between nests and functions already outlined as kernels
(`ember.kernel`) are left alone.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ember.dialects.loop import KERNEL_ATTR, KernelOp
from ember.dialects.loop_nests import is_loop


def form_kernels(func: FuncOp) -> None:
    """Wraps each top-level loop of `func` in a `loop.kernel` of its own."""
    block = func.body.block
    for op in [op for op in block.ops if is_loop(op)]:
        kernel = KernelOp(Block())
        kernel.location = op.location  # the source names of its nest
        Rewriter.insert_op(kernel, InsertPoint.before(op))
        op.detach()
        kernel.body.block.insert_op_before(op, kernel.terminator)


class FormKernelsPass(ModulePass):
    """Wraps each loop nest outside any `loop.kernel` in a kernel of its own."""

    name = "loop-form-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.ops:
            if (
                isinstance(func, FuncOp)
                and not func.is_declaration
                and KERNEL_ATTR not in func.attributes
            ):
                form_kernels(func)


__all__ = ["FormKernelsPass", "form_kernels"]
