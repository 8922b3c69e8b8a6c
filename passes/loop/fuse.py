"""`loop-fuse`: merges the loop nests of one fusion group, then keeps values in
registers instead of buffers where it can.

Two sibling loops merge when they have the same bounds, are adjacent (only
side-effect-free ops such as `loop.alloc` between them, which move up) and
the merge is legal: for every buffer that one loop writes and the other
reads or writes, every access in both loops indexes that buffer with the
loop's own induction variable at the same position. Iteration i of the
second loop then touches only the slice that iteration i of the first loop
touched, so running them interleaved keeps every dependence. Accesses
through a `loop.reshape` view of a written buffer never merge (the
positions would not line up). Top-level nests merge only within one
`ember.fusion_group`; inside a merged nest, siblings merge whenever legal,
recursively, so conv + bias + activation become one nest over (n, f, oh)
with the epilogue in the same innermost loop over ow.

After merging, a load that reads back what the same block just stored at
the same indices takes the stored value instead, a store that is overwritten
at the same place before anything reads the buffer goes, and an
intermediate buffer that is then only ever written is deleted with its
stores. Loops that touch memory other than by loads and stores never merge.
Everything else is left alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ember.dialects.loop import AllocOp, ForOp, ReshapeOp
from ember.dialects.tensor import FUSION_GROUP


def buffer_root(buffer: SSAValue) -> SSAValue:
    """The buffer a view (`loop.reshape`, possibly of a view) aliases."""
    while isinstance(buffer.owner, ReshapeOp):
        buffer = buffer.owner.operands[0]
    return buffer


@dataclass(frozen=True)
class Access:
    buffer: SSAValue
    indices: tuple[SSAValue, ...]
    is_store: bool

    @property
    def root(self) -> SSAValue:
        return buffer_root(self.buffer)


def accesses(op: Operation) -> Iterator[Access]:
    for inner in op.walk():
        if isinstance(inner, memref.LoadOp):
            yield Access(inner.memref, tuple(inner.indices), False)
        elif isinstance(inner, memref.StoreOp):
            yield Access(inner.memref, tuple(inner.indices), True)


def _touches_memory_only_by_loads_and_stores(op: Operation) -> bool:
    return not any(
        inner.name.startswith(("memref.", "func."))
        and not isinstance(inner, memref.LoadOp | memref.StoreOp)
        for inner in op.walk()
    )


def can_merge(first: ForOp, second: ForOp) -> bool:
    """Whether `second` may run interleaved with `first` (see the module docstring)."""
    if first.bounds != second.bounds:
        return False
    if not all(_touches_memory_only_by_loads_and_stores(loop) for loop in (first, second)):
        return False
    both = [(a, first.induction_variable) for a in accesses(first)]
    both += [(a, second.induction_variable) for a in accesses(second)]
    written = [{a.root for a, iv in both if a.is_store and iv is loop.induction_variable}
               for loop in (first, second)]  # fmt: skip
    touched = [{a.root for a, iv in both if iv is loop.induction_variable}
               for loop in (first, second)]  # fmt: skip
    shared = (written[0] & touched[1]) | (written[1] & touched[0])
    for root in shared:
        positions = set()
        for access, iv in both:
            if access.root is not root:
                continue
            if access.buffer is not root:
                return False
            position = tuple(i for i, index in enumerate(access.indices) if index is iv)
            if not position:
                return False
            positions.add(position)
        if len(positions) != 1:
            return False
    return True


def _movable(op: Operation) -> bool:
    """Ops that may move above a loop: no regions, no memory access, no calls."""
    return not op.regions and not isinstance(op, memref.LoadOp | memref.StoreOp | CallOp)


def _merge(first: ForOp, second: ForOp) -> None:
    second.induction_variable.replace_all_uses_with(first.induction_variable)
    target = first.body.block
    for op in list(second.body.block.ops)[:-1]:
        op.detach()
        target.insert_op_before(op, target.last_op)  # type: ignore[arg-type]
    if second.parallel is None:
        first.parallel = None
    Rewriter.erase_op(second)


def fuse_siblings(block: Block, top_level: bool) -> None:
    """Merges adjacent sibling loops of `block` where legal (top level: only
    loops of one fusion group), recursing into every merged body."""
    previous: ForOp | None = None
    between: list[Operation] = []
    for op in list(block.ops):
        if not isinstance(op, ForOp):
            between.append(op)
            continue
        group = op.attributes.get(FUSION_GROUP)
        same_group = not top_level or (
            previous is not None
            and group is not None
            and previous.attributes.get(FUSION_GROUP) == group
        )
        if (
            previous is not None
            and same_group
            and all(_movable(b) for b in between)
            and can_merge(previous, op)
        ):
            for moved in between:
                moved.detach()
                block.insert_op_before(moved, previous)
            _merge(previous, op)
            fuse_siblings(previous.body.block, top_level=False)
        else:
            previous = op
        between = []


def forward_stores(block: Block) -> None:
    """Replaces a load of what the same block stored at the same indices (no
    other store to that buffer in between) by the stored value, and deletes a
    store that a later store to the same place overwrites before anything
    reads that buffer."""
    stored: dict[tuple[SSAValue, tuple[SSAValue, ...]], SSAValue] = {}
    unread: dict[tuple[SSAValue, tuple[SSAValue, ...]], memref.StoreOp] = {}

    def forget(table: dict, root: SSAValue) -> None:  # type: ignore[type-arg]
        for key in [k for k in table if buffer_root(k[0]) is root]:
            del table[key]

    for op in list(block.ops):
        if isinstance(op, memref.StoreOp):
            key = (op.memref, tuple(op.indices))
            forget(stored, buffer_root(op.memref))
            stored[key] = op.value
            if key in unread:
                Rewriter.erase_op(unread[key])
            unread[key] = op
        elif isinstance(op, memref.LoadOp):
            value = stored.get((op.memref, tuple(op.indices)))
            if value is not None:
                op.res.replace_all_uses_with(value)
                Rewriter.erase_op(op)
            else:
                forget(unread, buffer_root(op.memref))
        elif op.regions:
            for region in op.regions:
                for inner in region.blocks:
                    forward_stores(inner)
            for access in accesses(op):
                forget(unread, access.root)
                if access.is_store:
                    forget(stored, access.root)


def remove_write_only_buffers(block: Block) -> None:
    """Deletes allocs that are only ever stored to, with their stores."""
    for alloc in [op for op in block.ops if isinstance(op, AllocOp)]:
        uses = list(alloc.result.uses)
        if all(isinstance(u.operation, memref.StoreOp) and u.index == 1 for u in uses):
            for use in uses:
                Rewriter.erase_op(use.operation)
            Rewriter.erase_op(alloc)


class FuseLoopsPass(ModulePass):
    """Merges each fusion group's loop nests and forwards stored values to
    loads (see the module docstring)."""

    name = "loop-fuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and not func.is_declaration:
                block = func.body.block
                fuse_siblings(block, top_level=True)
                forward_stores(block)
                remove_write_only_buffers(block)


__all__ = ["FuseLoopsPass", "buffer_root", "can_merge", "fuse_siblings"]
