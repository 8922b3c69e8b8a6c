"""Tuning tasks: the distinct structured ops of a model, each with the kernel it runs in.

A *task* is one structured op on buffers as the CPU pipeline holds it just
before schedules are attached (after bufferization), with everything it
runs with. In a fused group (a `loop.kernel`), that is the whole kernel:
its other ops share the kernel's loops with it (`loop-fuse` merges the
nests of one kernel where their schedules line them up), so a schedule
that is fast alone may be slow where it keeps a neighbour's nest apart.
The kernel's *head*, its one op that is searched, is its op of the most
work (a Winograd group's batched product, a convolution with its bias and
activation); the others keep the default schedule, in tuning and in every
compile that applies the records, so what was measured is what runs. An
op outside any kernel is a task with the `linalg.fill` that starts its
output and, for a contraction, the chain of elementwise generics after it
that its micro-kernels may apply before they store (`epilogue_chain`).

A task's *harness* is a module of its own holding just those ops in one
function, `ember_main`, whose arguments are the buffers the ops read and
write that live outside them (the model's activations), the constant ones
(`loop.weight`) and their views copied in, the intermediate buffers
allocated inside; the head is marked `loop.task_head`. Weights are printed
as zeros: what a task is does not depend on their values, and the harness
fills them with random ones when it is measured (`ember.tuning.measure`).

The task's key is a SHA-256 of the harness text without any schedule, so
two ops of one model, or of two models, with the same shapes, layout, body,
constant operands and kernel are one task, and a record made for one
applies to the other (`tensor-apply-records`). A model's tasks are weighted
by how many of its ops they stand for. Ops with sizes known only at run
time are not tasks (a symbolic model is tuned at fixed sizes:
`--input-shape`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from ember.dialects.loop import KernelOp, WeightOp
from ember.dialects.schedule import SCHEDULE, STRUCTURED_OPS, iteration_space
from ember.dialects.source_names import source_names
from ember.lowering.loop_to_llvm import PACKED_BUFFERS_ATTR
from ember.options import DEFAULT_OPTIONS, Options
from ember.passes.loop.fuse import VIEW_OPS
from ember.passes.loop.generate import epilogue_chain, preceding_fill
from ember.report import CompileReport

HARNESS_ENTRY = "ember_main"
"""The name of a harness's function."""

HEAD_ATTR = "loop.task_head"
"""Marks the op of a harness whose schedule is searched."""

KEY_LENGTH = 20
"""Hex digits of a task's key (80 bits of its SHA-256)."""


@dataclass
class Task:
    """One distinct structured op (with its fill and epilogue) of a model."""

    key: str
    harness: str
    """The harness module's text, without schedules, weights as zeros."""
    op_name: str
    """The structured op (`linalg.generic`, `linalg.matmul`, ...)."""
    extents: tuple[int, ...]
    iterators: tuple[str, ...]
    flops: int
    """Multiply-adds count two: the op's work per run, for the report."""
    names: list[str] = field(default_factory=list)
    """The model's nodes the task's ops came from."""
    count: int = 1
    """How many of the model's ops run this task."""

    def describe(self) -> str:
        """The op, its extents and its first node names, for listings."""
        shown = ", ".join(self.names[:3]) + (", ..." if len(self.names) > 3 else "")
        dims = "x".join(map(str, self.extents))
        return f"{self.op_name} [{dims}]" + (f" ({shown})" if shown else "")


def task_ops(op: Operation) -> list[Operation]:
    """What runs as `op`'s task: its fill, itself, its epilogue chain."""
    fill = preceding_fill(op)
    ops: list[Operation] = [fill] if fill is not None else []
    ops.append(op)
    if iteration_space(op).product is not None:
        epilogue = epilogue_chain(op)
        if epilogue is not None:
            ops.extend(epilogue.generics)
    return ops


def tunable(op: Operation) -> bool:
    """Whether `op` is a structured op on buffers of static sizes."""
    if not isinstance(op, STRUCTURED_OPS):
        return False
    if not any(isinstance(v.type, MemRefType) for v in op.operands):
        return False
    return DYNAMIC_INDEX not in iteration_space(op).extents


class _NoHarness(Exception):
    """The op reads a value its harness cannot stand in for (one an op
    outside the task computes that is not a buffer): it is no task."""


