"""A kernel as a loop-level function: loops over blocks, thread loops per phase.

`kernel_to_function` expects the kernel after `keep_per_thread_values` (and
`rotate_loops`, which keeps what follows true): no
value crosses from one phase to another except through memory, every id op
stands at the top of the entry block, and no barrier-holding op has results.
It then only cuts: each phase's ops are cloned into a nest of thread loops
(z, y, x; x innermost), `UNIFORM` ops once per block outside them,
`PER_THREAD` ops into each phase that uses them, and each barrier-holding
`scf.for`/`scf.if` is rebuilt around the fission of its body.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, NoneAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriteWalker,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.ember_gpu import SharedOp, is_shared
from ember.lowering.gpu_to_loop.phases import PASS, Kind, Phases, free_values, kernel_name

SIZE_ARGUMENTS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
"""The index arguments a lowered kernel takes after the kernel's own."""

_DIMS = ("x", "y", "z")
ValueMap = dict[SSAValue, SSAValue]


class _DropSharedSpace(TypeConversionPattern):
    """Shared memory is ordinary memory on the CPU: memory space 3 goes."""

    @attr_type_rewrite_pattern
    def convert_type(self, typ: MemRefType) -> MemRefType | None:
        if not is_shared(typ):
            return None
        return MemRefType(typ.element_type, typ.shape, typ.layout, NoneAttr())


def _loop_nest(
    into: Block, zero: SSAValue, one: SSAValue, sizes: Sequence[SSAValue], names: Sequence[str]
) -> list[Block]:
    """`scf.for` from 0 to each size, the first outermost, appended to `into`;
    their bodies, outermost first, still without terminators (`_close`)."""
    bodies: list[Block] = []
    for size, name in zip(sizes, names, strict=True):
        body = Block(arg_types=[IndexType()])
        body.args[0].name_hint = name
        (bodies[-1] if bodies else into).add_op(scf.ForOp(zero, size, one, [], body))
        bodies.append(body)
    return bodies


def _close(bodies: Sequence[Block]) -> None:
    for body in bodies:
        body.add_op(scf.YieldOp())


class _Fission:
    """The state of one kernel's lowering: its phases and the loops' bounds."""

    def __init__(
        self, kernel: gpu.FuncOp, block_sizes: Sequence[SSAValue], zero: SSAValue, one: SSAValue
    ):
        self.kernel = kernel
        self.phases = Phases(kernel)
        self.block_sizes = block_sizes
        self.zero, self.one = zero, one
        self.thread_ids: dict[str, SSAValue] = {
            op.dimension.data: op.result
            for op in kernel.body.block.ops
            if isinstance(op, gpu.ThreadIdOp)
        }

    def block(self, block: Block, into: Block, scope: ValueMap) -> None:
        """Append the fission of `block` (its terminator left out) to `into`."""
        phase: list[Operation] = []
        for op, kind in self.phases.ops(block):
            if kind is Kind.PHASE:
                phase.append(op)
            elif kind is Kind.UNIFORM:
                if op.results and all(r in scope for r in op.results):
                    continue  # ids, sizes and shared buffers: given
                into.add_op(op.clone(value_mapper=scope))
            elif kind is Kind.BARRIER:
                self.thread_loops(phase, into, scope)
                phase = []
                self.barrier_holder(op, into, scope)
        self.thread_loops(phase, into, scope)

    def barrier_holder(self, op: Operation, into: Block, scope: ValueMap) -> None:
        """Rebuild a barrier-holding `scf.for`/`scf.if` around its bodies' fission."""
        if isinstance(op, scf.ForOp):
            iv = op.body.block.args[0]
            body = Block(arg_types=[iv.type])
            body.args[0].name_hint = iv.name_hint
            self.block(op.body.block, body, {**scope, iv: body.args[0]})
            _close([body])
            into.add_op(scf.ForOp(scope[op.lb], scope[op.ub], scope[op.step], [], body))
        elif isinstance(op, scf.IfOp):
            regions = [self._region(region, scope) for region in op.regions]
            into.add_op(scf.IfOp(scope[op.cond], [], *regions))
        # a gpu.barrier: the cut between two phases is all it leaves

    def _region(self, region: Region, scope: ValueMap) -> Region:
        if not region.blocks:
            return Region()
        body = Block()
        self.block(region.block, body, dict(scope))
        _close([body])
        return Region(body)

    def thread_loops(self, phase: list[Operation], into: Block, scope: ValueMap) -> None:
        """One nest of thread loops running `phase`'s ops for every thread."""
        if not phase:
            return
        sizes = self.block_sizes[::-1]
        names = [self.thread_ids[d].name_hint or f"t{d}" if d in self.thread_ids else f"t{d}"
                 for d in "zyx"]  # fmt: skip
        bodies = _loop_nest(into, self.zero, self.one, sizes, names)
        local = dict(scope)
        for dim, body in zip("zyx", bodies, strict=True):
            if dim in self.thread_ids:
                local[self.thread_ids[dim]] = body.args[0]
        innermost = bodies[-1]
        for op in phase:
            for value in free_values(op):
                self._materialize(value, innermost, local)
            innermost.add_op(op.clone(value_mapper=local))
        _close(bodies)

    def _materialize(self, value: SSAValue, body: Block, local: ValueMap) -> None:
        """Make `value` (a `PER_THREAD` one, if not mapped yet) available in `body`."""
        if value in local:
            return
        owner = value.owner
        if not isinstance(owner, Operation) or self.phases.kinds.get(owner) is not Kind.PER_THREAD:
            raise DiagnosticException(
                f"{PASS}: {kernel_name(self.kernel)}: internal error: a value defined by "
                f"{getattr(owner, 'name', 'a block')} is used in another phase without storage"
            )
        for operand in owner.operands:
            self._materialize(operand, body, local)
        body.add_op(owner.clone(value_mapper=local))


