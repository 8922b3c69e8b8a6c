"""`convert-loop-to-gpu`: the loop level's kernels become `gpu` kernels and
their launches.

Input: loop-level functions (after `loop-generate`, `loop-pack-weights` and
`loop-plan-memory`) whose bodies are views of their arguments (the arena,
the weights) and `loop.kernel` regions (or loop nests standing alone);
inside a kernel, loop nests and structured ops whose `schedule` is a
`#ember_gpu.schedule` (block-tiled contractions) or a `#ember_gpu.reduce`
(block-per-row reductions), left alone by `loop-generate` with the fill
before them.

Output: the module is a `gpu.container_module` with one `gpu.module
@ember_kernels`; every piece of work of a kernel region, in order, becomes a
`gpu.func ... kernel` there and a `gpu.launch_func` in the host function
where the region stood (the region itself goes):

- an `scf.parallel` nest: one thread per point of its parallel band,
  `threads` per block along x (`threads.py`);
- a structured op with a `#ember_gpu.schedule`: a block-tiled contraction
  with shared-memory staging (`contraction.py`); the generics after it
  marked `#ember_gpu.epilogue` run on its values in registers, and the
  fills and copy marked `#ember_gpu.padding` that build a padded operand
  of it run in its loads, as bounds checks;
- a `linalg.generic` with a `#ember_gpu.reduce`: a reduction of one block
  per point of its parallel dims, its threads' partials combined in shared
  memory (`reduction.py`);
- a structured op with a `#ember_gpu.window`: a depthwise convolution whose
  blocks stage their input window in shared memory once and whose threads
  compute a register tile of outputs each from it (`window.py`); its
  epilogue and its input's padding run as a tiled contraction's do;
- for all three, a `linalg.fill` just before the op into its output is the
  kernel's start and runs no kernel of its own (`absorbed_fill`);
- anything else that is not pure arithmetic or a view (an `scf.for` nest, a
  lone store): a kernel of one thread.

Launches run in order on one stream, so a kernel sees every earlier
kernel's writes. Kernel arguments are host arguments only (`outline.py`):
the views and sizes a kernel reads are computed again inside it, and the
host's own views, read by no launch any more, go. Functions
that are kernels already (`ember.kernel`) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import (
    EpilogueAttr,
    GpuScheduleAttr,
    PaddingAttr,
    ReduceScheduleAttr,
    WindowScheduleAttr,
)
from ember.dialects.loop import KERNEL_ATTR, KernelOp, YieldOp
from ember.dialects.schedule import SCHEDULE, describe, iteration_space
from ember.lowering.loop_to_gpu.contraction import (
    contraction_roles,
    folded_paddings,
    outline_contraction,
    tiled_schedule,
)
from ember.lowering.loop_to_gpu.outline import (
    PASS,
    KernelBuilder,
    ValueCopier,
    absorbed_fill,
    fill_consumer,
    rematerializable,
)
from ember.lowering.loop_to_gpu.reduction import outline_reduction
from ember.lowering.loop_to_gpu.threads import outline_band, parallel_band
from ember.lowering.loop_to_gpu.window import (
    folded_padding,
    outline_window,
    window_roles,
    window_schedule,
)

KERNEL_GENERATORS: dict[
    type[Attribute], Callable[[KernelBuilder, ValueCopier, Operation], None]
] = {
    GpuScheduleAttr: outline_contraction,
    ReduceScheduleAttr: outline_reduction,
    WindowScheduleAttr: outline_window,
}
"""The kernel generator of each schedule that has one, by the schedule's class."""

DEFAULT_THREADS = 256
"""Threads per block of a parallel band's kernel."""


