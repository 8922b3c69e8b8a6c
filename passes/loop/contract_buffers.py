"""Buffer contraction: an intermediate buffer that each iteration of a loop
uses a slice of, all to itself, becomes that iteration's scratch.

After `loop-fuse` has merged a producer's nest with its consumer's, a
buffer between them is often written and read back within one iteration of
the merged loops: Winograd's input transform writes rows[n, h, w, i, b, c]
and reads it back in the same (n, h, w) iteration. Such a buffer holds the
whole tensor only to pass each tile from one nest to the next, and every
byte of it goes out to memory and comes back. Contracted, it is one
`memref.alloca` without those dims, at the start of the body of the deepest
contracted loop, and every access drops their indices:

    %t = memref.alloc() : memref<14x6x128xf32>
    scf.parallel (%h) = (0) to (14) {
      ... memref.store %v, %t[%h, %i, %c] ...
      ... memref.load %t[%h, %j, %c] ...
    }

becomes

    scf.parallel (%h) = (0) to (14) {
      %t = memref.alloca() {alignment = 64} : memref<6x128xf32>
      ... memref.store %v, %t[%i, %c] ...
      ... memref.load %t[%j, %c] ...
    }

A dim is contracted when every access to the buffer indexes it with the
induction variable of one loop around all of them (a vector access's last
index excluded: it names where a run of elements starts), for the loops
around all accesses from the outermost down, as long as each indexes a dim
so. An iteration of the deepest of them then touches only its own slice,
and reads back only what it wrote, so the iterations may share one slice's
storage; a parallel loop's
iterations, once on threads, each use their own frame's copy (the CPU target
places an alloca in its function's entry block, so a loop does not grow the
stack).

Left alone: buffers with a use other than a load or store through them (a
view, a call), dynamic sizes, a scratch that would keep no dim or exceed
`MAX_SCRATCH_BYTES` (it lives on a thread's stack).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ember.dialects.loop_nests import Loop, induction_variable, is_loop

MAX_SCRATCH_BYTES = 128 * 1024
"""The largest per-iteration scratch: an alloca on a worker's stack (8 MiB
by default on Linux), one per contracted buffer of a kernel."""
SCRATCH_ALIGNMENT = 64
"""Bytes: a cache line, and a 512-bit vector's natural alignment."""

Access = memref.LoadOp | memref.StoreOp | vector.LoadOp | vector.StoreOp


def _base(op: Access) -> SSAValue:
    return op.memref if isinstance(op, memref.LoadOp | memref.StoreOp) else op.base


def _element_indices(op: Access) -> tuple[SSAValue, ...]:
    indices = tuple(op.indices)
    return indices[:-1] if isinstance(op, vector.LoadOp | vector.StoreOp) else indices


def _loops_around(op: Operation, scope: Block) -> list[Loop]:
    """The loops between `scope` and `op`, outermost first."""
    loops: list[Loop] = []
    block = op.parent_block()
    while block is not None and block is not scope:
        parent = block.parent_op()
        if parent is None:
            break
        if is_loop(parent):
            loops.append(parent)  # type: ignore[arg-type]
        block = parent.parent_block()
    return loops[::-1]


def _common_prefix(chains: Sequence[list[Loop]]) -> list[Loop]:
    common: list[Loop] = []
    for loops in zip(*chains):
        if any(loop is not loops[0] for loop in loops):
            break
        common.append(loops[0])
    return common


def _contracted_dims(accesses: Sequence[Access], loops: Sequence[Loop]) -> dict[int, int]:
    """dim -> depth in `loops` of the loop whose induction variable indexes
    that dim in every access, for the longest run of `loops` from the
    outermost that each index some dim so: a loop in between that indexes
    none could carry a value from one of its iterations to the next through
    the buffer, which one shared slice would lose."""
    first = _element_indices(accesses[0])
    dims: dict[int, int] = {}
    for depth, loop in enumerate(loops):
        iv = induction_variable(loop)
        found = [dim for dim, index in enumerate(first) if index is iv
                 and all(_element_indices(a)[dim] is iv for a in accesses)]  # fmt: skip
        if not found:
            break
        dims.update((dim, depth) for dim in found)
    return dims


def _rebuilt(op: Access, scratch: SSAValue, dims: set[int]) -> Operation:
    indices = [index for dim, index in enumerate(op.indices) if dim not in dims]
    if isinstance(op, memref.LoadOp):
        return memref.LoadOp.get(scratch, indices)
    if isinstance(op, memref.StoreOp):
        return memref.StoreOp.get(op.value, scratch, indices)
    if isinstance(op, vector.LoadOp):
        return vector.LoadOp(scratch, indices, op.result.type)  # type: ignore[arg-type]
    return vector.StoreOp(op.vector, scratch, indices)


def contract(alloc: memref.AllocOp, scope: Block) -> bool:
    """Contracts `alloc` (an op of `scope`) if the module docstring's rule
    allows; returns whether it did."""
    buffer_type = alloc.memref.type
    if alloc.dynamic_sizes or not isinstance(buffer_type, MemRefType):
        return False
    accesses: list[Access] = []
    for use in alloc.memref.uses:
        op = use.operation
        if not isinstance(op, Access) or _base(op) is not alloc.memref:
            return False
        if isinstance(op, memref.StoreOp | vector.StoreOp) and use.index == 0:
            return False  # the buffer itself is the value stored
        accesses.append(op)
    if not accesses:
        return False
    loops = _common_prefix([_loops_around(op, scope) for op in accesses])
    dims = _contracted_dims(accesses, loops)
    shape = list(buffer_type.get_shape())
    kept = [size for dim, size in enumerate(shape) if dim not in dims]
    element_bytes = max(1, buffer_type.element_type.bitwidth // 8)  # type: ignore[attr-defined]
    if not dims or not kept or _count(kept) * element_bytes > MAX_SCRATCH_BYTES:
        return False
    deepest = loops[max(dims.values())]
    scratch = memref.AllocaOp.get(buffer_type.element_type, SCRATCH_ALIGNMENT, kept)
    scratch.memref.name_hint = alloc.memref.name_hint
    Rewriter.insert_op(scratch, InsertPoint.at_start(deepest.body.block))
    for op in accesses:
        Rewriter.replace_op(op, _rebuilt(op, scratch.memref, set(dims)))
    Rewriter.erase_op(alloc)
    return True


def _count(shape: Sequence[int]) -> int:
    count = 1
    for size in shape:
        count *= size
    return count


def contract_buffers(scope: Block) -> None:
    """Contracts every alloc of `scope` (a kernel's block) that the rule allows."""
    for op in list(scope.ops):
        if isinstance(op, memref.AllocOp):
            contract(op, scope)


__all__ = ["MAX_SCRATCH_BYTES", "contract", "contract_buffers"]
