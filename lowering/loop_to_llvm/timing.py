"""`loop.timestamp` to `llvm.readcyclecounter`: the time-stamp counter on x86.

The intrinsic has side effects in LLVM too, so the optimiser keeps each
reading between the calls it brackets; `loop-instrument-kernels` puts them
there when a profile is asked for, and nothing else emits them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i64
from xdsl.ir import Operation, SSAValue

from ember.dialects.loop import TimestampOp
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


@_lowers(TimestampOp)
def _timestamp(lw: FunctionBuilder, op: Operation) -> SSAValue:
    return lw.intrinsic("readcyclecounter", [], i64)
