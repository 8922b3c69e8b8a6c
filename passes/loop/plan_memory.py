"""`loop-plan-memory`: places every `loop.alloc` in one arena, reusing memory.

A buffer is live from its `loop.alloc` to the last top-level op of the
function that uses it (directly, inside a loop nest, or through a
`loop.reshape` view). Buffers whose live ranges overlap must not overlap in
memory; the others may share it. Buffers are placed largest first, each at
the lowest `alignment`-aligned offset that does not collide with an
already-placed buffer it is live together with (the usual greedy
interval-colouring heuristic). The function gets two attributes:
`loop.arena_bytes` (the arena's size) and `loop.naive_bytes` (the sum of all
buffers, what it would cost without reuse).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from ember.dialects.loop import AllocOp, ReshapeOp, align, byte_size


@dataclass
class Interval:
    alloc: AllocOp
    size: int
    start: int
    end: int
    offset: int = -1

    def overlaps_in_time(self, other: Interval) -> bool:
        return self.start <= other.end and other.start <= self.end


def _top_level_index(op: Operation, positions: dict[Operation, int]) -> int:
    while op not in positions:
        parent = op.parent_op()
        assert parent is not None, "use outside the function body"
        op = parent
    return positions[op]


def _last_use(value: SSAValue, positions: dict[Operation, int]) -> int:
    last = -1
    for use in value.uses:
        last = max(last, _top_level_index(use.operation, positions))
        if isinstance(use.operation, ReshapeOp):
            last = max(last, _last_use(use.operation.result, positions))
    return last


def live_intervals(func: FuncOp) -> list[Interval]:
    ops = list(func.body.block.ops)
    positions = {op: index for index, op in enumerate(ops)}
    intervals = []
    for index, op in enumerate(ops):
        if isinstance(op, AllocOp):
            end = max(index, _last_use(op.result, positions))
            intervals.append(Interval(op, byte_size(op.result.type), index, end))
    return intervals


def assign_offsets(intervals: list[Interval]) -> int:
    """Places the intervals; returns the arena size in bytes."""
    placed: list[Interval] = []
    for interval in sorted(intervals, key=lambda i: (-i.size, i.start)):
        conflicts = sorted(
            (p for p in placed if p.overlaps_in_time(interval)), key=lambda p: p.offset
        )
        offset = 0
        for other in conflicts:
            if offset + interval.size <= other.offset:
                break
            offset = max(offset, align(other.offset + other.size))
        interval.offset = offset
        placed.append(interval)
    return align(max((i.offset + i.size for i in placed), default=0))


def plan_function(func: FuncOp) -> tuple[int, int]:
    intervals = live_intervals(func)
    arena = assign_offsets(intervals)
    for interval in intervals:
        interval.alloc.offset = IntegerAttr(interval.offset, i64)
    naive = sum(align(i.size) for i in intervals)
    func.attributes["loop.arena_bytes"] = IntegerAttr(arena, i64)
    func.attributes["loop.naive_bytes"] = IntegerAttr(naive, i64)
    return arena, naive


class PlanMemoryPass(ModulePass):
    """Assigns arena offsets to `loop.alloc` buffers with liveness-based reuse."""

    name = "loop-plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp) and not func.is_declaration:
                plan_function(func)
