"""Thread and block ids, sizes and the block barrier as NVVM intrinsics.

`gpu.thread_id`, `gpu.block_id`, `gpu.block_dim` and `gpu.grid_dim` of
dimension x, y or z read PTX's special registers `%tid`, `%ctaid`, `%ntid`
and `%nctaid` through `llvm.nvvm.read.ptx.sreg.<register>.<dim>` (an i32,
zero-extended to the i64 of `index`: none is negative). `gpu.barrier` is
`llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)`, LLVM 22's spelling of
`__syncthreads()` (PTX `bar.sync 0`; `llvm.nvvm.barrier0` is its old
name), which every thread of the block must reach.
"""

from __future__ import annotations

from xdsl.dialects import gpu, llvm
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import Operation, SSAValue

from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)

SPECIAL_REGISTERS: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "tid", gpu.BlockIdOp: "ctaid", gpu.BlockDimOp: "ntid", gpu.GridDimOp: "nctaid",
}  # fmt: skip
"""The PTX special register each id or size op reads."""

BARRIER = "llvm.nvvm.barrier.cta.sync.aligned.all"


@_lowers(*SPECIAL_REGISTERS)
def _special_register(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp)
    register = SPECIAL_REGISTERS[type(op)]
    value = lw.intrinsic(f"nvvm.read.ptx.sreg.{register}.{op.dimension.data.value}", [], i32)
    return lw.resize(value, i64, signed=False)


@_lowers(gpu.BarrierOp)
def _barrier(lw: FunctionBuilder, op: Operation) -> None:
    lw.emit(llvm.CallIntrinsicOp(BARRIER, [lw.const(0, i32)], []))
