"""`loop-fuse`: merges the loop nests of one kernel, then keeps values in
registers instead of buffers where it can.

Two sibling loops (`scf.for`/`scf.parallel`) merge when they have the same
constant bounds (read from their `arith.constant` operands), are adjacent
(only side-effect-free ops such as `memref.alloc` and the bounds' constants
between them, which move up) and
the merge is legal: for every buffer that one loop writes and the other
reads or writes, every access in both loops indexes that buffer with the
loop's own induction variable at the same position. Iteration i of the
second loop then touches only the slice that iteration i of the first loop
touched, so running them interleaved keeps every dependence. Accesses
through a view (`memref.reinterpret_cast`, `memref.subview`, ...) of a
written buffer never merge (the positions would not line up). A parallel
loop merged with a sequential one becomes sequential. Nests merge only
within one `loop.kernel` (a fused group), or one kernel function
(`ember.kernel`, a group outlined before its loops were generated):
siblings in the kernel's region
merge whenever legal, and so do siblings inside a merged nest, recursively,
so conv + bias + activation become one nest over (n, f, oh) with the
epilogue in the same innermost loop over ow. Nests outside kernels (unfused
ops) never merge.

After merging, a load that reads back what the same block just stored at
the same indices takes the stored value instead, a store that is overwritten
at the same place before anything reads the buffer goes, and an
intermediate buffer that is then only ever written is deleted with its
stores. A buffer that each iteration of a merged nest writes and reads a
slice of, all to itself, becomes per-iteration scratch (`contract_buffers`).
Loops that touch memory other than by loads and stores (vector ops free of
memory effects aside) never merge. Everything else is left alone.

A `vector.load`/`vector.store` (a micro-kernel's) is an access of its
vector's first element whose last index is not the loop's position: it
touches the elements after it too, so a loop that indexes a written buffer
with its induction variable only in a vector's last index never merges; at
block level, a vector store forgets what was stored to its buffer and a
vector load counts as a read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator, is_side_effect_free

from ember.dialects.loop import KERNEL_ATTR, KernelOp
from ember.dialects.loop_nests import (
    Loop,
    body_end,
    constant_index,
    induction_variable,
    is_loop,
    loop_operands,
    make_sequential,
    static_bounds,
)
from ember.dialects.source_names import merged_location
from ember.passes.loop.contract_buffers import contract_buffers

VIEW_OPS = (
    memref.ReinterpretCastOp,
    memref.SubviewOp,
    memref.ViewOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.CastOp,
)
"""Ops whose result aliases (part of) their first operand's memory."""


def buffer_root(buffer: SSAValue) -> SSAValue:
    """The buffer a view (possibly of a view) aliases."""
    while isinstance(buffer.owner, VIEW_OPS):
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


MemoryAccess = memref.LoadOp | memref.StoreOp | vector.LoadOp | vector.StoreOp
"""The loads and stores whose buffer and indices fusion reads."""


def _buffer(op: MemoryAccess) -> SSAValue:
    return op.memref if isinstance(op, memref.LoadOp | memref.StoreOp) else op.base


def _element_indices(op: MemoryAccess) -> tuple[SSAValue, ...]:
    """The indices that name one element each: a vector's last index names
    where its elements start, so it is left out."""
    indices = tuple(op.indices)
    return indices[:-1] if isinstance(op, vector.LoadOp | vector.StoreOp) else indices


def accesses(op: Operation) -> Iterator[Access]:
    for inner in op.walk():
        if isinstance(inner, MemoryAccess):
            yield Access(_buffer(inner), tuple(inner.indices),
                         isinstance(inner, memref.StoreOp | vector.StoreOp))  # fmt: skip


def _touches_memory_other_than_by_loads_and_stores(op: Operation) -> bool:
    """Memref and func ops other than loads and stores, and vector ops that
    xDSL does not know to be free of memory effects (a micro-kernel's
    broadcasts and FMAs are: they block no merge)."""
    if isinstance(op, MemoryAccess):
        return False
    if op.name.startswith("vector."):
        return not is_side_effect_free(op)
    return op.name.startswith(("memref.", "func."))


@dataclass
class RootAccesses:
    """How one loop touches one buffer (with its views)."""

    written: bool = False
    through_view: bool = False
    positions: set[tuple[int, ...]] = field(default_factory=set)
    """Per access, where the loop's own induction variable is among the indices."""

    def absorb(self, other: RootAccesses) -> None:
        self.written |= other.written
        self.through_view |= other.through_view
        self.positions |= other.positions


