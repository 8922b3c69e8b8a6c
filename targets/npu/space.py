"""The NPU's space of schedules for one product: what `ember tune --target
npu` searches.

A point is a `MatmulSchedule`: a block of `block_m` x `block_n` output
tiles (each at most the product's row tiles and column tiles), `buffers`
scratchpad slots (`BUFFERS`) and `regions` accumulator regions
(`REGIONS`). The space holds every point whose regions and an int8
bias's slots fit the accumulator (`matmul.fits`, the rule the lowering
enforces) and whose slots the scratchpad allocator places
(`matmul.scratchpad_plan`); the default schedule (`default_schedule`,
blocks at two buffers and two regions) is one of them.

`by_estimate` orders points as the search tries them when it cannot try
them all: by `estimate_cycles` (per k step of each block, the longer of
its loads and its gemms), then larger blocks first (fewer blocks: fewer
drains of the array before each block's bias and store), then the
default's two buffers and two regions before the others.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember.dialects.npu.machine import NpuParams, NpuProgramError
from ember.lowering.graph_to_npu.matmul import (
    Matmul,
    MatmulSchedule,
    estimate_cycles,
    fits,
    scratchpad_plan,
)

BUFFERS = (1, 2, 3, 4)
"""Scratchpad slots: one (no overlap of loads and gemms) to four."""
REGIONS = (1, 2, 3, 4)
"""Accumulator regions: one (a block's stores hold up the next) to four."""


def _tiles(size: int, dim: int) -> int:
    return -(-size // dim)


def schedule_space(product: Matmul, params: NpuParams) -> list[MatmulSchedule]:
    """Every schedule of `product` the accumulator and scratchpad hold (see
    the module docstring)."""
    tiles_m = _tiles(product.m, params.dim)
    tiles_n = len(product.column_tiles(params.dim))
    points = []
    for buffers in BUFFERS:
        for regions in REGIONS:
            for block_m in range(1, tiles_m + 1):
                if not fits(MatmulSchedule(block_m, 1, buffers, regions), params, product):
                    break
                for block_n in range(1, tiles_n + 1):
                    schedule = MatmulSchedule(block_m, block_n, buffers, regions)
                    if not fits(schedule, params, product):
                        break
                    if _scratchpad_holds(product, schedule, params):
                        points.append(schedule)
    return points


def _scratchpad_holds(product: Matmul, schedule: MatmulSchedule, params: NpuParams) -> bool:
    try:
        scratchpad_plan(product, schedule, params)
    except NpuProgramError:
        return False
    return True


def by_estimate(product: Matmul, points: Sequence[MatmulSchedule],
                params: NpuParams) -> list[MatmulSchedule]:  # fmt: skip
    """`points` in the order the search tries them (see the module docstring)."""

    estimates: dict[tuple[int, int], int] = {}  # a block's: the same at any buffers and regions

    def key(schedule: MatmulSchedule) -> tuple[int, int, int, int]:
        block = (schedule.block_m, schedule.block_n)
        if block not in estimates:
            estimates[block] = estimate_cycles(product, schedule, params)
        apart = abs(schedule.buffers - 2) + abs(schedule.regions - 2)
        return (estimates[block],
                -schedule.block_m * schedule.block_n, apart, schedule.block_m)  # fmt: skip

    return sorted(points, key=key)


__all__ = ["BUFFERS", "REGIONS", "by_estimate", "schedule_space"]
