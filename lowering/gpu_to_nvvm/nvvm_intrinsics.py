"""Thread and block ids, sizes, the block barrier and warp shuffles as NVVM intrinsics.

`gpu.thread_id`, `gpu.block_id`, `gpu.block_dim` and `gpu.grid_dim` of
dimension x, y or z read PTX's special registers `%tid`, `%ctaid`, `%ntid`
and `%nctaid` through `llvm.nvvm.read.ptx.sreg.<register>.<dim>` (an i32,
zero-extended to the i64 of `index`: none is negative). `gpu.barrier` is
`llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)`, LLVM 22's spelling of
`__syncthreads()` (PTX `bar.sync 0`; `llvm.nvvm.barrier0` is its old
name), which every thread of the block must reach.

`ember_gpu.shuffle_xor %v, mask : f32` is
`llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v, i32 mask, i32 31)`, CUDA's
`__shfl_xor_sync(0xffffffff, v, mask)` (PTX `shfl.sync.bfly.b32`): the
member mask -1 names all 32 lanes (the op's contract: a full warp reaches
it), and 31 (`SHUFFLE_CLAMP`) packs a clamp of 31 with a segment mask of
0, so the warp is one segment of 32 lanes.
"""

from __future__ import annotations

from xdsl.dialects import gpu, llvm
from xdsl.dialects.builtin import f32, i32, i64
from xdsl.ir import Operation, SSAValue

from ember.dialects.ember_gpu import ShuffleXorOp
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)

SPECIAL_REGISTERS: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "tid", gpu.BlockIdOp: "ctaid", gpu.BlockDimOp: "ntid", gpu.GridDimOp: "nctaid",
}  # fmt: skip
"""The PTX special register each id or size op reads."""

BARRIER = "llvm.nvvm.barrier.cta.sync.aligned.all"
SHUFFLE_XOR = "nvvm.shfl.sync.bfly.f32"
ALL_LANES = -1
"""The member mask of a shuffle every lane of the warp takes part in."""
SHUFFLE_CLAMP = 31
"""`shfl.sync`'s `c` operand for a whole-warp butterfly: `((32 - width) << 8) | 31`
with width 32."""


@_lowers(*SPECIAL_REGISTERS)
def _special_register(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp)
    register = SPECIAL_REGISTERS[type(op)]
    value = lw.intrinsic(f"nvvm.read.ptx.sreg.{register}.{op.dimension.data.value}", [], i32)
    return lw.resize(value, i64, signed=False)


@_lowers(gpu.BarrierOp)
def _barrier(lw: FunctionBuilder, op: Operation) -> None:
    lw.emit(llvm.CallIntrinsicOp(BARRIER, [lw.const(0, i32)], []))


@_lowers(ShuffleXorOp)
def _shuffle_xor(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, ShuffleXorOp)
    (value,) = lw.args(op)
    members, mask, clamp = (lw.const(c, i32) for c in (ALL_LANES, op.lane_mask, SHUFFLE_CLAMP))
    return lw.intrinsic(SHUFFLE_XOR, [members, value, mask, clamp], f32)
