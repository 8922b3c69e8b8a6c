"""`convert-gpu-to-nvvm`: every `gpu.module`'s kernels to the `llvm` dialect for NVPTX.

Input (the `gpu` level): a module whose `gpu.module`s hold `gpu.func`s
(kernels marked `kernel`), each one block ending in `gpu.return`, whose
bodies use `arith`, `math`, `scf.for` (with loop-carried values), `scf.if`
(with results or not), `scf.yield`, `memref.load`/`store`/`subview`/
`view`/`reinterpret_cast`/`dim`, `gpu.thread_id`/`block_id`/`block_dim`/
`grid_dim` (x, y, z), `gpu.barrier`, `ember_gpu.shared` and
`ember_gpu.shuffle_xor`. Everything
outside the `gpu.module`s (the host's `func.func`s and their
`gpu.launch_func`s) is left alone.

Output: in each `gpu.module`, in place of each `gpu.func @k`, an
`llvm.func @k` (and before it the `llvm.mlir.global`s of its shared
buffers), which `targets/cuda` turns into PTX:

- ABI (`kernels.py`): per memref argument its data pointer, an
  `!llvm.ptr<1>` (global memory), then one i64 per dynamic part of its
  type (offset if `?`, the `?` sizes, the `?` strides of an explicit
  strided layout), as `convert-loop-to-llvm`'s unpacked form; per `index`/
  integer/float argument that scalar (`index` as i64). A kernel carries
  `nvvm.kernel` (the PTX entry-point mark: the `ptx_kernel` calling
  convention in LLVM IR) and external linkage.
- ids, sizes, barrier, shuffles (`nvvm_intrinsics.py`):
  `llvm.nvvm.read.ptx.sreg.*`, `llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)`
  and `llvm.nvvm.shfl.sync.bfly.f32(i32 -1, v, i32 mask, i32 31)` calls.
- shared memory (`shared_memory.py`): an internal, undefined, 16-byte
  aligned global in address space 3 per `ember_gpu.shared`, addressed by
  `llvm.mlir.addressof` as an `!llvm.ptr<3>`.
- bodies: `convert-loop-to-llvm`'s target-neutral tables through its
  `FunctionBuilder`: `control_flow` (scf to a CFG), `memory` (views and
  accesses as GEPs on the base pointer, which keep its address space:
  `ld.global`, `ld.shared`), `vectors`' `vector.load`/`vector.store` of
  one-dimensional vectors, promising alignment to the whole vector (the
  tiled contraction emits them only where its operand is so aligned: 4
  f32 are one `ld.global.v4.f32`) and `vector.broadcast` of a scalar,
  and `scalars` less what NVPTX cannot select,
  with PTX's approximations for exp, exp2, log, log2, log10, tanh on f32
  and f16 (`nvvm_math.py`, which says how accurate they are and why
  `loop-expand-math` should run first where accuracy matters).

Unsupported, reported in one diagnostic listing every such op with its
count (never a crash in LLVM's code generation): libm-only math (sin, cos,
tan, erf, pow, atan, ...), the approximations on f64, other vector ops, calls,
`gpu.func`s with results or several blocks, memref arguments outside
global memory, anything else not in the tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import gpu, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ember.lowering.gpu_to_nvvm import kernels, nvvm_intrinsics, nvvm_math, shared_memory
from ember.lowering.gpu_to_nvvm.kernels import GLOBAL_ADDRESS_SPACE, KERNEL_ATTR
from ember.lowering.loop_to_llvm import control_flow, memory, vectors
from ember.lowering.loop_to_llvm.builder import HandlerTable, check_supported
from ember.lowering.loop_to_llvm.llvm_types import lowerable

PASS = "convert-gpu-to-nvvm"
HANDLERS: HandlerTable = {
    **control_flow.HANDLERS,
    **memory.HANDLERS,
    **vectors.access_handlers(vectors.vector_bytes),
    vector.BroadcastOp: vectors.HANDLERS[vector.BroadcastOp],
    **nvvm_math.HANDLERS,
    **nvvm_intrinsics.HANDLERS,
    **shared_memory.HANDLERS,
    **kernels.HANDLERS,
}


def _problem(op: Operation) -> str | None:
    """Why `op`, inside a `gpu.module`, cannot be lowered (its name, or its
    name and a type), or None."""
    parent = op.parent_op()
    if isinstance(op, gpu.FuncOp):
        problem = kernels.function_problem(op)
        return f"{op.name} with {problem}" if problem else None
    if isinstance(parent, gpu.ModuleOp) or type(op) not in HANDLERS:
        return op.name
    bad = [t for t in (*(v.type for v in op.operands), *op.result_types) if not lowerable(t)]
    return f"{op.name} on {bad[0]}" if bad else nvvm_math.problem(op)


def gpu_modules(module: ModuleOp) -> list[gpu.ModuleOp]:
    """The `gpu.module`s of `module`, in order."""
    return [op for op in module.walk() if isinstance(op, gpu.ModuleOp)]


def convert_gpu_to_nvvm(module: ModuleOp) -> None:
    """Lower every `gpu.func` of every `gpu.module` in `module` (see above)."""
    containers = gpu_modules(module)
    check_supported(PASS, (problem for container in containers for op in container.walk()
                           if op is not container and (problem := _problem(op))))  # fmt: skip
    for container in containers:
        body = container.body.block
        for fn in list(body.ops):
            assert isinstance(fn, gpu.FuncOp)
            lowered, parts = kernels.lower_gpu_func(fn, HANDLERS, PASS)
            for op in (*parts.globals, lowered):
                body.insert_op_before(op, fn)
            body.erase_op(fn)


@dataclass(frozen=True)
class ConvertGpuToNvvmPass(ModulePass):
    """Lower the kernels of every `gpu.module` to the `llvm` dialect for
    NVPTX (contract in the package docstring); the host code is left alone."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_gpu_to_nvvm(op)


__all__ = [
    "GLOBAL_ADDRESS_SPACE",
    "HANDLERS",
    "KERNEL_ATTR",
    "PASS",
    "ConvertGpuToNvvmPass",
    "convert_gpu_to_nvvm",
    "gpu_modules",
]
