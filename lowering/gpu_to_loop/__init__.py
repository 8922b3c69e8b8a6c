"""`convert-gpu-to-loop`: the `gpu` level as loop-level code that runs a
launch on the CPU, every block and every thread, barriers respected.

This is how Ember tests its GPU target without a GPU (as MCUDA and POCL
run CUDA and OpenCL kernels on CPUs): the IR that becomes PTX is the IR
that runs here, through `convert-loop-to-llvm` and the CPU JIT
(`ember.targets.cuda.emulator`).

Input (the `gpu` level's contract)
----------------------------------
A `builtin.module` with `gpu.container_module` holding `gpu.module`s of
`gpu.func ... kernel` functions and host `func.func`s that launch them
with `gpu.launch_func` (grid and block sizes, kernel operands; no async
tokens, clusters or dynamic shared memory). Kernel bodies use `arith`,
`math`, `scf.for`/`scf.if`/`scf.yield`, `memref` loads, stores and views,
`gpu.thread_id`/`block_id`/`block_dim`/`grid_dim`, `gpu.barrier`,
`ember_gpu.shared` and `ember_gpu.shuffle_xor`. A barrier or a shuffle (a
*synchronisation point*) may stand at the kernel's top level or in
`scf.for`/`scf.if` whose bounds or condition are the same for every thread
of a block: computed by pure ops from constants, arguments, block ids and
sizes (and loop counters of such loops). Anything else that holds a barrier
(a bound from a thread id or from memory, an `scf.while`) is a diagnostic
naming the op (for a shuffle that is stricter than a GPU, where only a
warp's lanes must agree); other `gpu` ops (`gpu.lane_id`, `gpu.all_reduce`, ...) are
listed in one diagnostic per kernel.

Output
------
Each kernel becomes a `func.func` of the same name at the top level taking
its arguments, then `grid_x, grid_y, grid_z, block_x, block_y, block_z`
(`index`); each `gpu.launch_func` a `func.call` of it with the launch's
sizes. The `gpu.module`s and `gpu.container_module` go. The function loops
over the blocks (z, y, x; one after another) and, within a block, cuts the
kernel at its barriers ("deep fission"): each barrier-free stretch of ops
(a *phase*) runs in its own nest of thread loops (z, y, x; x innermost,
threads in order of their linear id `x + X * (y + Y * z)`), so every thread
finishes a phase before any thread starts the next. A barrier-holding
`scf.for`/`scf.if` stays outside the thread loops and is cut in turn.

- Loop rotation: a loop's back edge is no barrier. Where a barrier-holding
  `scf.for`'s body has work both before its first barrier-holding op and
  after its last, the first phase of iteration i + 1 runs in the thread
  loops of the last phase of iteration i (guarded by i + step < ub), and
  that of the first iteration in those of the phase before the loop
  (guarded by lb < ub): thread t runs the next iteration's first phase
  before thread t + 1 runs the current one's last (`rotation`); values
  still cross phases and iterations through per-thread storage (below),
  and each thread runs its ops in its own program order. A loop whose body
  starts or ends with a barrier is cut as it stands.
- Shuffles: a shuffle is a synchronisation point like a barrier. Each
  thread stores the shuffled value in per-thread storage (a slot of its
  own per shuffle), the phase ends, and in the next phase each thread
  loads the slot of its partner lane, `linear_id ^ mask` (per_thread.py's
  `exchange_shuffles`; a shuffle in a loop adds a phase boundary after
  the load). A block whose thread count is no multiple of 32 reads stale
  slots past its last thread, where a GPU's result is undefined.
- Values: what is the same for every thread (constants, block ids, sizes,
  pure ops over them) is computed once per block outside the thread loops;
  thread ids are the thread loops' counters, and pure ops over them are
  recomputed in each phase that uses them. A value one thread computes in
  one phase and uses in another (a loop-carried value or result of a
  barrier-holding `scf.for`/`scf.if`, such as a matmul's accumulator,
  included) is stored in per-thread storage, one element per thread,
  indexed by the linear thread id, and loaded where it is used. Only
  scalars can be kept so (a thread's own `memref.alloca` used across a
  barrier is a diagnostic).
- Memory: each `ember_gpu.shared` buffer and each per-thread storage
  buffer is one `memref.alloca` in the function's entry (in the default
  memory space), reused by each block in turn and, as on a GPU, not
  initialised. Per-thread storage holds 1,024 threads (CUDA's limit), or
  the product of the kernel's `gpu.known_block_size`; a launch with more
  threads per block runs nothing, as CUDA runs nothing of a launch it
  rejects.
- What a race looks like: within a phase threads run one after another, so
  a thread that reads what a higher-numbered thread writes in the same
  phase (a missing barrier) reads the stale value, from an earlier phase or
  block, as a GPU may; a thread that reads what a lower-numbered thread
  overwrites in the same phase (the tiled matmul without the barrier
  before its loop's back edge: the next step's staging overwrites a tile
  while later threads still accumulate from it) reads the new value, as a
  GPU may. Still, a barrier-holding op separates the phases before and
  after it as a barrier would, even an `scf.if` that runs no barrier or a
  loop that runs no iteration, and so do a barrier-holding loop's exit and
  (unless rotated) its entry: a barrier missing just before or after such
  an op is not seen.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu
from xdsl.dialects.builtin import IndexType, ModuleOp, SymbolRefAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException

from ember.lowering.gpu_to_loop.fission import SIZE_ARGUMENTS, kernel_to_function
from ember.lowering.gpu_to_loop.per_thread import MAX_THREADS_PER_BLOCK, keep_per_thread_values
from ember.lowering.gpu_to_loop.phases import ID_OPS, PASS
from ember.lowering.gpu_to_loop.rotation import rotate_loops

CONTAINER_MODULE = "gpu.container_module"
GPU_OPS_RUN = (*ID_OPS, gpu.BarrierOp, gpu.ReturnOp)
"""The `gpu` ops a kernel body may hold (with `ember_gpu.shared`,
`ember_gpu.shuffle_xor`, `arith`, `math`, `scf` and `memref`)."""


def check_gpu_ops(kernel: gpu.FuncOp) -> None:
    """One diagnostic listing every other `gpu` op in `kernel`, with counts."""
    other = Counter(
        op.name
        for op in kernel.walk()
        if op is not kernel
        and isinstance(op, tuple(gpu.GPU.operations))
        and not isinstance(op, GPU_OPS_RUN)
    )
    if other:
        listed = ", ".join(f"{name} ({count})" for name, count in sorted(other.items()))
        raise DiagnosticException(
            f"{PASS}: gpu.func @{kernel.sym_name.data}: unsupported ops: {listed}"
        )


def threads_per_block(kernel: gpu.FuncOp) -> int:
    """How many threads per-thread storage is sized for."""
    known = kernel.known_block_size
    if known is None:
        return MAX_THREADS_PER_BLOCK
    count = 1
    for size in known.get_values():
        count *= int(size)
    return count


class LaunchToCall(RewritePattern):
    """`gpu.launch_func @m::@k` -> `func.call @k(operands..., grid, block)`."""

    def __init__(self, kernels: dict[SymbolRefAttr, str]):
        self.kernels = kernels

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.LaunchFuncOp, rewriter: PatternRewriter) -> None:
        name = self.kernels.get(op.kernel)
        if name is None:
            raise DiagnosticException(f"{PASS}: gpu.launch_func of unknown kernel {op.kernel}")
        extras = {"async tokens": [*op.asyncDependencies, *op.results, op.asyncObject],
                  "clusters": [op.clusterSizeX, op.clusterSizeY, op.clusterSizeZ],
                  "dynamic shared memory": [op.dynamicSharedMemorySize]}  # fmt: skip
        unsupported = [
            what for what, values in extras.items() if any(v is not None for v in values)
        ]
        if unsupported:
            raise DiagnosticException(
                f"{PASS}: gpu.launch_func of {op.kernel}: {', '.join(unsupported)} not supported"
            )
        sizes = [op.gridSizeX, op.gridSizeY, op.gridSizeZ,
                 op.blockSizeX, op.blockSizeY, op.blockSizeZ]  # fmt: skip
        casts = [arith.IndexCastOp(s, IndexType()) for s in sizes if not _is_index(s)]
        cast = iter(casts)
        indices = [s if _is_index(s) else next(cast).result for s in sizes]
        call = func.CallOp(name, [*op.kernelOperands, *indices], [])
        rewriter.replace(op, [*casts, call], new_results=[])


def _is_index(value: SSAValue) -> bool:
    return isinstance(value.type, IndexType)


def _lower_kernels(module: ModuleOp) -> dict[SymbolRefAttr, str]:
    """Replace each `gpu.module` by its kernels as functions; their names by symbol."""
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    kernels: dict[SymbolRefAttr, str] = {}
    for gpu_module in [op for op in module.ops if isinstance(op, gpu.ModuleOp)]:
        for op in gpu_module.body.block.ops:
            if not isinstance(op, gpu.FuncOp) or op.kernel is None:
                raise DiagnosticException(
                    f"{PASS}: gpu.module @{gpu_module.sym_name.data}: {_describe(op)} "
                    "is not a kernel; only gpu.func ... kernel can be run"
                )
            name = op.sym_name.data
            if name in taken:
                raise DiagnosticException(
                    f"{PASS}: gpu.func @{name}: a function of that name exists at the top level"
                )
            taken.add(name)
            check_gpu_ops(op)
            keep_per_thread_values(op, threads_per_block(op))
            rotate_loops(op)
            module.body.block.insert_op_before(
                kernel_to_function(op, threads_per_block(op)), gpu_module
            )
            kernels[SymbolRefAttr(gpu_module.sym_name.data, [name])] = name
        module.body.block.erase_op(gpu_module)
    return kernels


def _describe(op: Operation) -> str:
    name = op.attributes.get("sym_name") or op.properties.get("sym_name")
    return f"{op.name} {name}" if name is not None else op.name


def convert_gpu_to_loop(module: ModuleOp) -> None:
    """Lower every kernel and launch of `module` (contract in the module docstring)."""
    kernels = _lower_kernels(module)
    PatternRewriteWalker(LaunchToCall(kernels), apply_recursively=False).rewrite_module(module)
    module.attributes.pop(CONTAINER_MODULE, None)


@dataclass(frozen=True)
class ConvertGpuToLoopPass(ModulePass):
    """Run `gpu`-level kernels and launches as loops over every block and
    thread, cut at barriers (contract in the module docstring); leaves
    host code without launches alone."""

    name = "convert-gpu-to-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_gpu_to_loop(op)


__all__ = [
    "CONTAINER_MODULE",
    "PASS",
    "SIZE_ARGUMENTS",
    "GPU_OPS_RUN",
    "ConvertGpuToLoopPass",
    "check_gpu_ops",
    "LaunchToCall",
    "convert_gpu_to_loop",
    "threads_per_block",
]
