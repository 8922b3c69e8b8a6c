"""Loop rotation: no meeting point of all threads at a barrier-holding loop's
back edge unless a barrier stands there.

The fission runs each phase for every thread before the next phase. Cut
naively, a barrier-holding `scf.for` would run the last phase of iteration
i (the ops after its last barrier) for every thread before the first phase
of iteration i + 1 (the ops before its first barrier) for any thread: its
back edge would synchronise like a barrier that is not there. On a GPU a
fast thread goes on into the next iteration while slower ones still run
the last phase, so a kernel that needs a barrier there (the tiled matmul's
second barrier, which keeps the next step's staging from overwriting tiles
other threads still read) must not look right without it.

`rotate_loops` rewrites, at the `gpu` level, each barrier-holding `scf.for`
whose body has work both before its first barrier-holding op (the *head*)
and after its last (the *tail*)::

    scf.for %i = %lb to %ub step %s {      scf.if (%lb < %ub) { head(%lb) }
      head(%i)                             scf.for %i = %lb to %ub step %s {
      ... barriers ...              ->       ... barriers ...
      tail(%i)                               tail(%i)
    }                                        scf.if (%i + %s < %ub) { head(%i + %s) }
                                           }

The new `scf.if`s hold no barrier, so the fission puts `head(%i + %s)` in
the same thread loops as `tail(%i)`, and `head(%lb)` in those of the phase
before the loop: thread t runs its tail of iteration i and then its head of
iteration i + 1 before thread t + 1 runs its tail of iteration i, an order
a GPU allows where no barrier separates them. A loop whose body starts or
ends with a barrier-holding op is left as it is: that op separates the two
phases already. Each thread still runs its own ops in program order, so a
kernel without races computes what it did, bit for bit; only the order of
different threads' ops across the back edge changes.

Expects the kernel after `keep_per_thread_values`: barrier-holding loops
carry no values, and a value computed by a head's `PHASE` op is used in
the head only (anything else went through per-thread storage), so moving
the head's `PHASE` ops leaves no use behind; its `UNIFORM` and `PER_THREAD`
ops stay in the body for the phases after it (and are cloned into the
copies that need them).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, gpu, scf
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ember.lowering.gpu_to_loop.phases import Kind, Phases, free_values, holds_barrier

Stretch = list[tuple[Operation, Kind]]


def _head_and_tail(loop: scf.ForOp, phases: Phases) -> tuple[Stretch, Stretch]:
    """The ops of `loop`'s body before its first and after its last
    barrier-holding op, with their kinds (the terminator left out)."""
    ops = list(phases.ops(loop.body.block))
    holders = [i for i, (_, kind) in enumerate(ops) if kind is Kind.BARRIER]
    return ops[: holders[0]], ops[holders[-1] + 1 :]


def _has_work(stretch: Stretch) -> bool:
    """Whether `stretch` runs anything in thread loops (a `PHASE` op)."""
    return any(kind is Kind.PHASE for _, kind in stretch)


def _work_with_operands(head: Stretch) -> list[Operation]:
    """The head's `PHASE` ops and the head's ops that compute their operands
    (transitively), in order: what a copy of the head must hold."""
    wanted: set[SSAValue] = set()
    kept: list[Operation] = []
    for op, kind in reversed(head):
        if kind is Kind.PHASE or any(result in wanted for result in op.results):
            kept.append(op)
            wanted.update(free_values(op))
    return kept[::-1]


def _guarded_copy(
    ops: Sequence[Operation], iv: SSAValue, value: SSAValue, condition: SSAValue
) -> scf.IfOp:
    """`scf.if %condition { ops, with %iv replaced by %value }`."""
    body = Block()
    mapping: dict[SSAValue, SSAValue] = {iv: value}
    for op in ops:
        body.add_op(op.clone(value_mapper=mapping))
    body.add_op(scf.YieldOp())
    return scf.IfOp(condition, [], Region(body))


def _remove_work(head: Stretch) -> None:
    """Erase the head's `PHASE` ops, then its pure ops nothing uses any more."""
    for op, kind in reversed(head):
        if kind is Kind.PHASE or not any(result.uses for result in op.results):
            Rewriter.erase_op(op)  # raises if a use is left: the contract is broken


def rotate_loop(loop: scf.ForOp, phases: Phases) -> bool:
    """Rotate `loop` (see the module docstring) if its head and tail both
    have work; whether it did. `phases` must describe the kernel as it is."""
    head, tail = _head_and_tail(loop, phases)
    if not (_has_work(head) and _has_work(tail)):
        return False
    assert not loop.iter_args, "a barrier-holding loop still carries values"
    iv = loop.body.block.args[0]
    work = _work_with_operands(head)
    enter = arith.CmpiOp(loop.lb, loop.ub, "slt")
    enter.result.name_hint = "any_iteration"
    prologue = _guarded_copy(work, iv, loop.lb, enter.result)
    Rewriter.insert_op([enter, prologue], InsertPoint.before(loop))
    following = arith.AddiOp(iv, loop.step)
    more = arith.CmpiOp(following.result, loop.ub, "slt")
    following.result.name_hint, more.result.name_hint = "next_iteration", "more_iterations"
    terminator = loop.body.block.last_op
    assert terminator is not None
    rotated = _guarded_copy(work, iv, following.result, more.result)
    Rewriter.insert_op([following, more, rotated], InsertPoint.before(terminator))
    _remove_work(head)
    return True


def rotate_loops(kernel: gpu.FuncOp) -> None:
    """Rotate every barrier-holding `scf.for` of `kernel` that needs it,
    inner loops first: an inner loop's copy of its head, put before it, is
    then part of the outer body's head when nothing comes between them."""
    loops = [op for op in kernel.walk(region_first=True)
             if isinstance(op, scf.ForOp) and holds_barrier(op)]  # fmt: skip
    for loop in loops:
        rotate_loop(loop, Phases(kernel))


__all__ = ["rotate_loop", "rotate_loops"]
