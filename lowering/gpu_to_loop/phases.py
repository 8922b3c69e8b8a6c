"""Where a kernel's threads must synchronise: each op's role in the fission.

A block of a kernel that holds barriers (the entry block, and the bodies of
the `scf.for`/`scf.if` that contain one) is cut into *phases* at each
barrier-holding op; `Phases` says, for each op at the top of such a block,
which of four kinds it is:

- `UNIFORM`: the same for every thread of a GPU block and free of side
  effects (constants, block ids, sizes, arguments, shared buffers and pure
  regionless ops over them). Computed once per block, outside the thread
  loops, where every phase sees it.
- `PER_THREAD`: a thread id or a pure regionless op over thread ids and
  uniform values (`%row = %row0 + %ty`). Recomputed in every phase that uses
  it, so it never needs storage.
- `BARRIER`: a synchronisation point (`SYNC_OPS`: a `gpu.barrier` or an
  `ember_gpu.shuffle_xor`, where a warp's lanes exchange values), or an
  `scf.for`/`scf.if` holding one. Stays outside the thread loops; the
  bounds or condition must be `UNIFORM` (for a shuffle too, although a GPU
  asks only that a warp's lanes agree: the emulator cuts whole blocks).
- `PHASE`: anything else (loads, stores, loops without barriers ...). Runs
  inside the thread loops of its phase (the barrier-free stretch it stands
  in); a result used in another phase needs per-thread storage.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum

from xdsl.dialects import gpu, scf
from xdsl.dialects.arith import Arith
from xdsl.dialects.math import Math
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import IsTerminator, is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import SharedOp, ShuffleXorOp

PASS = "convert-gpu-to-loop"

ID_OPS = (gpu.ThreadIdOp, gpu.BlockIdOp, gpu.BlockDimOp, gpu.GridDimOp)
"""The ops that read a thread's coordinates or the launch's sizes."""

VALUE_OPS = frozenset((*Arith.operations, *Math.operations))
"""Ops that only compute a value, whatever their traits say (MLIR marks every
`arith` and `math` op so; xDSL 0.75 leaves some, `arith.remui`, unmarked)."""


class Kind(Enum):
    UNIFORM = "uniform"
    PER_THREAD = "per-thread"
    BARRIER = "barrier"
    PHASE = "phase"


SYNC_OPS = (gpu.BarrierOp, ShuffleXorOp)
"""The ops at which threads wait for each other: a phase ends at each."""


def first_sync(op: Operation) -> Operation | None:
    """`op` if it is a synchronisation point (`SYNC_OPS`), else the first
    one in its regions, or None."""
    return next((inner for inner in op.walk() if isinstance(inner, SYNC_OPS)), None)


def holds_barrier(op: Operation) -> bool:
    """Whether `op` is a synchronisation point or has one in its regions."""
    return first_sync(op) is not None


def kernel_name(op: Operation) -> str:
    """`gpu.func @name` of the kernel that holds `op`, for diagnostics."""
    kernel: Operation | None = op
    while kernel is not None and not isinstance(kernel, gpu.FuncOp):
        kernel = kernel.parent_op()
    return f"gpu.func @{kernel.sym_name.data}" if kernel is not None else "gpu.func"


def free_values(op: Operation) -> list[SSAValue]:
    """Values `op` (its regions included) uses but does not define, in order."""
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        for value in inner.operands:
            if not op.is_ancestor(value.owner):
                seen.setdefault(value, None)
    return list(seen)


def describe(value: SSAValue) -> str:
    """`%name` (or the op that defines it) for a diagnostic."""
    if value.name_hint:
        return f"%{value.name_hint}"
    owner = value.owner
    return f"a result of {owner.name}" if isinstance(owner, Operation) else "a block argument"


class Phases:
    """The kind of every op at the top of a kernel's barrier-holding blocks.

    Raises a `DiagnosticException` naming the op where a barrier stands under
    control flow that may differ between the threads of a block, or inside
    an op other than `scf.for`/`scf.if`.
    """

    def __init__(self, kernel: gpu.FuncOp):
        self.kernel = kernel
        self.uniform: set[SSAValue] = set(kernel.body.block.args)
        self.per_thread: set[SSAValue] = set()
        self.kinds: dict[Operation, Kind] = {}
        self.blocks: list[Block] = []
        self._classify(kernel.body.block)

    def kind(self, op: Operation) -> Kind:
        return self.kinds[op]

    def ops(self, block: Block) -> Iterator[tuple[Operation, Kind]]:
        """The ops of `block` with their kinds, its terminator left out."""
        for op in block.ops:
            if not op.has_trait(IsTerminator):
                yield op, self.kinds[op]

    def phase_numbers(self, block: Block) -> dict[Operation, int]:
        """The phase of each `PHASE` op of `block`: 0 before its first
        barrier-holding op, 1 after it, and so on."""
        numbers: dict[Operation, int] = {}
        phase = 0
        for op, kind in self.ops(block):
            if kind is Kind.BARRIER:
                phase += 1
            elif kind is Kind.PHASE:
                numbers[op] = phase
        return numbers

    def _classify(self, block: Block) -> None:
        self.blocks.append(block)
        for op in block.ops:
            if op.has_trait(IsTerminator):
                continue
            kind = self._kind_of(op)
            self.kinds[op] = kind
            if kind is Kind.UNIFORM:
                self.uniform.update(op.results)
            elif kind is Kind.PER_THREAD:
                self.per_thread.update(op.results)
            elif kind is Kind.BARRIER and not isinstance(op, SYNC_OPS):
                if isinstance(op, scf.ForOp):
                    self.uniform.add(op.body.block.args[0])
                for region in op.regions:
                    for inner in region.blocks:
                        self._classify(inner)

    def _kind_of(self, op: Operation) -> Kind:
        if isinstance(op, gpu.ThreadIdOp):
            return Kind.PER_THREAD
        if isinstance(op, (*ID_OPS, SharedOp)):
            return Kind.UNIFORM
        if holds_barrier(op):
            self._check_barrier_holder(op)
            return Kind.BARRIER
        if op.regions or not (type(op) in VALUE_OPS or is_side_effect_free(op)):
            return Kind.PHASE
        if all(v in self.uniform for v in op.operands):
            return Kind.UNIFORM
        if all(v in self.uniform or v in self.per_thread for v in op.operands):
            return Kind.PER_THREAD
        return Kind.PHASE

    def _check_barrier_holder(self, op: Operation) -> None:
        where = f"{PASS}: {kernel_name(op)}: {op.name}"
        if isinstance(op, SYNC_OPS):
            return
        sync = first_sync(op)
        assert sync is not None
        if isinstance(op, scf.ForOp):
            control = {"lower bound": op.lb, "upper bound": op.ub, "step": op.step}
        elif isinstance(op, scf.IfOp):
            control = {"condition": op.cond}
        else:
            raise DiagnosticException(
                f"{where} holds a {sync.name}; only scf.for and scf.if may hold one"
            )
        for role, value in control.items():
            if value in self.uniform:
                continue
            if value in self.per_thread:
                why = "depends on the thread id"
            elif isinstance(value, BlockArgument):
                why = "is a loop-carried or thread-dependent value"
            else:
                why = "is computed by each thread"
            raise DiagnosticException(
                f"{where} holds a {sync.name}, so every thread of a block must take "
                f"the same path through it, but its {role} ({describe(value)}) {why}"
            )


__all__ = [
    "ID_OPS",
    "PASS",
    "Kind",
    "Phases",
    "SYNC_OPS",
    "describe",
    "first_sync",
    "free_values",
    "holds_barrier",
    "kernel_name",
]
