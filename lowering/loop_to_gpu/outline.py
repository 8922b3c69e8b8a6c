"""Outlining: a piece of a host function becomes a `gpu.func` kernel of the
module's `gpu.module` and a `gpu.launch_func` of it where the piece stood.

A kernel's arguments are the host function's own arguments that its code
reads (the model's inputs and outputs, the weights blob, the arena, sizes),
never values computed on the host: what the code reads that the host
computes is recomputed in the kernel, which is possible because it is pure
arithmetic on those arguments (constants, `index` arithmetic, `memref.dim`)
or a view of them (`memref.view` of the arena or the weights at an offset,
`memref.subview`, `memref.reinterpret_cast`). So a launch passes plain
buffers and sizes, which is what a launch plan can say and a driver can
pass, and the host does no arithmetic of its own between launches but the
grid sizes, which are made of the same pure ops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, math, memref
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import (
    GpuScheduleAttr,
    PaddingAttr,
    ReduceScheduleAttr,
    WindowScheduleAttr,
)
from ember.dialects.schedule import SCHEDULE

KERNELS_MODULE = "ember_kernels"
"""The name of the `gpu.module` that holds every kernel."""

PASS = "convert-loop-to-gpu"

_VIEWS = (memref.ViewOp, memref.SubviewOp, memref.ReinterpretCastOp, memref.DimOp)


def rematerializable(op: Operation) -> bool:
    """Whether `op` may be computed again where its results are used: pure
    scalar arithmetic or a view of a buffer (no memory is read or written)."""
    if isinstance(op, _VIEWS):
        return True
    dialect = op.name.split(".")[0]
    return dialect in (arith.Arith.name, math.Math.name) and not op.regions


def kernels_module(module: ModuleOp) -> gpu.ModuleOp:
    """The module's `gpu.module` of kernels, made (and the module marked
    `gpu.container_module`) on first use."""
    for op in module.ops:
        if isinstance(op, gpu.ModuleOp) and op.sym_name.data == KERNELS_MODULE:
            return op
    module.attributes["gpu.container_module"] = UnitAttr()
    kernels = gpu.ModuleOp(SymbolRefAttr(KERNELS_MODULE), Region(Block()))
    kernels.sym_name = StringAttr(KERNELS_MODULE)
    module.body.block.add_op(kernels)
    return kernels


class ValueCopier:
    """Copies the values a piece of code reads into another block: a value
    `available` there is itself; a host function argument becomes (once) an
    argument there, through `argument`; a value of a rematerializable op is
    computed again there, its operands copied first; anything else is a
    diagnostic naming `where`."""

    def __init__(self, builder: Builder, argument: Callable[[BlockArgument], SSAValue],
                 where: str, available: Callable[[SSAValue], bool] = lambda _: False):  # fmt: skip
        self.builder = builder
        self.argument = argument
        self.where = where
        self.available = available
        self.mapping: dict[SSAValue, SSAValue] = {}
        self.constants: dict[int, SSAValue] = {}

    def __call__(self, value: SSAValue) -> SSAValue:
        if value in self.mapping:
            return self.mapping[value]
        if self.available(value):
            return value
        if isinstance(value, BlockArgument):
            copied = self.argument(value)
        else:
            owner = value.owner
            assert isinstance(owner, Operation)
            if not rematerializable(owner):
                raise DiagnosticException(
                    f"{PASS}: {self.where} reads {owner.name}'s result, which is computed on the "
                    "host; only arguments and pure arithmetic or views of them can be"
                )
            for operand in owner.operands:
                self(operand)
            clone = owner.clone(value_mapper=self.mapping)
            self.builder.insert(clone)
            for old, new in zip(owner.results, clone.results):
                self.mapping[old] = new
            copied = self.mapping[value]
        self.mapping[value] = copied
        return copied

    def copy_all(self, values: Iterable[SSAValue]) -> None:
        for value in values:
            self(value)


def outside_values(ops: Sequence[Operation]) -> list[SSAValue]:
    """The values `ops` (and the ops nested in them) read that none of them
    defines, in order of first use."""
    inside: set[SSAValue] = set()
    for op in ops:
        for nested in op.walk():
            inside.update(nested.results)
            for region in nested.regions:
                for block in region.blocks:
                    inside.update(block.args)
    found: dict[SSAValue, None] = {}
    for op in ops:
        for nested in op.walk():
            for operand in nested.operands:
                if operand not in inside:
                    found.setdefault(operand, None)
    return list(found)


class KernelBuilder:
    """A new kernel of `host`'s module: `body` builds its code in the
    kernel's entry block; `launch` inserts the launch at the host's insertion
    point."""

    def __init__(self, module: ModuleOp, name: str, where: str):
        self.kernels = kernels_module(module)
        self.name = name
        self.block = Block()
        self.body = Builder(InsertPoint.at_end(self.block))
        self.operands: list[SSAValue] = []
        self.copier = ValueCopier(self.body, self._argument, where)

    def _argument(self, value: BlockArgument) -> SSAValue:
        self.operands.append(value)
        return self.block.insert_arg(value.type, len(self.block.args))

    def finish(self) -> gpu.FuncOp:
        """The kernel, made from the block built, in the kernels module."""
        self.body.insert(gpu.ReturnOp([]))
        kernel = gpu.FuncOp(self.name, FunctionType.from_lists([a.type for a in self.block.args], []),
                            Region(self.block), kernel=True)  # fmt: skip
        self.kernels.body.block.add_op(kernel)
        return kernel

    def launch(self, host: Builder, grid: Sequence[SSAValue], block: Sequence[SSAValue]) -> None:
        """The launch of the finished kernel at `host`, with `grid` and
        `block` sizes (x, y, z) made on the host."""
        symbol = SymbolRefAttr(KERNELS_MODULE, [self.name])
        host.insert(gpu.LaunchFuncOp(symbol, list(grid), list(block), kernelOperands=self.operands))


def absorbed_fill(op: Operation | None) -> linalg.FillOp | None:
    """The `linalg.fill` into the one output of `op`, a structured op that a
    kernel generator of its own runs (a `#ember_gpu.schedule` contraction, a
    `#ember_gpu.reduce` reduction, a `#ember_gpu.window` convolution), just
    before it: that kernel starts from
    the fill's value instead of the output's, and the fill runs no kernel of
    its own (`loop-generate` leaves such a fill alone for this)."""
    if op is None or not isinstance(op.attributes.get(SCHEDULE),
                                    GpuScheduleAttr | ReduceScheduleAttr | WindowScheduleAttr):  # fmt: skip
        return None
    fill = op.prev_op
    while fill is not None and isinstance(fill.attributes.get(SCHEDULE), PaddingAttr):
        fill = fill.prev_op  # the copy of a padded operand, which runs in op's loads
    outputs = getattr(op, "outputs", ())
    if not isinstance(fill, linalg.FillOp) or len(outputs) != 1:
        return None
    return fill if fill.outputs[0] is outputs[0] else None


def fill_consumer(fill: linalg.FillOp) -> Operation | None:
    """The op after `fill` that may start from its value (`absorbed_fill`):
    the next one but ops marked `#ember_gpu.padding` (a tiled contraction's
    padding, placed between its fill and it by `gpu-default-schedule`)."""
    following = fill.next_op
    while following is not None and isinstance(following.attributes.get(SCHEDULE), PaddingAttr):
        following = following.next_op
    return following


def host_index(host: ValueCopier, value: int | SSAValue) -> SSAValue:
    """`value` as an `index` on the host: a constant (one per value and
    launch), or the host's copy of a value computed from arguments."""
    if isinstance(value, int):
        if value not in host.constants:
            constant = arith.ConstantOp.from_int_and_width(value, IndexType())
            host.constants[value] = host.builder.insert(constant).results[0]
        return host.constants[value]
    return host(value)


__all__ = [
    "KERNELS_MODULE",
    "KernelBuilder",
    "ValueCopier",
    "absorbed_fill",
    "fill_consumer",
    "host_index",
    "kernels_module",
    "outside_values",
    "rematerializable",
]