class _HostFunction:
    """Outlines the work of one host function, naming kernels after it."""

    def __init__(self, module: ModuleOp, function: func.FuncOp, threads: int):
        self.module = module
        self.function = function
        self.threads = threads
        self.count = 0

    def _kernel(self, what: Operation) -> KernelBuilder:
        name = f"{self.function.sym_name.data}_kernel{self.count}"
        self.count += 1
        return KernelBuilder(self.module, name, f"{name} ({what.name})")

    def _host(self, scope: Operation, before: Operation) -> ValueCopier:
        """The host side at `before`: values outside `scope` are there already."""

        def available(value: SSAValue) -> bool:
            owner = value.owner
            op = owner if isinstance(owner, Operation) else owner.parent_op()
            return op is None or not scope.is_ancestor(op)

        builder = Builder(InsertPoint.before(before))
        return ValueCopier(builder, lambda argument: argument, "the host", available)

    def outline(self, op: Operation, scope: Operation) -> None:
        """Outlines `op` (in `scope`, a kernel region or `op` itself) into a
        kernel launched before `scope`."""
        host = self._host(scope, scope)
        kernel = self._kernel(op)
        if isinstance(op, scf.ParallelOp) and not op.initVals:
            dims, body = parallel_band(op)
            outline_band(kernel, host, dims, body, self.threads)
        elif type(op.attributes.get(SCHEDULE)) in KERNEL_GENERATORS:
            KERNEL_GENERATORS[type(op.attributes[SCHEDULE])](kernel, host, op)
        else:
            outline_band(kernel, host, [], [op], 1)

    def run(self) -> None:
        block = self.function.body.block
        for op in list(block.ops):
            if isinstance(op, KernelOp):
                self._kernel_region(op)
            elif not (rematerializable(op) or isinstance(op, func.ReturnOp)):
                if isinstance(op, memref.AllocOp):
                    raise DiagnosticException(
                        f"{PASS}: a memref.alloc on the host: plan the buffers into the arena "
                        "first (loop-plan-memory)"
                    )
                if any(result.uses for result in op.results):
                    raise DiagnosticException(
                        f"{PASS}: {op.name} computes a value on the host that later code reads; "
                        "the host only launches kernels (and computes sizes and views)"
                    )
                if isinstance(op, linalg.FillOp) and absorbed_fill(fill_consumer(op)) is op:
                    continue  # the op after it starts from its value; erased with it
                fill = absorbed_fill(op)
                self.outline(op, op)
                for outlined in (op, fill):
                    if outlined is not None:
                        outlined.detach()
                        outlined.erase()
        # Views and arithmetic the kernels now compute themselves.
        for op in reversed(list(block.ops)):
            if rematerializable(op) and not any(result.uses for result in op.results):
                block.erase_op(op)

    def _kernel_region(self, region: KernelOp) -> None:
        if region.outs:
            raise DiagnosticException(f"{PASS}: a loop.kernel with results (still on tensors)")
        skipped: set[Operation] = set()
        folded = {padding_op for op in region.block.ops for padding_op in _folded(op)}
        for op in region.block.ops:
            if op in skipped or rematerializable(op) or isinstance(op, YieldOp):
                continue
            if isinstance(op.attributes.get(SCHEDULE), PaddingAttr) and op not in folded:
                raise DiagnosticException(
                    f"{PASS}: {describe(op)} is marked {op.attributes[SCHEDULE]}, but no tiled "
                    "contraction after it reads the buffer it pads as a padded operand"
                )
            if isinstance(op.attributes.get(SCHEDULE), EpilogueAttr | PaddingAttr):
                continue  # it runs in the loads or stores of the contraction's kernel
            fill = absorbed_fill(op)
            if fill is not None:
                skipped.add(fill)
            if isinstance(op, linalg.FillOp) and absorbed_fill(fill_consumer(op)) is op:
                continue  # the op after it starts from its value
            self.outline(op, region)
        region.detach()
        region.erase()


def _folded(op: Operation) -> list[Operation]:
    """The fills and copies a tiled contraction or a window convolution
    `op` runs in its loads."""
    window = window_schedule(op)
    if window is not None:
        roles = window_roles(iteration_space(op), [v.type for v in op.operands])
        padding = None if isinstance(roles, str) else folded_padding(op, roles)
        return list(padding.ops) if padding is not None else []
    schedule = tiled_schedule(op)
    if schedule is None:
        return []
    roles = contraction_roles(iteration_space(op), schedule, [v.type for v in op.operands])
    if isinstance(roles, str):
        return []  # outline_contraction reports it
    return [o for p in folded_paddings(op, roles) if p is not None for o in p.ops]


@dataclass(frozen=True)
class ConvertLoopToGpuPass(ModulePass):
    """Every loop-level kernel's work becomes `gpu` kernels and launches
    (see the module docstring); `threads` per block for a parallel band."""

    name = "convert-loop-to-gpu"

    threads: int = DEFAULT_THREADS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not 1 <= self.threads <= 1024:
            raise DiagnosticException(f"{PASS}: threads must be 1 to 1024, got {self.threads}")
        functions = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks
                     and KERNEL_ATTR not in f.attributes]  # fmt: skip
        for function in functions:
            _HostFunction(op, function, self.threads).run()


__all__ = ["DEFAULT_THREADS", "KERNEL_GENERATORS", "ConvertLoopToGpuPass"]
