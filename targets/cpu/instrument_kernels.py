"""`loop-instrument-kernels`: time every kernel call of the entry function.

Runs after `loop-outline-kernels`, and only when a profile is asked for
(`ember.compile(..., profile=True)`, `ember bench --profile`): without it
the generated code has no timing in it at all. Each `func.call` of a kernel
function (`ember.kernel`) in a function that is not itself a kernel gets a
`loop.timestamp` before and after it, and adds one call and the cycles
between the two readings to that kernel function's counters:

    %t0 = loop.timestamp : i64
    func.call @main_kernel0(...)
    %t1 = loop.timestamp : i64
    counters[k, 0] += 1;  counters[k, 1] += %t1 - %t0

The counters (`memref<Kx2xi64>`, K the kernel functions called, in the
order of their first call) live at the end of the arena, past what
`loop-plan-memory` planned, so the ABI stays as it is: the arena grows
(its argument type and `loop.arena_bytes`), and whoever owns the arena
reads the counters back. They accumulate over calls until the owner zeroes
them. The function records where they are and what each kernel costs
statically (`kernel_cost`): `ember.profile_offset` (bytes into the arena)
and `ember.profile`, one dictionary per kernel with its `name`, `label`,
`flops` and `bytes` per call, and `source`: the model's nodes its calls run
(`call_sites_description`). Kernels that share one function share its
counters. A function that calls no kernel is left alone. With `trace`,
each call also gets a `loop.trace` of its two readings and its row in
`ember.profile`, which appends it to the runtime's trace while one is
recorded (`ember.targets.cpu.trace`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i8,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph.dims import parse_dim
from ember.dialects.loop import (
    ARENA_ARG,
    KERNEL_ATTR,
    TimestampOp,
    TraceOp,
    add_abi_argument,
    align,
    marked_argument,
)
from ember.dialects.source_names import SOURCE_NAMES_ATTR, describe_names
from ember.passes.loop.kernel_cost import kernel_cost

PROFILE_ATTR = "ember.profile"
"""On the instrumented function: one dictionary per counted kernel function."""
PROFILE_OFFSET_ATTR = "ember.profile_offset"
"""On the instrumented function: the counters' byte offset in the arena."""
COUNTERS_PER_KERNEL = 2
"""calls, cycles (int64 each)."""
ARENA_BYTES_ATTR = "loop.arena_bytes"


def _grow_arena(func: FuncOp, nbytes: int) -> tuple[SSAValue, int]:
    """The arena argument of `func`, grown by `nbytes` at its end (one is
    added if there is none), and the offset where the new bytes start."""
    arena = marked_argument(func, ARENA_ARG)
    if arena is None:
        func.attributes[ARENA_BYTES_ATTR] = IntegerAttr(nbytes, i64)
        return add_abi_argument(func, ARENA_ARG, nbytes), 0
    assert isinstance(arena.type, MemRefType)
    (size,) = arena.type.get_shape()
    for use in arena.uses:
        if not isinstance(use.operation, memref.ViewOp):
            raise DiagnosticException(
                f"loop-instrument-kernels: @{func.sym_name.data}: the arena is used by "
                f"{use.operation.name}, not only by memref.view; cannot grow it for the counters"
            )
    if size == DYNAMIC_INDEX:  # sized by a formula: the counters go first
        return _grow_arena_in_front(func, arena, nbytes), 0
    offset = align(size)
    grown = func.body.block.insert_arg(MemRefType(i8, [offset + nbytes]), arena.index)
    grown.name_hint = arena.name_hint
    arena.replace_all_uses_with(grown)
    func.body.block.erase_arg(arena)
    func.function_type = FunctionType.from_lists(
        [a.type for a in func.body.block.args], func.function_type.outputs.data
    )
    func.attributes[ARENA_BYTES_ATTR] = IntegerAttr(offset + nbytes, i64)
    return grown, offset


def _grow_arena_in_front(func: FuncOp, arena: SSAValue, nbytes: int) -> SSAValue:
    """An arena of run-time size (its bytes a formula over the symbols,
    `loop.arena_bytes`) grown by `nbytes` at its start: every view of it
    moves up by that much (aligned), and the formula grows by as much."""
    shift = align(nbytes)
    for use in list(arena.uses):
        view = use.operation
        assert isinstance(view, memref.ViewOp)
        moved = arith.ConstantOp(IntegerAttr(shift, IndexType()))
        total = arith.AddiOp(view.byte_shift, moved.result)
        Rewriter.insert_op([moved, total], InsertPoint.before(view))
        view.operands = [view.source, total.result, *view.operands[2:]]
    formula = func.attributes.get(ARENA_BYTES_ATTR)
    if isinstance(formula, StringAttr):
        func.attributes[ARENA_BYTES_ATTR] = StringAttr(str(parse_dim(formula.data) + shift))
    return arena


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def _count(
    counters: SSAValue, slot: SSAValue, column: SSAValue, amount: SSAValue
) -> list[Operation]:
    """counters[slot, column] += amount."""
    load = memref.LoadOp.get(counters, [slot, column])
    total = arith.AddiOp(load.res, amount)
    return [load, total, memref.StoreOp.get(total.result, counters, [slot, column])]


