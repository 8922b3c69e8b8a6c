"""`loop-plan-memory`: places every `memref.alloc` in one arena, reusing memory.

Time is the sequence of the function's top-level ops, each `loop.kernel`
counting as the ops of its region and each call of a kernel function as
that function's top-level ops (a kernel's scratch buffers are planned
with the rest: the arena is one buffer for the whole function). A kernel
function's own allocs first become arguments that each call allocates
(`kernel_buffers.py`): a buffer passed to a call is live during the
kernel's ops that use that argument. A buffer
is live from its first use to its last (an op that uses it directly,
inside a loop nest, or through a view such as `memref.reinterpret_cast`):
where its `memref.alloc` stands does not matter, so a kernel's result,
allocated in front of the kernel, is live from the nest that writes it. Buffers whose live ranges overlap must not overlap in
memory; the others may share it. Buffers are placed largest first, each at
the lowest `alignment`-aligned offset that does not collide with an
already-placed buffer it is live together with (the usual greedy
interval-colouring heuristic).

The arena becomes explicit: the function gains an argument
`%arena: memref<Nxi8> {ember.arena}` (N the arena's size, 0 without
buffers) after its inputs and outputs, and each alloc becomes
`memref.view %arena[%offset][]` at its byte offset, at the top level (in
front of the kernel that held it: the kernel captures the view, so kernels
that differ only in where their buffers lie stay equal). The function also gets
two attributes: `loop.arena_bytes` (the arena's size) and `loop.naive_bytes`
(the sum of all buffers, what it would cost without reuse). Kernels
(`ember.kernel`) and functions that have an arena already are left alone;
an alloc of a size that is not an expression over the model's symbols is
an error.

Sizes over symbols (a generic version): the arena is `memref<?xi8>` and
`loop.arena_bytes` a formula in the symbols (`"320 * S + 64"`). Static
buffers are placed first; buffers whose sizes are the same product of
symbols times a constant share one region, planned at a size of 1 and scaled
by the product (an offset is then an `arith` expression of the symbols'
values); a buffer of any other size gets a region of its own.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.loop import (
    ALIGNMENT,
    ARENA_ARG,
    KERNEL_ATTR,
    KernelOp,
    add_abi_argument,
    align,
    byte_size,
    marked_argument,
)
from ember.dialects.symbol_sizes import SymbolSizes, symbolic_size
from ember.passes.loop.fuse import VIEW_OPS
from ember.passes.loop.kernel_buffers import (
    hoist_kernel_buffers,
    kernel_argument_spans,
    kernel_functions,
)

PASS_NAME = "loop-plan-memory"


@dataclass
class Interval:
    alloc: memref.AllocOp
    size: int
    start: int
    end: int
    offset: int = -1
    symbolic_size: Dim = 0
    """The size in bytes as an expression over the symbols (`size` is its
    coefficient where it is one term, see `plan_function`)."""

    def overlaps_in_time(self, other: Interval) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass
class _Timeline:
    """When each top-level op of a function runs: `positions` maps a
    top-level op (or an op of a kernel's region) to its time; a call of a
    kernel function takes as many times as the kernel has top-level ops,
    from its own on, and `calls` holds, per such call, each argument's
    (first, last) use within the kernel."""

    positions: dict[Operation, int]
    calls: dict[Operation, list[tuple[int, int]]]
    length: int


def _timeline(func: FuncOp, kernels: dict[str, FuncOp]) -> _Timeline:
    """The function's top-level ops, each kernel replaced by its region's
    ops and each kernel call by its kernel's top-level ops."""
    positions: dict[Operation, int] = {}
    calls: dict[Operation, list[tuple[int, int]]] = {}
    spans: dict[str, tuple[int, list[tuple[int, int]]]] = {}
    time = 0
    for op in func.body.block.ops:
        if isinstance(op, KernelOp):
            for inner in list(op.body.block.ops)[:-1]:  # not the loop.yield
                positions[inner] = time
                time += 1
            continue
        positions[op] = time
        callee = kernels.get(op.callee.root_reference.data) if isinstance(op, CallOp) else None
        if callee is None:
            time += 1
            continue
        name = callee.sym_name.data
        if name not in spans:
            spans[name] = kernel_argument_spans(callee, _uses_span_in)
        length, calls[op] = spans[name]
        time += length
    return _Timeline(positions, calls, time)


def _top_level(op: Operation, positions: dict[Operation, int]) -> Operation:
    while op not in positions:
        parent = op.parent_op()
        assert parent is not None, "use outside the function body"
        op = parent
    return op


def _uses_span_in(value: SSAValue, positions: dict[Operation, int]) -> tuple[int, int]:
    """(first, last) time at which `value` or a view of it is used ((big,
    -1) if never), for a time line without kernel calls."""
    return _uses_span(value, _Timeline(positions, {}, len(positions)))


def _uses_span(value: SSAValue, timeline: _Timeline) -> tuple[int, int]:
    """(first, last) time at which `value` or a view of it is used ((big, -1) if never)."""
    first, last = timeline.length, -1
    for use in value.uses:
        top = _top_level(use.operation, timeline.positions)
        time = timeline.positions[top]
        if top in timeline.calls:
            begin, end = timeline.calls[top][use.index]
            first, last = min(first, time + begin), max(last, time + end)
        else:
            first, last = min(first, time), max(last, time)
        if isinstance(use.operation, VIEW_OPS) and use.index == 0:
            view_first, view_last = _uses_span(use.operation.results[0], timeline)
            first, last = min(first, view_first), max(last, view_last)
    return first, last


def live_intervals(func: FuncOp, kernels: dict[str, FuncOp] | None = None) -> list[Interval]:
    """The buffers `func` allocates, each with its live range; `kernels`
    (by name) are the kernel functions whose calls count as their ops."""
    timeline = _timeline(func, kernels or {})
    intervals = []
    for op, index in timeline.positions.items():
        if isinstance(op, memref.AllocOp):
            first, last = _uses_span(op.memref, timeline)
            start, end = (first, last) if last >= 0 else (index, index)
            size = _bytes(op, func)
            intervals.append(Interval(op, size if isinstance(size, int) else 0, start, end,
                                      symbolic_size=size))  # fmt: skip
    return intervals


def _bytes(alloc: memref.AllocOp, func: FuncOp) -> Dim:
    """The bytes of an alloc: its type's, or for dynamic dims the expression
    over the symbols that its sizes hold."""
    memref_type = alloc.memref.type
    assert isinstance(memref_type, MemRefType)
    if not alloc.dynamic_sizes:
        if any(d < 0 for d in memref_type.get_shape()):
            raise DiagnosticException(
                f"{PASS_NAME}: @{func.sym_name.data}: memref.alloc of {memref_type} has "
                "dynamic dims but no sizes"
            )
        return byte_size(memref_type)
    where = f"{PASS_NAME}: @{func.sym_name.data}: memref.alloc of {memref_type}"
    sizes = iter(symbolic_size(v, where) for v in alloc.dynamic_sizes)
    dims = [next(sizes) if d == DYNAMIC_INDEX else d for d in memref_type.get_shape()]
    element_bytes = byte_size(MemRefType(memref_type.element_type, []))
    return math.prod(dims) * element_bytes


class PlacedIntervals:
    """The intervals placed so far (by index), found by time without scanning
    them all.

    An interval overlaps [start, end] when it is live at `start` or begins
    in (start, end]. The first are found by walking a segment tree over
    time from the leaf `start` up (each interval is kept at the O(log T)
    nodes that tile its range), the second from a sorted list of start
    times."""

    def __init__(self, times: int):
        self.leaves = 1 << max(times - 1, 0).bit_length()
        self.cover: dict[int, list[int]] = {}
        self.starts: list[int] = []
        self.by_start: dict[int, list[int]] = {}

    def add(self, index: int, start: int, end: int) -> None:
        low, high = start + self.leaves, end + self.leaves + 1
        while low < high:
            if low & 1:
                self.cover.setdefault(low, []).append(index)
                low += 1
            if high & 1:
                high -= 1
                self.cover.setdefault(high, []).append(index)
            low, high = low >> 1, high >> 1
        if start not in self.by_start:
            bisect.insort(self.starts, start)
        self.by_start.setdefault(start, []).append(index)

    def overlapping(self, start: int, end: int) -> list[int]:
        found: list[int] = []
        node = start + self.leaves
        while node:
            found += self.cover.get(node, ())
            node >>= 1
        first = bisect.bisect_right(self.starts, start)
        for later in self.starts[first : bisect.bisect_right(self.starts, end)]:
            found += self.by_start[later]
        return found


def first_fit(offsets: np.ndarray, ends: np.ndarray, size: int) -> int:
    """The lowest offset at or after 0 where `size` bytes fit between the
    occupied ranges [offsets, ends) (ends aligned), trying the gaps in order
    of offset: what a loop over the ranges sorted by offset finds, in NumPy."""
    order = np.argsort(offsets, kind="stable")
    before = np.concatenate(([0], np.maximum.accumulate(ends[order])))
    fits = np.flatnonzero(before[:-1] + size <= offsets[order])
    return int(before[fits[0] if fits.size else len(order)])


def assign_offsets(intervals: list[Interval]) -> int:
    """Places the intervals; returns the arena size in bytes.

    Finding the conflicts costs O(log n) plus their number, and first fit
    among them runs in NumPy, so n buffers of a chain place in O(n log n);
    k buffers live at once (a Concat of k branches) still cost O(k^2), in C.
    """
    placed = PlacedIntervals(max((i.end for i in intervals), default=0) + 1)
    offsets = np.zeros(len(intervals), dtype=np.int64)
    ends = np.zeros(len(intervals), dtype=np.int64)
    order = sorted(range(len(intervals)), key=lambda i: (-intervals[i].size, intervals[i].start))
    for index in order:
        interval = intervals[index]
        conflicts = np.array(placed.overlapping(interval.start, interval.end), dtype=np.int64)
        interval.offset = first_fit(offsets[conflicts], ends[conflicts], interval.size)
        offsets[index], ends[index] = interval.offset, align(interval.offset + interval.size)
        placed.add(index, interval.start, interval.end)
    return align(max((i.offset + i.size for i in intervals), default=0))


def _one_term(size: SymExpr) -> tuple[int, Dim] | None:
    """(c, m) where `size` is c * m for a product of atoms m, else None."""
    if len(size.terms) != 1:
        return None
    ((_, coefficient),) = size.terms
    return (coefficient, size // coefficient) if coefficient > 0 else None


def symbolic_offsets(intervals: list[Interval]) -> tuple[list[Dim], Dim]:
    """Each interval's byte offset, and the arena's size, as expressions
    over the symbols. Static buffers come first, placed by `assign_offsets`.
    The buffers whose size is `c * m` for one product of symbols `m` (`N`,
    `S * S`) form one region per `m`, placed by `assign_offsets` at `m = 1`
    and scaled by `m`: buffers apart at `m = 1` are apart at every `m`, so
    they reuse memory as static ones do. Any other size gets a region of
    its own."""
    static = [i for i in intervals if isinstance(i.symbolic_size, int)]
    end: Dim = assign_offsets(static)
    offsets: dict[int, Dim] = {id(i): i.offset for i in static}
    groups: dict[Dim, list[Interval]] = {}
    alone: list[Interval] = []
    for interval in intervals:
        size = interval.symbolic_size
        if isinstance(size, SymExpr):
            split = _one_term(size)
            if split is None:
                alone.append(interval)
            else:
                interval.size = split[0]
                groups.setdefault(split[1], []).append(interval)
    for scale, members in sorted(groups.items(), key=lambda item: str(item[0])):
        region = assign_offsets(members)
        for interval in members:
            offsets[id(interval)] = end + interval.offset * scale
        end = end + region * scale
    for interval in alone:
        offsets[id(interval)] = end
        end = end + (interval.symbolic_size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    return [offsets[id(i)] for i in intervals], end


def plan_function(func: FuncOp, kernels: dict[str, FuncOp] | None = None) -> tuple[Dim, Dim]:
    intervals = live_intervals(func, kernels)
    offsets, arena = symbolic_offsets(intervals)
    arena_arg = add_abi_argument(func, ARENA_ARG, arena if isinstance(arena, int) else None)
    block = func.body.block
    constant_offsets = sorted({o for o in offsets if isinstance(o, int)})
    constants = [arith.ConstantOp(IntegerAttr(offset, IndexType())) for offset in constant_offsets]
    block.insert_ops_before(constants, block.first_op)  # type: ignore[arg-type]
    by_offset: dict[Dim, SSAValue] = {o: c.result for o, c in zip(constant_offsets, constants)}
    sizes = SymbolSizes(block, {}, memref.DimOp, PASS_NAME)
    for offset in offsets:
        if offset not in by_offset:
            by_offset[offset] = sizes.size(offset)
    for interval, offset in zip(intervals, offsets):
        alloc = interval.alloc
        result_type = alloc.memref.type
        assert isinstance(result_type, MemRefType)
        view = memref.ViewOp(arena_arg, by_offset[offset], alloc.dynamic_sizes, result_type)
        view.result.name_hint = alloc.memref.name_hint
        top_level = alloc
        while top_level.parent is not block:
            top_level = top_level.parent_op()  # type: ignore[assignment]
        block.insert_op_before(view, top_level)
        alloc.memref.replace_all_uses_with(view.result)
        Rewriter.erase_op(alloc)
    naive: Dim = sum(
        (s + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT for s in (i.symbolic_size for i in intervals)
    )
    func.attributes["loop.arena_bytes"] = size_attribute(arena)
    func.attributes["loop.naive_bytes"] = size_attribute(naive)
    return arena, naive


def size_attribute(size: Dim) -> IntegerAttr | StringAttr:
    """A byte count as a function attribute: an i64, or for a size that depends
    on the symbols, the expression's text (`parse_dim` reads it back)."""
    return IntegerAttr(size, i64) if isinstance(size, int) else StringAttr(str(size))


class PlanMemoryPass(ModulePass):
    """Places `memref.alloc` buffers in the arena with liveness-based reuse."""

    name = "loop-plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        hoist_kernel_buffers(op)
        kernels = kernel_functions(op)
        for func in list(op.walk()):
            if (
                isinstance(func, FuncOp)
                and not func.is_declaration
                and KERNEL_ATTR not in func.attributes
                and marked_argument(func, ARENA_ARG) is None
            ):
                plan_function(func, kernels)
