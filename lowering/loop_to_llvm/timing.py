"""`loop.timestamp` to `llvm.readcyclecounter`: the time-stamp counter on x86;
`loop.trace` to a call of the runtime's `ember_trace_record(kernel, begin, end)`.

The intrinsic has side effects in LLVM too, so the optimiser keeps each
reading between the calls it brackets; `loop-instrument-kernels` puts them
there when a profile is asked for, and nothing else emits them.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Operation, SSAValue

from ember.dialects.loop import TimestampOp, TraceOp
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


@_lowers(TimestampOp)
def _timestamp(lw: FunctionBuilder, op: Operation) -> SSAValue:
    return lw.intrinsic("readcyclecounter", [], i64)


TRACE_RECORD = "ember_trace_record"
"""The runtime's entry for one traced call (`ember.targets.cpu.runtime`)."""


@_lowers(TraceOp)
def _trace(lw: FunctionBuilder, op: Operation) -> None:
    assert isinstance(op, TraceOp)
    kernel = lw.emit(llvm.ConstantOp(op.kernel, i64))
    lw.externals[TRACE_RECORD] = llvm.LLVMFunctionType([i64, i64, i64], llvm.LLVMVoidType())
    lw.emit(llvm.CallOp(TRACE_RECORD, kernel, lw.values[op.begin], lw.values[op.end]))
