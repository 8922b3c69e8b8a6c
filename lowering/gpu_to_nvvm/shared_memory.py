"""A block's shared memory: each `ember_gpu.shared` is a global in address space 3.

`%t = ember_gpu.shared : memref<16x16xf32, 3 : i64>` in kernel `@k`
becomes a module-level (inside the `gpu.module`)
`llvm.mlir.global internal @k_shared<n>() {addr_space = 3 : i32,
alignment = 16 : i64} : !llvm.array<256 x f32>` (n counts the kernel's
shared buffers from 0) and, where the op stood, `llvm.mlir.addressof` of
it, an `!llvm.ptr<3>`: the buffer's base pointer, row-major with its
type's static layout, so loads and stores through it are `ld.shared` /
`st.shared`. The global has no initial value (shared memory is undefined
when a block starts: the translation writes it `undef`, as NVPTX
requires) and 16-byte alignment, enough for 128-bit vector accesses. An
`i1` element is a byte, as in global memory.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from ember.dialects.ember_gpu import SHARED_MEMORY_SPACE, SharedOp
from ember.lowering.gpu_to_nvvm.kernels import KernelBuilder
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import memory_type

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)

SHARED_PTR = llvm.LLVMPointerType(IntAttr(SHARED_MEMORY_SPACE))
SHARED_ALIGNMENT = 16
"""Bytes: a shared buffer's alignment (a 128-bit `ld.shared.v4` needs 16)."""


@_lowers(SharedOp)
def _shared(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, SharedOp) and isinstance(lw, KernelBuilder)
    buffer_type = op.buffer.type
    assert isinstance(buffer_type, MemRefType)
    count = 1
    for size in buffer_type.get_shape():
        count *= size
    name = f"{lw.symbol}_shared{len(lw.parts.globals)}"
    storage = llvm.LLVMArrayType(count, memory_type(buffer_type.element_type))
    lw.parts.globals.append(
        llvm.GlobalOp(
            storage, name, "internal", addr_space=SHARED_MEMORY_SPACE, alignment=SHARED_ALIGNMENT
        )  # fmt: skip
    )
    return lw.emit(llvm.AddressOfOp(name, SHARED_PTR))
