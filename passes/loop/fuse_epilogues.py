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
the attribute, so the IR between the two shows what will be fused, with
one exception: a view that bufferization placed between the contraction and
its first generic (`memref.reinterpret_cast` of a grouped convolution's
bias, split into groups, or another view of a buffer defined before the
contraction) moves before the contraction, where the blocks that read it
will be. Ops without a micro-kernel that writes its whole output, or with
nothing elementwise after it, are left alone.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue
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
            hoisted = _hoist_views(contraction)
            epilogue = fused_epilogue(contraction)
            if epilogue is not None:
                contraction.attributes[EPILOGUE_ATTR] = IntegerAttr(len(epilogue.generics), i64)
            elif hoisted:
                _unhoist(hoisted)


VIEWS = (memref.ReinterpretCastOp, memref.SubviewOp, memref.ViewOp)
"""Ops that only describe another layout of a buffer: moving one earlier
changes what no loop reads or writes."""


def _hoist_views(contraction: Operation) -> list[tuple[Operation, Operation]]:
    """Moves the views between `contraction` and the next op that is neither
    a view nor a `memref.alloc` before `contraction` (and the fill of its
    output), where they take only values defined before it; returns each
    moved view with the op it stood before."""
    after: set[SSAValue] = set()
    moved = []
    # Before the fill of the output just before the contraction, if any: the
    # two stay together (`generate.absorbed_fill`).
    first = contraction
    if isinstance(first.prev_op, linalg.FillOp) and first.prev_op.outputs[0] in first.operands:
        first = first.prev_op
    following = contraction.next_op
    while isinstance(following, (memref.AllocOp, *VIEWS)):
        current, following = following, following.next_op
        if isinstance(current, VIEWS) and not set(current.operands) & after:
            assert following is not None  # a block ends in its terminator
            current.detach()
            first.parent_block().insert_op_before(current, first)  # type: ignore[union-attr]
            moved.append((current, following))
        else:
            after.update(current.results)
    return moved


def _unhoist(moved: list[tuple[Operation, Operation]]) -> None:
    """Puts views `_hoist_views` moved back where they stood."""
    for view, before in reversed(moved):
        view.detach()
        before.parent_block().insert_op_before(view, before)  # type: ignore[union-attr]


__all__ = ["FuseEpiloguesPass"]
