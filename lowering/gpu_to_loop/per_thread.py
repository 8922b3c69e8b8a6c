"""Per-thread storage: what a thread keeps across a barrier, made explicit.

These rewrites stay at the `gpu` level (the kernel they produce means on a
GPU what it meant before), so the fission that follows only has to cut:

- `hoist_ids`: one `gpu.thread_id`/`block_id`/`block_dim`/`grid_dim` per
  dimension, at the top of the entry block (they are the same wherever a
  thread reads them), so every other op refers to those.
- `exchange_shuffles`: each `ember_gpu.shuffle_xor %v, mask` becomes a
  store of `%v` in a slot of its own, a `gpu.barrier`, and a load of the
  slot of thread `linear_id ^ mask` (the same lane of the same warp as
  `(linear_id & ~31) | ((linear_id & 31) ^ mask)`, as a mask below 32
  changes only the lane's bits): what a warp's lanes exchange in
  registers, exchanged through memory with the whole block waiting. A
  shuffle inside an `scf.for` gets a second barrier after its load: a
  rotated loop would otherwise run the next iteration's store to the slot
  before a later thread's load of this one (a GPU's lanes swap registers
  and keep no such slot). Where the block's thread count is no multiple of
  32, a last partial warp's partner slot may be past the block's threads
  and hold a stale value, as the op's contract leaves the result
  undefined.
- `demote_results`: an `scf.for` or `scf.if` that holds a barrier loses its
  results and loop-carried values: each becomes a slot of per-thread
  storage, stored where it was yielded (or passed in) and loaded where it
  was used.
- `spill_across_phases`: a value computed in one phase and used in another
  (`Phases`) is stored right after it is computed and loaded right before
  each use in another phase.

Per-thread storage is an `ember_gpu.shared` buffer of `capacity` elements
indexed by the linear thread id `x + X * (y + Y * z)`: each thread owns one
element, which is what it would have kept in a register.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import SharedOp, ShuffleXorOp, shared_memory_type
from ember.lowering.gpu_to_loop.phases import (
    ID_OPS,
    PASS,
    Phases,
    describe,
    holds_barrier,
    kernel_name,
)
from ember.lowering.loop_to_llvm.llvm_types import FLOATS

MAX_THREADS_PER_BLOCK = 1024
"""CUDA's limit: a launch of more threads per block fails and runs nothing."""

_DIMS = ("x", "y", "z")


def hoist_ids(kernel: gpu.FuncOp) -> None:
    """One id op per (kind, dimension) at the top of the entry block."""
    entry = kernel.body.block
    canonical: dict[tuple[type[Operation], str], SSAValue] = {}
    for op in list(kernel.walk()):
        if not isinstance(op, ID_OPS):
            continue
        key = (type(op), op.dimension.data)
        if key not in canonical:
            first = type(op)(gpu.DimensionAttr(op.dimension.data))
            entry.insert_op_before(first, entry.first_op)  # type: ignore[arg-type]
            canonical[key] = first.result
        op.result.replace_all_uses_with(canonical[key])
        op.detach()
        op.erase()


def id_value(kernel: gpu.FuncOp, op_type: type[Operation], dim: str) -> SSAValue:
    """The hoisted id op of `op_type` for `dim` (created at the top if missing)."""
    entry = kernel.body.block
    for op in entry.ops:
        if isinstance(op, op_type) and op.dimension.data == dim:  # type: ignore[attr-defined]
            return op.results[0]
    made = op_type(gpu.DimensionAttr(dim))  # type: ignore[call-arg]
    entry.insert_op_before(made, entry.first_op)  # type: ignore[arg-type]
    return made.results[0]


