"""The memory plan of a model's entry function, read without changing it.

`loop-plan-memory` places every buffer in one arena (see its docstring).
Shown the module just before that pass, `memory_plan` computes the same
plan on a copy, with the pass's own functions (`live_intervals`,
`symbolic_offsets`), and keeps what the picture needs: each buffer's
name, bytes, arena offset and live range in the function's time steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from ember.dialects.loop import ALIGNMENT, ARENA_ARG, KERNEL_ATTR, marked_argument
from ember.passes.loop.kernel_buffers import hoist_kernel_buffers, kernel_functions
from ember.passes.loop.plan_memory import live_intervals, symbolic_offsets


@dataclass(frozen=True)
class Buffer:
    name: str
    bytes: int
    offset: int
    start: int
    end: int
    """The first and last time step (inclusive) in which it is live."""


@dataclass(frozen=True)
class MemoryPlan:
    function: str
    buffers: list[Buffer]
    arena_bytes: int
    naive_bytes: int
    """What the buffers would take without reuse (each aligned)."""
    steps: int
    symbolic: bool = False
    """Sizes over the model's symbols: no picture, only the formula."""
    formula: str = ""


def memory_plan(module: ModuleOp) -> MemoryPlan | None:
    """The plan `loop-plan-memory` makes for `module`'s entry function
    (`module` is left alone); None where it has none to plan."""
    copy = module.clone()
    hoist_kernel_buffers(copy)
    kernels = kernel_functions(copy)
    for func in copy.walk():
        if (
            isinstance(func, FuncOp)
            and not func.is_declaration
            and KERNEL_ATTR not in func.attributes
            and marked_argument(func, ARENA_ARG) is None
        ):
            return _plan(func, kernels)
    return None


def _plan(func: FuncOp, kernels: dict[str, FuncOp]) -> MemoryPlan:
    intervals = live_intervals(func, kernels)
    offsets, arena = symbolic_offsets(intervals)
    naive = sum((i.symbolic_size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT for i in intervals)
    name = func.sym_name.data
    if not isinstance(arena, int) or not all(isinstance(o, int) for o in offsets):
        return MemoryPlan(name, [], 0, 0, 0, symbolic=True, formula=str(arena))
    buffers = [
        Buffer(
            interval.alloc.memref.name_hint or f"buffer{index}",
            interval.size,
            int(offset),
            interval.start,
            interval.end,
        )  # fmt: skip
        for index, (interval, offset) in enumerate(zip(intervals, offsets))
    ]
    steps = max((b.end for b in buffers), default=0) + 1
    return MemoryPlan(name, buffers, arena, int(naive), steps)


__all__ = ["Buffer", "MemoryPlan", "memory_plan"]
