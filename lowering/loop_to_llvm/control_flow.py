"""Structured control flow to a CFG: `scf.for`, `scf.parallel` and `scf.if` become blocks and branches.

A loop is a header block with the induction variable as block argument
(`icmp slt` against the upper bound), the body, the increment and back edge,
and an exit block where lowering continues. Bounds and steps are SSA values
(constants or not). An `scf.for`'s loop-carried values (`iter_args`) are
further header arguments: the initial values come in from before the loop,
the body's `scf.yield` operands go back along the back edge, and the loop's
results are the header's arguments as the exit sees them (so LLVM keeps them
in registers, as the micro-kernels' vector accumulators need). An
`scf.parallel` runs its dims as nested loops, the first outermost, serially:
the loops that run on threads were outlined by `loop-parallelize` before,
and their launches are `parallel.py`'s; it carries no values (reductions are
not supported). `func.return` returns nothing. An `scf.if` branches to its
then and else blocks (an absent else is the exit), which branch to an exit
block whose arguments are its results (the `scf.yield` operands). A loop's
`loop.vector_width` (its schedule's vector width) and `loop.no_unroll` (its
body is unrolled already) stay on the back edge of its innermost loop, for
the target to make them LLVM loop metadata.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func, llvm, scf
from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.schedule import NO_UNROLL, VECTOR_WIDTH
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import scalar_type

HANDLERS: HandlerTable = {}
LOOP_HINTS = (VECTOR_WIDTH, NO_UNROLL)
"""The loop attributes that the back edge carries on to LLVM."""
_lowers = registrar(HANDLERS)


@_lowers(func.ReturnOp, scf.YieldOp, scf.ReduceOp)
def _terminator(lw: FunctionBuilder, op: Operation) -> None:
    if isinstance(op, func.ReturnOp):  # a loop body's end is handled by `_loop`
        lw.emit(llvm.ReturnOp())


def _counted_loop(
    lw: FunctionBuilder,
    ivs: Sequence[SSAValue],
    bounds: Sequence[tuple[SSAValue, SSAValue, SSAValue]],
    body: Block,
    hints: dict[str, Attribute] | None = None,
) -> None:
    """Loops over `ivs` (outermost first) from lower to upper by step, around
    `body`; the innermost loop's back edge carries `hints` as attributes."""
    if not ivs:
        lw.lower_block(body)
        return
    lower, upper, step = (lw.values[v] for v in bounds[0])
    header, inner, exit_ = Block(arg_types=[i64]), Block(), Block()
    iv = header.args[0]
    iv.name_hint = ivs[0].name_hint
    lw.emit(llvm.BrOp(header, lower))
    lw.region.add_block(header)
    lw.block = header
    more = lw.icmp("slt", iv, upper)
    lw.emit(llvm.CondBrOp(more, inner, [], exit_, []))
    lw.region.add_block(inner)
    lw.block = inner
    lw.values[ivs[0]] = iv
    _counted_loop(lw, ivs[1:], bounds[1:], body, hints)
    back_edge = llvm.BrOp(header, lw.emit(llvm.AddOp(iv, step)))
    if len(ivs) == 1 and hints:
        back_edge.attributes.update(hints)  # `llvm_module.py` makes them `!llvm.loop` metadata
    lw.emit(back_edge)
    lw.region.add_block(exit_)
    lw.block = exit_


def _carrying_loop(lw: FunctionBuilder, op: scf.ForOp) -> None:
    """An `scf.for` with loop-carried values: they are header block
    arguments next to the induction variable (see the module docstring)."""
    body = op.body.block
    header = Block(arg_types=[i64, *(scalar_type(v.type) for v in op.iter_args)])
    inner, exit_ = Block(), Block()
    lw.emit(llvm.BrOp(header, lw.values[op.lb], *lw.args_of(op.iter_args)))
    lw.region.add_block(header)
    lw.block = header
    iv, *carried = header.args
    iv.name_hint = body.args[0].name_hint
    lw.emit(llvm.CondBrOp(lw.icmp("slt", iv, lw.values[op.ub]), inner, [], exit_, []))
    lw.region.add_block(inner)
    lw.block = inner
    lw.values.update(zip(body.args, header.args))
    lw.lower_block(body)
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    step = lw.emit(llvm.AddOp(iv, lw.values[op.step]))
    back_edge = llvm.BrOp(header, step, *lw.args_of(yielded.arguments))
    back_edge.attributes.update(_hints(op))
    lw.emit(back_edge)
    lw.region.add_block(exit_)
    lw.block = exit_
    lw.values.update(zip(op.results, carried))


@_lowers(scf.ForOp, scf.ParallelOp)
def _loop(lw: FunctionBuilder, op: Operation) -> None:
    assert isinstance(op, scf.ForOp | scf.ParallelOp)
    if isinstance(op, scf.ForOp) and op.results:
        _carrying_loop(lw, op)
        return
    if op.results:
        raise DiagnosticException(
            f"{lw.pass_name}: {op.name} with loop-carried values is not supported"
        )
    if isinstance(op, scf.ForOp):
        bounds = [(op.lb, op.ub, op.step)]
    else:
        bounds = list(zip(op.lowerBound, op.upperBound, op.step))
    _counted_loop(lw, op.body.block.args, bounds, op.body.block, _hints(op))


@_lowers(scf.IfOp)
def _if(lw: FunctionBuilder, op: Operation) -> None:
    """A branch to the then block or to the else block (the exit, if there
    is none); each ends in a branch to the exit, passing its `scf.yield`
    operands, which the exit takes as block arguments: the op's results."""
    assert isinstance(op, scf.IfOp)
    exit_ = Block(arg_types=[scalar_type(t) for t in op.result_types])
    branches = [(body, Block()) for body in (op.true_region.block, *op.false_region.blocks)]
    else_ = branches[1][1] if len(branches) > 1 else exit_
    lw.emit(llvm.CondBrOp(lw.values[op.cond], branches[0][1], [], else_, []))
    for body, block in branches:
        lw.region.add_block(block)
        lw.block = block
        lw.lower_block(body)
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp)
        lw.emit(llvm.BrOp(exit_, *lw.args_of(yielded.arguments)))
    lw.region.add_block(exit_)
    lw.block = exit_
    lw.values.update(zip(op.results, exit_.args))


def _hints(op: Operation) -> dict[str, Attribute]:
    """The loop's hints for LLVM (`llvm_module.py` makes them `!llvm.loop`
    metadata on the back edge): its vector width, and not to unroll it."""
    return {name: op.attributes[name] for name in LOOP_HINTS if name in op.attributes}