class PerThreadStorage:
    """Slots of per-thread storage in one kernel, and their loads and stores."""

    def __init__(self, kernel: gpu.FuncOp, capacity: int):
        self.kernel = kernel
        self.capacity = capacity
        self._linear: SSAValue | None = None

    def linear_id(self) -> SSAValue:
        """`x + X * (y + Y * z)`, computed once after the hoisted ids."""
        if self._linear is None:
            tid = [id_value(self.kernel, gpu.ThreadIdOp, d) for d in _DIMS]
            size = [id_value(self.kernel, gpu.BlockDimOp, d) for d in _DIMS[:2]]
            ops = [
                inner := arith.MuliOp(size[1], tid[2]),
                plane := arith.AddiOp(tid[1], inner),
                row := arith.MuliOp(size[0], plane),
                linear := arith.AddiOp(tid[0], row),
            ]
            linear.result.name_hint = "thread"
            anchor = self._after_ids()
            Rewriter.insert_op(ops, InsertPoint.after(anchor) if anchor else self._entry_start())
            self._linear = linear.result
        return self._linear

    def slot(self, element: Attribute, what: str) -> SSAValue:
        """A new slot for values of type `element` (`what` explains it in diagnostics)."""
        if not isinstance(element, (IndexType, IntegerType, *FLOATS)):
            raise DiagnosticException(
                f"{PASS}: {kernel_name(self.kernel)}: {what} of type {element} is kept "
                "across a gpu.barrier; only scalars can be"
            )
        buffer = SharedOp(shared_memory_type(element, (self.capacity,)))
        buffer.buffer.name_hint = "per_thread"
        Rewriter.insert_op(buffer, self._entry_start())
        return buffer.buffer

    def store_before(self, op: Operation, value: SSAValue, slot: SSAValue) -> None:
        Rewriter.insert_op(
            memref.StoreOp.get(value, slot, [self.linear_id()]), InsertPoint.before(op)
        )

    def store_after(self, op: Operation, value: SSAValue, slot: SSAValue) -> None:
        Rewriter.insert_op(
            memref.StoreOp.get(value, slot, [self.linear_id()]), InsertPoint.after(op)
        )

    def load_before(self, op: Operation, slot: SSAValue, hint: str | None) -> SSAValue:
        load = memref.LoadOp.get(slot, [self.linear_id()])
        load.res.name_hint = hint
        Rewriter.insert_op(load, InsertPoint.before(op))
        return load.res

    def redirect(
        self, value: SSAValue, slot: SSAValue, uses: Sequence[tuple[Operation, int]]
    ) -> None:
        """Make each use (op, operand index) read `slot`, loaded right before the op."""
        loaded: dict[Operation, SSAValue] = {}
        for user, index in uses:
            if user not in loaded:
                loaded[user] = self.load_before(user, slot, value.name_hint)
            user.operands[index] = loaded[user]

    def _after_ids(self) -> Operation | None:
        last = None
        for op in self.kernel.body.block.ops:
            if not isinstance(op, (*ID_OPS, SharedOp)):
                break
            last = op
        return last

    def _entry_start(self) -> InsertPoint:
        return InsertPoint.at_start(self.kernel.body.block)


def exchange_shuffles(kernel: gpu.FuncOp, storage: PerThreadStorage) -> None:
    """Each shuffle as a store, a barrier and a load of per-thread storage
    (see the module docstring)."""
    for shuffle in [op for op in kernel.walk() if isinstance(op, ShuffleXorOp)]:
        slot = storage.slot(shuffle.value.type, f"the value of {shuffle.name}")
        storage.store_before(shuffle, shuffle.value, slot)
        mask = arith.ConstantOp.from_int_and_width(shuffle.lane_mask, IndexType())
        partner = arith.XOrIOp(storage.linear_id(), mask.result)
        load = memref.LoadOp.get(slot, [partner.result])
        load.res.name_hint = shuffle.result.name_hint
        after = [gpu.BarrierOp()] if _in_loop(shuffle, kernel) else []
        Rewriter.replace_op(shuffle, [gpu.BarrierOp(), mask, partner, load, *after], [load.res])


def _in_loop(op: Operation, kernel: gpu.FuncOp) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not kernel:
        if isinstance(parent, scf.ForOp):
            return True
        parent = parent.parent_op()
    return False


def _uses(value: SSAValue) -> list[tuple[Operation, int]]:
    return [(use.operation, use.index) for use in value.uses]


def demote_results(kernel: gpu.FuncOp, storage: PerThreadStorage) -> None:
    """Give every barrier-holding `scf.for`/`scf.if` with results slots instead."""
    holders = [op for op in kernel.walk()
               if isinstance(op, (scf.ForOp, scf.IfOp)) and op.results and holds_barrier(op)]  # fmt: skip
    for op in holders:
        if isinstance(op, scf.ForOp):
            _demote_for(op, storage)
        else:
            _demote_if(op, storage)


def _yields(op: Operation) -> list[scf.YieldOp]:
    return [y for region in op.regions for block in region.blocks
            if isinstance(y := block.last_op, scf.YieldOp)]  # fmt: skip