class _Harness:
    """Builds the harness of one task's ops (see the module docstring)."""

    def __init__(self, ops: Sequence[Operation], head: Operation):
        self.ops = list(ops)
        self.head = head
        self.inside = {id(o) for o in ops}
        self.mapping: dict[SSAValue, SSAValue] = {}
        self.prelude: list[Operation] = []
        self.arguments: list[SSAValue] = []
        self.block = Block()

    def build(self) -> ModuleOp:
        for op in self.ops:
            for operand in op.operands:
                self._resolve(operand)
        # The arguments are the block's, in the order first met.
        for original, argument in zip(self.arguments, self.block.args, strict=True):
            self.mapping[original] = argument
        mapping = dict(self.mapping)
        parent = self.ops[0].parent_op()
        kernel = parent if isinstance(parent, KernelOp) else None
        # What the model's kernel holds stays in the harness's kernel (an
        # intermediate buffer allocated outside it would be its argument).
        outside = [op for op in self.prelude if kernel is None or op.parent_op() is not kernel]
        within = [op for op in self.prelude if kernel is not None and op.parent_op() is kernel]
        body = [op.clone(value_mapper=mapping, clone_name_hints=False) for op in outside]
        compute = [op.clone(value_mapper=mapping, clone_name_hints=False)
                   for op in (*within, *self.ops)]  # fmt: skip
        for op in compute:
            op.attributes.pop(SCHEDULE, None)
        compute[len(within) + self.ops.index(self.head)].attributes[HEAD_ATTR] = UnitAttr()
        if kernel is not None:
            kind = kernel.kind.data if kernel.kind is not None else None
            self.block.add_ops([*body, KernelOp(Block(compute), kind=kind), func.ReturnOp()])
        else:
            self.block.add_ops([*body, *compute, func.ReturnOp()])
        for op in self.block.walk():
            if isinstance(op, WeightOp):
                op.properties["value"] = _zeros_like(op.value)
        types = [a.type for a in self.block.args]
        function = func.FuncOp(HARNESS_ENTRY, (types, []), Region(self.block))
        function.attributes[PACKED_BUFFERS_ATTR] = UnitAttr()
        return ModuleOp([function])

    def _resolve(self, value: SSAValue) -> None:
        """Makes `value` available in the harness: defined by a task op,
        copied (constants, weights, views, buffers only the ops use), or an
        argument."""
        if value in self.mapping or value in self.arguments:
            return
        owner = value.owner
        if isinstance(owner, Operation) and id(owner) in self.inside:
            return
        if isinstance(owner, Operation) and owner in self.prelude:
            return
        if isinstance(owner, WeightOp | arith.ConstantOp) or (
            isinstance(owner, memref.AllocOp) and self._used_only_inside(value)
        ):
            self.prelude.append(owner)
            return
        if isinstance(owner, VIEW_OPS):
            for operand in owner.operands:
                self._resolve(operand)
            self.prelude.append(owner)
            return
        if not isinstance(value.type, MemRefType) or not (
            isinstance(value, BlockArgument) or isinstance(owner, memref.AllocOp)
        ):
            raise _NoHarness(value)
        self.arguments.append(value)
        self.block.insert_arg(value.type, len(self.block.args))

    def _used_only_inside(self, value: SSAValue) -> bool:
        for use in value.uses:
            user = use.operation
            if isinstance(user, VIEW_OPS):
                if not all(self._used_only_inside(r) for r in user.results):
                    return False
            elif id(user) not in self.inside:
                return False
        return True


def _zeros_like(value: DenseIntOrFPElementsAttr) -> DenseIntOrFPElementsAttr:
    shaped = value.get_type()
    return DenseIntOrFPElementsAttr.from_list(shaped, [0])  # type: ignore[arg-type]


def harness_ops(op: Operation) -> list[Operation]:
    """The ops `op`'s harness holds: its kernel's (but the terminator), or
    outside a kernel `task_ops`."""
    kernel = op.parent_op()
    return list(kernel.block.ops)[:-1] if isinstance(kernel, KernelOp) else task_ops(op)