def instrument_function(func: FuncOp, kernels: dict[str, FuncOp], trace: bool = False) -> None:
    """Times each kernel call of `func` (see the module docstring)."""
    calls = [op for op in func.body.walk()
             if isinstance(op, CallOp) and op.callee.root_reference.data in kernels]  # fmt: skip
    if not calls:
        return
    order = list(dict.fromkeys(call.callee.root_reference.data for call in calls))
    arena, offset = _grow_arena(func, len(order) * COUNTERS_PER_KERNEL * 8)
    block = func.body.block
    counters_type = MemRefType(i64, [len(order), COUNTERS_PER_KERNEL])
    offset_op, zero, one_index = _index(offset), _index(0), _index(1)
    one = arith.ConstantOp(IntegerAttr(1, i64))
    view = memref.ViewOp(arena, offset_op.result, [], counters_type)
    view.result.name_hint = "profile_counters"
    slots = [_index(k) for k in range(len(order))]
    block.insert_ops_before([offset_op, zero, one_index, one, view, *slots], block.first_op)  # type: ignore[arg-type]
    slot_of = {name: slot.result for name, slot in zip(order, slots)}
    row_of = {name: row for row, name in enumerate(order)}
    for call in calls:
        parent = call.parent_block()
        assert parent is not None
        start, end = TimestampOp(), TimestampOp()
        cycles = arith.SubiOp(end.time, start.time)
        slot = slot_of[call.callee.root_reference.data]
        parent.insert_op_before(start, call)
        traced = [TraceOp(row_of[call.callee.root_reference.data], start.time, end.time)]
        parent.insert_ops_after(
            [end, cycles, *_count(view.result, slot, zero.result, one.result),
             *_count(view.result, slot, one_index.result, cycles.result),
             *(traced if trace else [])], call)  # fmt: skip
    costs = [kernel_cost(kernels[name]) for name in order]
    sources = [call_sites_description(kernels[name]) for name in order]
    func.attributes[PROFILE_OFFSET_ATTR] = IntegerAttr(offset, i64)
    func.attributes[PROFILE_ATTR] = ArrayAttr(
        [
            DictionaryAttr(
                {
                    "name": StringAttr(c.name),
                    "label": StringAttr(c.label),
                    "flops": IntegerAttr(c.flops, i64),
                    "bytes": IntegerAttr(c.bytes, i64),
                    "source": StringAttr(source),
                }
            )
            for c, source in zip(costs, sources, strict=True)
        ]  # fmt: skip
    )


def call_sites_description(kernel: FuncOp) -> str:
    """The model's nodes a kernel function runs, from its call sites'
    source names: `conv1 + relu1`, `conv2 + relu2 and 3 more` when it serves
    4 call sites, '' when no call site has a name."""
    sites = kernel.attributes.get(SOURCE_NAMES_ATTR)
    if not isinstance(sites, ArrayAttr):
        return ""
    named = [[n.data for n in site.data] for site in sites.data
             if isinstance(site, ArrayAttr) and site.data]  # fmt: skip
    if not named:
        return ""
    first = describe_names(named[0])
    return f"{first} and {len(named) - 1} more" if len(named) > 1 else first


@dataclass(frozen=True)
class InstrumentKernelsPass(ModulePass):
    """Brackets each kernel call with cycle-counter readings that accumulate
    calls and cycles per kernel function in counters at the end of the arena."""

    name = "loop-instrument-kernels"

    trace: bool = False
    """Also append each call to the run-time trace (`loop.trace`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.ops if isinstance(f, FuncOp)]
        kernels = {f.sym_name.data: f for f in functions if KERNEL_ATTR in f.attributes}
        for func in functions:
            if KERNEL_ATTR not in func.attributes and not func.is_declaration:
                instrument_function(func, kernels, self.trace)


__all__ = ["PROFILE_ATTR", "PROFILE_OFFSET_ATTR", "InstrumentKernelsPass"]
