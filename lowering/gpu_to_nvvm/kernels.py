"""A `gpu.func` as an `llvm.func`: its parameters, its kernel mark, its return.

Parameters follow `convert-loop-to-llvm`'s unpacked form (`abi.py`): per
memref argument its data pointer, then one i64 per dynamic part of its
type (offset if `?`, the `?` sizes, the `?` strides of an explicit strided
layout); per `index`/integer/float argument that scalar (`index` as i64).
A kernel's memref arguments are global memory: their pointers are
`!llvm.ptr<1>` (NVVM's global address space), so every load and store
through them is `ld.global`/`st.global`. A memref argument must be in the
default memory space or in space 1.

A kernel (`gpu.func ... kernel`) keeps external linkage and carries the
unit attribute `nvvm.kernel` (`KERNEL_ATTR`, MLIR's NVVM name), which the
CUDA target turns into LLVM's `ptx_kernel` calling convention (xDSL's
llvm dialect has no such convention); a `gpu.func` without `kernel` is a
device function, lowered the same way without the mark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import gpu, llvm
from xdsl.dialects.builtin import IntAttr, IntegerAttr, MemRefType, NoneAttr, UnitAttr
from xdsl.ir import Attribute, Block, Operation

from ember.lowering.loop_to_llvm.abi import EXTERNAL, bind_unpacked_parameters
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import lowerable

GLOBAL_ADDRESS_SPACE = 1
"""NVVM's address space of global memory (device buffers)."""
GLOBAL_PTR = llvm.LLVMPointerType(IntAttr(GLOBAL_ADDRESS_SPACE))
KERNEL_ATTR = "nvvm.kernel"
"""The unit attribute of an `llvm.func` that is a PTX entry point."""

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


@dataclass
class KernelParts:
    """What lowering one `gpu.func` adds to its `gpu.module`: module-level
    globals (shared memory), placed before the function."""

    globals: list[llvm.GlobalOp] = field(default_factory=list[llvm.GlobalOp])


class KernelBuilder(FunctionBuilder):
    """A `FunctionBuilder` for a `gpu.func` named `symbol`, which collects
    the module-level ops its body needs in `parts`."""

    def __init__(self, symbol: str, handlers: HandlerTable, *, pass_name: str) -> None:
        super().__init__(Block(), handlers, externals={}, pass_name=pass_name)
        self.symbol = symbol
        self.parts = KernelParts()


@_lowers(gpu.ReturnOp)
def _return(lw: FunctionBuilder, op: Operation) -> None:
    lw.emit(llvm.ReturnOp())


def in_global_memory(memref_type: MemRefType) -> bool:
    """Whether a kernel argument of `memref_type` may be global memory:
    the default memory space or space 1."""
    space = memref_type.memory_space
    if isinstance(space, NoneAttr):
        return True
    return isinstance(space, IntegerAttr) and space.value.data in (0, GLOBAL_ADDRESS_SPACE)


def _argument_problem(t: Attribute) -> str | None:
    """Why a `gpu.func` cannot take an argument of type `t`, or None."""
    if not lowerable(t):
        return f"an argument of type {t}"
    if isinstance(t, MemRefType) and not in_global_memory(t):
        return f"a memref argument in memory space {t.memory_space}"
    return None


def function_problem(fn: gpu.FuncOp) -> str | None:
    """Why `fn`'s signature or shape has no lowering here (results, several
    blocks, an argument `_argument_problem` rejects), or None."""
    if fn.function_type.outputs.data:
        return "results"
    if len(fn.body.blocks) != 1:
        return "several blocks"
    return next(filter(None, map(_argument_problem, fn.function_type.inputs.data)), None)


def lower_gpu_func(
    fn: gpu.FuncOp, handlers: HandlerTable, pass_name: str
) -> tuple[llvm.FuncOp, KernelParts]:
    """The `llvm.func` of `fn` (see the module docstring; `function_problem`
    must find nothing) and the parts its module needs besides it."""
    assert function_problem(fn) is None, "the pass checks every gpu.func first"
    name = fn.sym_name.data
    lw = KernelBuilder(name, handlers, pass_name=pass_name)
    params = bind_unpacked_parameters(lw, fn.body.block.args, GLOBAL_PTR)
    lw.lower_block(fn.body.block)
    lowered = llvm.FuncOp(name, llvm.LLVMFunctionType(params), EXTERNAL, body=lw.finish())
    if fn.kernel is not None:
        lowered.attributes[KERNEL_ATTR] = UnitAttr()
    return lowered, lw.parts
