"""Parallel launches: a call marked by `loop-parallelize` runs on the runtime's threads.

A call `func.call @body(%captured..., %begin, %end) {ember.parallel_threads = T}`
of a function marked `ember.parallel_body` becomes

    ctx = [the body's arguments but the range, as its ABI passes them
           (pointers, sizes, scalars), one 8-byte slot each; then begin]
    ember_parallel_for(@body_task, &ctx, end - begin, T)

and every such body gets a task function

    void body_task(void *ctx, int64_t from, int64_t to)
        { body(ctx[0], ..., ctx[k-1], ctx[k] + from, ctx[k] + to); }

`ember_parallel_for` (the target's runtime: `targets/cpu/runtime.py` on the
CPU) calls the task on sub-ranges of [0, end - begin), possibly on several
threads at once, and returns when all have run; the slots live in the
caller's frame (allocated once, in the entry block) until then. An unmarked
call is an ordinary call (`abi.lower_call`).
"""

from __future__ import annotations

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.loop import PARALLEL_BODY_ATTR, PARALLEL_THREADS_ATTR
from ember.lowering.loop_to_llvm.abi import call_arguments, lower_call
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import PTR

PARALLEL_FOR = "ember_parallel_for"
"""`void ember_parallel_for(void (*task)(void *, int64_t, int64_t), void *ctx,
int64_t n, int64_t threads)`: runs task(ctx, from, to) over sub-ranges
covering [0, n) and returns when all have run."""
SLOT_BYTES = 8
"""Each argument of a body takes one slot of the context (pointers, i64 and
every scalar type fit)."""
INTERNAL = llvm.LinkageAttr("internal")

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


def task_name(body: str) -> str:
    return f"{body}_task"


def _slot_ops(ctx: SSAValue, index: int, t: Attribute) -> list[Operation]:
    """The address of slot `index`, typed as holding a `t` (llvmlite checks
    that a store's value matches the pointer it was computed as; pointers
    travel as i64, since it cannot type a pointer to a pointer)."""
    slot = llvm.GEPOp.from_mixed_indices(ctx, [index], i64, inbounds=True)
    if t == i64:
        return [slot]
    return [slot, llvm.GEPOp.from_mixed_indices(slot.result, [0], t, inbounds=True)]


@_lowers(func.CallOp)
def _call_or_launch(lw: FunctionBuilder, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    threads = op.attributes.get(PARALLEL_THREADS_ATTR)
    if threads is None:
        lower_call(lw, op)
        return
    if not isinstance(threads, IntegerAttr) or threads.value.data < 1 or len(op.arguments) < 2:
        raise DiagnosticException(
            f"{lw.pass_name}: a call with {PARALLEL_THREADS_ATTR} needs a positive integer "
            "count and a range (the last two operands)"
        )
    *captured, begin_value, end_value = op.arguments
    arguments = call_arguments(lw, captured)
    begin, end = lw.values[begin_value], lw.values[end_value]
    ctx = llvm.AllocaOp(lw.const(len(arguments) + 1, i64), i64, alignment=SLOT_BYTES)
    lw.emit_in_entry(ctx)
    for index, value in enumerate([*arguments, begin]):
        if value.type == PTR:
            value = lw.emit(llvm.PtrToIntOp(value, i64))
        for address in _slot_ops(ctx.res, index, value.type):
            lw.emit(address)
        lw.emit(llvm.StoreOp(value, address.results[0]))
    count = lw.emit(llvm.SubOp(end, begin))
    task = lw.emit(llvm.AddressOfOp(task_name(op.callee.string_value()), PTR))
    lw.call(PARALLEL_FOR, [task, ctx.res, count, lw.const(threads.value.data, i64)], None)


def task_function(body: llvm.FuncOp) -> llvm.FuncOp:
    """The task that runs `body` (a lowered parallel body) on one sub-range,
    its other arguments read from the context (see the module doc)."""
    *parameters, _, _ = body.function_type.inputs.data
    entry = Block(arg_types=[PTR, i64, i64])
    ctx, start, stop = entry.args
    ctx.name_hint, start.name_hint, stop.name_hint = "ctx", "from", "to"
    ops: list[Operation] = []

    def slot(index: int, t: Attribute) -> SSAValue:
        ops.extend(_slot_ops(ctx, index, t))
        return ops[-1].results[0]

    loaded = []
    for index, t in enumerate(parameters):
        stored = i64 if t == PTR else t
        ops.append(llvm.LoadOp(slot(index, stored), stored))
        if t == PTR:
            ops.append(llvm.IntToPtrOp(ops[-1].results[0]))
        loaded.append(ops[-1].results[0])
    ops.append(llvm.LoadOp(slot(len(parameters), i64), i64))
    offset = ops[-1].results[0]
    ops.append(llvm.AddOp(offset, start))
    ops.append(llvm.AddOp(offset, stop))
    begin, end = ops[-2].results[0], ops[-1].results[0]
    ops.append(llvm.CallOp(body.sym_name.data, *loaded, begin, end))
    ops.append(llvm.ReturnOp())
    entry.add_ops(ops)
    signature = llvm.LLVMFunctionType([PTR, i64, i64])
    return llvm.FuncOp(task_name(body.sym_name.data), signature, INTERNAL, body=Region(entry))


def is_parallel_body(fn: func.FuncOp) -> bool:
    return PARALLEL_BODY_ATTR in fn.attributes


__all__ = ["HANDLERS", "PARALLEL_FOR", "is_parallel_body", "task_function"]