@dataclass
class LoopSummary:
    """What merging needs to know of one loop, computed in one walk and kept up
    to date as other loops merge into it (so merging n loops is linear in
    their size, not quadratic)."""

    loop: Loop
    other_memory_ops: bool
    roots: dict[SSAValue, RootAccesses]

    @staticmethod
    def of(loop: Loop) -> LoopSummary:
        iv = induction_variable(loop)
        other_memory_ops = False
        roots: dict[SSAValue, RootAccesses] = {}
        for inner in loop.walk():
            if isinstance(inner, MemoryAccess):
                buffer = _buffer(inner)
                access = roots.setdefault(buffer_root(buffer), RootAccesses())
                access.written |= isinstance(inner, memref.StoreOp | vector.StoreOp)
                access.through_view |= isinstance(buffer.owner, VIEW_OPS)
                indices = _element_indices(inner)
                access.positions.add(tuple(i for i, x in enumerate(indices) if x is iv))
            else:
                other_memory_ops |= _touches_memory_other_than_by_loads_and_stores(inner)
        return LoopSummary(loop, other_memory_ops, roots)

    def absorb(self, other: LoopSummary) -> None:
        """Accounts for `other`'s body moving into this loop (its induction
        variable replaced by this one's, so positions carry over)."""
        self.other_memory_ops |= other.other_memory_ops
        for root, access in other.roots.items():
            self.roots.setdefault(root, RootAccesses()).absorb(access)


def _may_interleave(first: LoopSummary, second: LoopSummary) -> bool:
    """The legality rule of the module docstring, on two loops' summaries."""
    bounds = static_bounds(first.loop)
    if bounds is None:
        # Run-time bounds: the same values (one symbol's size, `SymbolSizes`).
        pairs = zip(loop_operands(first.loop), loop_operands(second.loop))
        if not all(a is b or (constant_index(a) is not None and constant_index(a) == constant_index(b))
                   for a, b in pairs):  # fmt: skip
            return False
    elif bounds != static_bounds(second.loop):
        return False
    if first.other_memory_ops or second.other_memory_ops:
        return False
    smaller, larger = sorted((first.roots, second.roots), key=len)
    for root, access in smaller.items():
        other = larger.get(root)
        if other is None or not (access.written or other.written):
            continue
        if access.through_view or other.through_view:
            return False
        positions = access.positions | other.positions
        if len(positions) != 1 or () in positions:
            return False
    return True


def can_merge(first: Loop, second: Loop) -> bool:
    """Whether `second` may run interleaved with `first` (see the module docstring)."""
    return _may_interleave(LoopSummary.of(first), LoopSummary.of(second))


def _movable(op: Operation) -> bool:
    """Ops that may move above a loop: no regions, no memory access, no calls."""
    return not op.regions and not isinstance(op, MemoryAccess | CallOp)


class SiblingFuser:
    """Merges adjacent sibling loops of one block where legal, fed one op at a
    time in block order.

    When a loop merges into the previous one, the ops of its body are fed to
    the fuser of the previous loop's body, which carries on from where it
    stopped: so each op is looked at once per loop around it, where fusing
    again from the start of the grown body after every merge was quadratic in
    the length of a fused chain.
    """

    def __init__(self, block: Block):
        self.block = block
        self.previous: LoopSummary | None = None
        self.between: list[Operation] = []
        self.inner: SiblingFuser | None = None
        """The fuser of the previous loop's body, made on its first merge."""

    def feed(self, op: Operation) -> None:
        if not is_loop(op):
            self.between.append(op)
            return
        previous, between = self.previous, self.between
        self.between = []
        if previous is None or not all(_movable(b) for b in between):
            self._start(op)
            return
        assert isinstance(op, Loop)
        summary = LoopSummary.of(op)
        if not _may_interleave(previous, summary):
            self._start(op, summary)
            return
        for moved in between:
            moved.detach()
            self.block.insert_op_before(moved, previous.loop)
        if self.inner is None:
            self.inner = SiblingFuser(previous.loop.body.block)
            self.inner.feed_all(previous.loop.body.block)
        previous.loop, moved_ops = _merge(previous.loop, op)
        previous.absorb(summary)
        for moved_op in moved_ops:
            self.inner.feed(moved_op)

    def feed_all(self, block: Block) -> None:
        """Feeds every op of `block` but a loop body's terminator."""
        for op in list(block.ops):
            if not (op is block.last_op and op.has_trait(IsTerminator)):
                self.feed(op)

    def _start(self, op: Loop, summary: LoopSummary | None = None) -> None:
        self.previous = summary or LoopSummary.of(op)
        self.inner = None


