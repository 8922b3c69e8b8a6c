"""`loop-fuse-epilogues`: marks each contraction on buffers whose
micro-kernels can apply the elementwise ops after it to their accumulators
before they store them (a bias add, an activation, a residual add: its
epilogue, `ember.passes.loop.epilogue`).

The mark is `loop.epilogue = N` on the contraction, N the length of the
longest chain of generics right after it that is an epilogue; `loop-generate`
then emits those generics inside the contraction's blocks, on vectors, and
erases them with the buffers they passed values through. The pass runs on
buffers after `tensor-default-schedule` (the micro-kernel and its vector
width are the schedule's) and before `loop-generate`; it changes no op but
the attribute, so the IR between the two shows what will be fused. Ops
without a micro-kernel that writes its whole output, or with nothing
elementwise after it, are left alone.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from ember.dialects.schedule import STRUCTURED_OPS
from ember.passes.loop.epilogue import EPILOGUE_ATTR
from ember.passes.loop.generate import fused_epilogue


class FuseEpiloguesPass(ModulePass):
    """Sets `loop.epilogue = N` on every contraction whose micro-kernels can
    apply the N generics after it (see the module docstring)."""

    name = "loop-fuse-epilogues"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for contraction in op.walk():
            if (
                not isinstance(contraction, STRUCTURED_OPS)
                or EPILOGUE_ATTR in contraction.attributes
            ):
                continue
            epilogue = fused_epilogue(contraction)
            if epilogue is not None:
                contraction.attributes[EPILOGUE_ATTR] = IntegerAttr(len(epilogue.generics), i64)


__all__ = ["FuseEpiloguesPass"]