def harness_module(op: Operation, ops: Sequence[Operation] | None = None) -> ModuleOp | None:
    """The harness of `op`'s task (see the module docstring) made of `ops`
    (`harness_ops`, where the caller has them already), or None where the
    op reads a value that is neither a buffer nor a constant."""
    try:
        return _Harness(harness_ops(op) if ops is None else ops, op).build()
    except _NoHarness:
        return None


def task_key(harness: str) -> str:
    """The key of the task whose harness text (no schedules) is `harness`."""
    return hashlib.sha256(harness.encode()).hexdigest()[:KEY_LENGTH]


def op_task(op: Operation, ops: Sequence[Operation] | None = None) -> Task | None:
    """The task `op` heads (it must be `tunable`; `ops` its `harness_ops`
    where the caller has them), or None (`harness_module`)."""
    ops = harness_ops(op) if ops is None else ops
    module = harness_module(op, ops)
    if module is None:
        return None
    harness = str(module)
    space = iteration_space(op)
    flops = work(op)
    kernel = op.parent_op()
    sources = kernel.walk() if isinstance(kernel, KernelOp) else ops
    names = [n for o in sources for n in source_names(o)]
    return Task(task_key(harness), harness, op.name, space.extents, space.iterators, flops,
                list(dict.fromkeys(names)))  # fmt: skip


def work(op: Operation) -> int:
    """The op's multiply-adds (two a point for a contraction) or points."""
    space = iteration_space(op)
    points = 1
    for extent in space.extents:
        points *= extent
    return 2 * points if space.product is not None else points


def task_heads(module: ModuleOp) -> Iterator[Operation]:
    """The ops of `module` (on buffers, before schedules) that head a task:
    in each kernel its tunable op of the most work, and outside kernels
    every tunable op that is not in the epilogue of one before it."""
    return (head for head, _ in task_heads_with_ops(module))


def task_heads_with_ops(module: ModuleOp) -> Iterator[tuple[Operation, list[Operation]]]:
    """`task_heads`, each with its `harness_ops` (found once)."""
    in_epilogue: set[int] = set()
    for op in module.walk():
        if isinstance(op, KernelOp):
            candidates = [o for o in op.walk() if tunable(o)]
            if candidates:
                head = max(candidates, key=work)  # the first of the most work
                yield head, harness_ops(head)
            continue
        if isinstance(op.parent_op(), KernelOp) or id(op) in in_epilogue or not tunable(op):
            continue
        ops = task_ops(op)
        in_epilogue.update(id(o) for o in ops[1:])
        yield op, ops


def collect_tasks(module: ModuleOp) -> list[Task]:
    """`module`'s tasks (on buffers, before schedules), in the order first
    met, each counted once per op it stands for."""
    tasks: dict[str, Task] = {}
    for op, ops in task_heads_with_ops(module):
        task = op_task(op, ops)
        if task is None:
            continue
        known = tasks.get(task.key)
        if known is None:
            tasks[task.key] = task
            continue
        known.count += 1
        known.names.extend(n for n in task.names if n not in known.names)
    return list(tasks.values())


SCHEDULE_PASSES = ("tensor-apply-records", "tensor-default-schedule")
"""The CPU pipeline's passes that attach schedules: tasks are read before them."""


def lower_to_tasks(module: ModuleOp, options: Options = DEFAULT_OPTIONS) -> ModuleOp:
    """Runs the CPU pipeline on graph IR in place up to where schedules are
    attached (bufferized structured ops); returns it."""
    from ember.targets.cpu.pipeline import cpu_passes
    from ember.targets.stages import apply_passes

    context = Context()
    report = CompileReport()
    for _, compiler_pass in cpu_passes(options):
        if compiler_pass.name in SCHEDULE_PASSES:
            break
        apply_passes(module, [compiler_pass], report, context)
    return module


def model_tasks(module: ModuleOp, options: Options = DEFAULT_OPTIONS) -> list[Task]:
    """The tasks of an imported model (graph IR, consumed) compiled with `options`."""
    return collect_tasks(lower_to_tasks(module, options))


__all__ = [
    "HARNESS_ENTRY",
    "SCHEDULE_PASSES",
    "Task",
    "collect_tasks",
    "harness_module",
    "harness_ops",
    "lower_to_tasks",
    "model_tasks",
    "op_task",
    "task_heads",
    "task_heads_with_ops",
    "task_key",
    "task_ops",
    "tunable",
]