def _merge(first: Loop, second: Loop) -> tuple[Loop, list[Operation]]:
    """Moves `second`'s body to the end of `first`'s; returns the merged loop
    (`first`, or its sequential replacement when `second` is sequential)
    and the moved ops."""
    induction_variable(second).replace_all_uses_with(induction_variable(first))
    target = first.body.block
    moved = list(second.body.block.ops)[:-1]
    for op in moved:
        op.detach()
        target.insert_op_before(op, body_end(first))
    if isinstance(first, scf.ParallelOp) and isinstance(second, scf.ForOp):
        first = make_sequential(first)
    if second.location != first.location:  # the merged nest implements both
        first.location = merged_location([first.location, second.location])
    bounds = loop_operands(second)
    Rewriter.erase_op(second)
    for bound in bounds:  # the constants made for `second` alone
        if isinstance(bound.owner, arith.ConstantOp) and not bound.uses:
            Rewriter.erase_op(bound.owner)
    return first, moved


def fuse_siblings(block: Block) -> None:
    """Merges adjacent sibling loops of `block` where legal, recursing into
    every merged body."""
    SiblingFuser(block).feed_all(block)


def forward_stores(block: Block) -> tuple[set[SSAValue], set[SSAValue]]:
    """Replaces a load of what the same block stored at the same indices (no
    other store to that buffer in between) by the stored value, and deletes a
    store that a later store to the same place overwrites before anything
    reads that buffer. Returns the buffer roots the block's loads and stores
    (nested ones included) still touch, and those they store to, as left
    after forwarding: the block around learns them without walking this one
    again (walking each nest once per loop around it was quadratic in depth)."""
    # Both tables are per buffer root, so forgetting a buffer is one deletion.
    stored: dict[SSAValue, dict[tuple[SSAValue, tuple[SSAValue, ...]], SSAValue]] = {}
    unread: dict[SSAValue, dict[tuple[SSAValue, tuple[SSAValue, ...]], memref.StoreOp]] = {}
    touched: set[SSAValue] = set()
    stored_to: set[SSAValue] = set()
    for op in list(block.ops):
        if isinstance(op, memref.StoreOp):
            key = (op.memref, tuple(op.indices))
            root = buffer_root(op.memref)
            stored[root] = {key: op.value}
            overwritten = unread.setdefault(root, {}).get(key)
            if overwritten is not None:
                Rewriter.erase_op(overwritten)
            unread[root][key] = op
            touched.add(root)
            stored_to.add(root)
        elif isinstance(op, memref.LoadOp):
            root = buffer_root(op.memref)
            value = stored.get(root, {}).get((op.memref, tuple(op.indices)))
            if value is not None:
                op.res.replace_all_uses_with(value)
                Rewriter.erase_op(op)
            else:
                unread.pop(root, None)
                touched.add(root)
        elif isinstance(op, vector.LoadOp | vector.StoreOp):
            root = buffer_root(op.base)
            unread.pop(root, None)
            touched.add(root)
            if isinstance(op, vector.StoreOp):
                stored.pop(root, None)
                stored_to.add(root)
        elif op.regions:
            inner_touched: set[SSAValue] = set()
            inner_stored: set[SSAValue] = set()
            for region in op.regions:
                for inner in region.blocks:
                    block_touched, block_stored = forward_stores(inner)
                    inner_touched |= block_touched
                    inner_stored |= block_stored
            for root in inner_touched:
                unread.pop(root, None)
            for root in inner_stored:
                stored.pop(root, None)
            touched |= inner_touched
            stored_to |= inner_stored
    return touched, stored_to


def remove_write_only_buffers(block: Block) -> None:
    """Deletes allocs that are only ever stored to, with their stores."""
    for alloc in [op for op in block.ops if isinstance(op, memref.AllocOp)]:
        uses = list(alloc.memref.uses)
        if all(isinstance(u.operation, memref.StoreOp) and u.index == 1 for u in uses):
            for use in uses:
                Rewriter.erase_op(use.operation)
            Rewriter.erase_op(alloc)


def fuse_function(func: FuncOp) -> None:
    """Merges the nests of each kernel of `func` (of `func` itself where it
    is a kernel function, `ember.kernel`), then forwards stores, removes the
    buffers left write-only and contracts those that each iteration of a
    merged nest uses a slice of (`contract_buffers`)."""
    block = func.body.block
    if KERNEL_ATTR in func.attributes:
        kernels = [block]
    else:
        kernels = [op.body.block for op in block.ops if isinstance(op, KernelOp)]
    for kernel in kernels:
        fuse_siblings(kernel)
    forward_stores(block)
    for scope in kernels if kernels == [block] else [block, *kernels]:
        remove_write_only_buffers(scope)
    for kernel in kernels:
        contract_buffers(kernel)


class FuseLoopsPass(ModulePass):
    """Merges the loop nests of each `loop.kernel` and forwards stored values
    to loads (see the module docstring)."""

    name = "loop-fuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and not func.is_declaration:
                fuse_function(func)


__all__ = ["FuseLoopsPass", "buffer_root", "can_merge", "fuse_function", "fuse_siblings"]
