"""The `ember_gpu` dialect: what Ember's `gpu` level needs and xDSL's `gpu`
dialect lacks.

The `gpu` level is upstream's `gpu` dialect: a `gpu.module` of
`gpu.func ... kernel` functions, launched from the host by
`gpu.launch_func`, whose bodies are `scf`/`arith`/`math`/`memref` code that
reads `gpu.thread_id`, `gpu.block_id`, `gpu.block_dim` and `gpu.grid_dim`
and synchronises a block with `gpu.barrier`. A kernel's memref arguments
are global memory (device buffers), in the default memory space.

xDSL's `gpu.func` has no workgroup attributions (MLIR's
`workgroup(%a : memref<32xf32, 3>)`), so a block's shared memory is an op
of this dialect:

- `ember_gpu.shared : memref<32x33xf32, 3 : i64>`: one buffer per block,
  which every thread of the block reads and writes (after a `gpu.barrier`
  for another thread's writes to show), alive for the kernel's run. Its
  type is static and in memory space 3 (`SHARED_MEMORY_SPACE`, NVVM's
  address space for shared memory); it stands in the kernel's entry block.

The name follows `ember_linalg`: a project prefix, so it never shadows an
upstream dialect (`gpu` must keep parsing in `ember-opt`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.dialects.gpu import FuncOp as GpuFuncOp
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def
from xdsl.utils.exceptions import VerifyException

SHARED_MEMORY_SPACE = 3
"""The memory space of a block's shared memory (NVVM's address space 3)."""


def shared_memory_type(element: Attribute, shape: tuple[int, ...]) -> MemRefType:
    """The type of a shared-memory buffer of `shape` elements of `element`."""
    return MemRefType(element, shape, memory_space=IntegerAttr(SHARED_MEMORY_SPACE, i64))


def is_shared(memref_type: Attribute) -> bool:
    """Whether `memref_type` is a memref in shared memory."""
    if not isinstance(memref_type, MemRefType):
        return False
    space = memref_type.memory_space
    return isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE


@irdl_op_definition
class SharedOp(IRDLOperation):
    """A block's shared-memory buffer (see the module docstring)."""

    name = "ember_gpu.shared"
    buffer = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($buffer)"

    def __init__(self, buffer_type: MemRefType):
        super().__init__(result_types=[buffer_type])

    def verify_(self) -> None:
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, MemRefType)
        if not is_shared(buffer_type):
            raise VerifyException(
                f"{self.name}: the buffer must be in memory space {SHARED_MEMORY_SPACE}, "
                f"got {buffer_type}"
            )
        if not buffer_type.has_static_shape():
            raise VerifyException(f"{self.name}: the buffer must have a static shape")
        func = self.parent_op()
        if not isinstance(func, GpuFuncOp) or self.parent_block() is not func.body.blocks[0]:
            raise VerifyException(f"{self.name}: must stand in a gpu.func's entry block")


EmberGpu = Dialect("ember_gpu", [SharedOp], [])

__all__ = ["SHARED_MEMORY_SPACE", "EmberGpu", "SharedOp", "is_shared", "shared_memory_type"]