def _index(block: Block, value: int) -> SSAValue:
    op = arith.ConstantOp.from_int_and_width(value, IndexType())
    block.add_op(op)
    return op.result


def kernel_to_function(kernel: gpu.FuncOp, capacity: int) -> func.FuncOp:
    """The loop-level function running `kernel` for a whole launch.

    Its arguments are the kernel's, then `SIZE_ARGUMENTS`. It runs every
    block (z, y, x) one after another and, within a block, each phase for
    every thread before the next phase; a launch of more than `capacity`
    threads per block (the size of the per-thread storage) runs nothing,
    as CUDA runs nothing of a launch it rejects.
    """
    inputs: list[Attribute] = [*kernel.function_type.inputs.data, *[IndexType()] * 6]
    function = func.FuncOp(kernel.sym_name.data, (inputs, []))
    entry = function.body.block
    arguments = list(entry.args)
    for argument, name in zip(arguments[-6:], SIZE_ARGUMENTS, strict=True):
        argument.name_hint = name
    grid, block_sizes = arguments[-6:-3], arguments[-3:]
    scope: ValueMap = {}
    for old, new in zip(kernel.body.block.args, arguments, strict=False):
        scope[old] = new
        new.name_hint = old.name_hint
    zero, one = _index(entry, 0), _index(entry, 1)
    fission = _Fission(kernel, block_sizes, zero, one)
    for op in kernel.body.block.ops:
        if isinstance(op, SharedOp):
            scope[op.buffer] = _alloca(entry, op)
        elif isinstance(op, (gpu.BlockDimOp, gpu.GridDimOp)):
            sizes = grid if isinstance(op, gpu.GridDimOp) else block_sizes
            scope[op.result] = sizes[_DIMS.index(op.dimension.data)]

    plane = arith.MuliOp(block_sizes[0], block_sizes[1])
    threads = arith.MuliOp(plane, block_sizes[2])
    fits = arith.CmpiOp(threads, _index(entry, capacity), "ule")
    for op in (plane, threads, fits):
        entry.add_op(op)
    run = Block()
    entry.add_op(scf.IfOp(fits, [], Region(run)))
    block_ids = {op.dimension.data: op.result for op in kernel.body.block.ops
                 if isinstance(op, gpu.BlockIdOp)}  # fmt: skip
    names = [block_ids[d].name_hint or f"b{d}" if d in block_ids else f"b{d}" for d in "zyx"]
    blocks = _loop_nest(run, zero, one, grid[::-1], names)
    for dim, body in zip("zyx", blocks, strict=True):
        if dim in block_ids:
            scope[block_ids[dim]] = body.args[0]
    fission.block(kernel.body.block, blocks[-1], scope)
    _close([*blocks, run])
    entry.add_op(func.ReturnOp())
    PatternRewriteWalker(_DropSharedSpace()).rewrite_region(function.body)
    return function


def _alloca(entry: Block, shared: SharedOp) -> SSAValue:
    buffer_type = shared.buffer.type
    assert isinstance(buffer_type, MemRefType)
    alloca = memref.AllocaOp.get(buffer_type.element_type, shape=buffer_type.get_shape())
    alloca.memref.name_hint = shared.buffer.name_hint
    entry.add_op(alloca)
    return alloca.memref


__all__ = ["SIZE_ARGUMENTS", "kernel_to_function"]