def _store_yielded(op: Operation, slots: Sequence[SSAValue], storage: PerThreadStorage) -> None:
    """Each terminator of `op` stores what it yielded, then yields nothing.

    A value is stored right after the op in the body that computes it where
    nothing after that op reads its slot (no later use of the old loop-carried
    value), so it is kept in the phase that computes it rather than carried
    to the end of the body through another slot."""
    for terminator in _yields(op):
        for value, slot in zip(terminator.operands, slots, strict=True):
            owner = value.owner
            if isinstance(owner, Operation) and owner.parent is terminator.parent:
                if not _reads_after(owner, terminator, slot):
                    storage.store_after(owner, value, slot)
                    continue
            storage.store_before(terminator, value, slot)
        Rewriter.replace_op(terminator, scf.YieldOp())


def _reads_after(first: Operation, last: Operation, slot: SSAValue) -> bool:
    """Whether an op strictly between `first` and `last` (one block) loads `slot`."""
    op = first.next_op
    while op is not None and op is not last:
        if any(isinstance(inner, memref.LoadOp) and inner.memref == slot for inner in op.walk()):
            return True
        op = op.next_op
    return False


def _demote_for(op: scf.ForOp, storage: PerThreadStorage) -> None:
    what = f"a loop-carried value of scf.for in {kernel_name(op)}"
    slots = [storage.slot(result.type, what) for result in op.results]
    for init, slot in zip(op.iter_args, slots, strict=True):
        storage.store_before(op, init, slot)
    body = op.body.block
    for argument, slot in zip(body.args[1:], slots, strict=True):
        storage.redirect(argument, slot, _uses(argument))
    _store_yielded(op, slots, storage)
    for result, slot in zip(op.results, slots, strict=True):
        storage.redirect(result, slot, _uses(result))
    for argument in list(body.args[1:]):
        body.erase_arg(argument)
    region = op.detach_region(op.body)
    _replace_without_results(op, scf.ForOp(op.lb, op.ub, op.step, [], region))


def _demote_if(op: scf.IfOp, storage: PerThreadStorage) -> None:
    what = f"a result of scf.if in {kernel_name(op)}"
    slots = [storage.slot(result.type, what) for result in op.results]
    _store_yielded(op, slots, storage)
    for result, slot in zip(op.results, slots, strict=True):
        storage.redirect(result, slot, _uses(result))
    regions = (op.true_region, op.false_region)  # the accessors count regions
    then_region, else_region = (op.detach_region(region) for region in regions)
    _replace_without_results(op, scf.IfOp(op.cond, [], then_region, else_region))


def _replace_without_results(op: Operation, new: Operation) -> None:
    """Put `new` where `op` is; `op`'s results have no uses left."""
    Rewriter.insert_op(new, InsertPoint.before(op))
    Rewriter.erase_op(op)


def spill_across_phases(kernel: gpu.FuncOp, storage: PerThreadStorage) -> None:
    """Store each value used outside its phase, and load it where it is used."""
    phases = Phases(kernel)
    numbered = [(block, phases.phase_numbers(block)) for block in phases.blocks]
    for block, numbers in numbered:  # numbered before any load or store is added
        for op, phase in numbers.items():
            for result in op.results:
                crossing = [
                    (user, index)
                    for user, index in _uses(result)
                    if numbers.get(_top(block, user)) != phase
                ]
                if not crossing:
                    continue
                slot = storage.slot(result.type, f"{describe(result)} ({op.name})")
                storage.store_after(op, result, slot)
                storage.redirect(result, slot, crossing)


def _top(block: Block, op: Operation) -> Operation | None:
    ancestor = block.find_ancestor_op_in_block(op)
    assert ancestor is not None, "a use outside the block that dominates it"
    return ancestor


def keep_per_thread_values(kernel: gpu.FuncOp, capacity: int) -> None:
    """All four rewrites above, in order."""
    hoist_ids(kernel)
    Phases(kernel)  # diagnostics on the kernel as written, before any slot
    storage = PerThreadStorage(kernel, capacity)
    exchange_shuffles(kernel, storage)
    demote_results(kernel, storage)
    spill_across_phases(kernel, storage)


__all__ = [
    "MAX_THREADS_PER_BLOCK",
    "PerThreadStorage",
    "demote_results",
    "exchange_shuffles",
    "hoist_ids",
    "id_value",
    "keep_per_thread_values",
    "spill_across_phases",
]
