"""Structured control flow to a CFG: `loop.for` becomes blocks and branches.

A loop is a header block with the induction variable as block argument
(`icmp slt` against the upper bound), the body, the increment and back edge,
and an exit block where lowering continues. Its `parallel` flag is not used
yet (the loop runs serially). `func.return` returns nothing.
"""

from __future__ import annotations

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Block, Operation

from ember.dialects import loop
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


@_lowers(func.ReturnOp, loop.YieldOp)
def _terminator(lw: FunctionBuilder, op: Operation) -> None:
    if isinstance(op, func.ReturnOp):  # a loop body's end is handled by `_for`
        lw.emit(llvm.ReturnOp())


@_lowers(loop.ForOp)
def _for(lw: FunctionBuilder, op: Operation) -> None:
    assert isinstance(op, loop.ForOp)
    lower, upper, step = op.bounds
    header, body, exit_ = Block(arg_types=[i64]), Block(), Block()
    iv = header.args[0]
    iv.name_hint = op.induction_variable.name_hint
    lw.emit(llvm.BrOp(header, lw.const(lower, i64)))
    lw.region.add_block(header)
    lw.block = header
    more = lw.icmp("slt", iv, lw.const(upper, i64))
    lw.emit(llvm.CondBrOp(more, body, [], exit_, []))
    lw.region.add_block(body)
    lw.block = body
    lw.values[op.induction_variable] = iv
    lw.lower_block(op.body.block)
    lw.emit(llvm.BrOp(header, lw.emit(llvm.AddOp(iv, lw.const(step, i64)))))
    lw.region.add_block(exit_)
    lw.block = exit_
