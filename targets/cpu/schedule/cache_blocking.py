"""Cache blocking of a micro-kernel contraction: which columns (n) its
blocks sweep before moving to the next rows.

A micro-kernel contraction runs its blocks of MR x NR outputs row block by
row block (m), each reading a panel of every operand that depends on n and
not on m across all the columns: the weights of a convolution or the B of a
matmul, which this module calls the panel operand. One row block reads all
of it. Where the panel operand fits in half the L2 cache it stays there
from one row block to the next; where it does not, every row block streams
it from L3 or memory again: Inception-v1's 832 -> 384 1x1 convolution at
6x6 (1.3 MB of weights) read its weights six times per call, and both
threads of a two-thread run waited on that stream.

`column_tile` then tiles n: a tile of columns whose share of the panel
operand fits the half of L2, so that its tile loop (outermost, and parallel:
threads split the tiles before the rows) runs every row block over one tile's panel
while it is in cache. What that costs is the other side's reuse: the row
operands (those that depend on m and not on n, the activations, M x K) are
read once per tile, N / NC times, where the panel operand (K x N) was read
once per row block, M / MR times: (N / NC) M K against (M / MR) K N, less
whenever a tile is wider than a block is high (NC >= NR > MR here). A tile
that divides n is preferred (a tile that does not leaves a remainder tile,
a second copy of the nest), if it is at least half the largest one that
fits.

`aliased_panels` finds the panel operands whose rows lie a multiple of 4 KiB
apart (a row of 1,024 floats, or 2,048): a micro-kernel reads one row of
the panel per step of the reduction, so every step lands in the same L1 set
and the cache holds a handful of them. On an AVX-512 Xeon a 1024^3 matmul
ran at 85 GFLOP/s this way and at 178 with rows of 1,040 floats. The default
schedule packs such a panel (`pack`), tile of columns by tile of columns,
rows as wide as the tile (`packed_column_tile`: an odd number of blocks):
a copy per call, which rows enough to share it pay for.
"""

from __future__ import annotations

import math

from xdsl.ir.affine import AffineDimExpr, AffineMap

from ember.dialects.schedule import PARALLEL, IterationSpace, MicroKernel, map_depends_on
from ember.targets.cpu.schedule.cpu_target import CpuTarget


def _footprint(space: IterationSpace, amap: AffineMap, element_bytes: int) -> int:
    """The bytes an operand's reads cover: the product of the extents of the
    dims its map depends on (for the weights of a convolution or a matmul's
    B, exactly their size)."""
    extents = [e for d, e in enumerate(space.extents) if map_depends_on(amap, d)]
    return math.prod(extents) * element_bytes


def panel_operands(space: IterationSpace, m: int, n: int) -> list[int]:
    """The input numbers of the panel operands of the micro-kernel over
    (`m`, `n`): those that depend on n and not on m."""
    return [i for i, amap in enumerate(space.maps[: space.inputs])
            if map_depends_on(amap, n) and not map_depends_on(amap, m)]  # fmt: skip


def column_tile(space: IterationSpace, m: int, n: int, rows: int, block: int,
                target: CpuTarget, element_bytes: int) -> int:  # fmt: skip
    """The tile of n for the micro-kernel over (`m`, `n`) with blocks of
    `rows` x `block`, or 0 for none (see the module docstring)."""
    panels = [space.maps[i] for i in panel_operands(space, m, n)]
    if not panels:
        return 0
    budget = target.l2_bytes // 2
    panel_bytes = max(_footprint(space, amap, element_bytes) for amap in panels)
    columns = space.extents[n]
    if panel_bytes <= budget:
        return 0
    # How many times the untiled nest reads the whole panel operand: once per
    # row block and per point of the other parallel dims it does not depend on.
    sweeps = math.prod(
        -(-extent // rows) if d == m else extent
        for d, extent in enumerate(space.extents)
        if space.iterators[d] == PARALLEL
        and d != n
        and not any(map_depends_on(a, d) for a in panels)
    )
    largest = max(budget // (panel_bytes // columns) // block, 1) * block
    if sweeps <= 1 or largest >= columns:
        return 0
    dividing = [t for t in range(block, largest + 1, block) if columns % t == 0]
    return max(dividing) if dividing and 2 * max(dividing) >= largest else largest


def rows_fit_in_cache(space: IterationSpace, m: int, n: int, target: CpuTarget,
                      element_bytes: int) -> bool:  # fmt: skip
    """Whether the row operands of the micro-kernel over (`m`, `n`) (those
    that depend on m and not on n: the activations) fit in half the L2
    cache together, so that reading them once per tile of columns costs
    L2 reads, not memory's."""
    rows = [
        a for a in space.maps[: space.inputs] if map_depends_on(a, m) and not map_depends_on(a, n)
    ]
    return sum(_footprint(space, amap, element_bytes) for amap in rows) <= target.l2_bytes // 2


ALIASING_STRIDE = 4096
"""Bytes between rows that map them to the same L1 cache set (4 KiB pages,
64 sets of 64-byte lines)."""


def aliased_panels(space: IterationSpace, m: int, n: int, element_bytes: int) -> list[int]:
    """The input numbers of the panel operands (see the module docstring)
    whose rows (the columns of n) lie a multiple of `ALIASING_STRIDE` bytes
    apart."""
    panels = []
    for index in panel_operands(space, m, n):
        results = space.maps[index].results
        last = results[-1] if results else None
        if (isinstance(last, AffineDimExpr) and last.position == n
                and (space.extents[n] * element_bytes) % ALIASING_STRIDE == 0):  # fmt: skip
            panels.append(index)
    return panels


LONG_PANEL_ROW_BLOCKS = 32
"""Row blocks that must share a per-call copy of a long panel (`long_panels`)."""


def long_panels(space: IterationSpace, micro: MicroKernel, target: CpuTarget,
                element_bytes: int) -> list[int]:  # fmt: skip
    """The input numbers of the panel operands of `micro` whose panel for
    one block (K x NR) is larger than the L2 cache, read by at least
    `LONG_PANEL_ROW_BLOCKS` row blocks, where n is whole vectors. No tile of
    columns keeps such a panel in cache: every row block streams it again,
    as K short rows N elements apart, which the prefetchers follow badly;
    copied per call into one contiguous stream per block, it runs at the
    peak. On a Zen 4
    (1 MiB of L2; NumPy's sgemm 102 GFLOP/s), MatMuls of two activations:
    512 x 16384 x 512 from 78 to 108 GFLOP/s, 512 x 32768 x 128 from 86 to
    107, 512 x 8192 x 512 from 97 to 107, 256 x 16384 x 256 from 97 to 103;
    with fewer row blocks the copy stops paying (128 x 16384 x 1024: 94 with
    or without), and where a block's panel fits the L2 it costs more than
    it saves (96 x 4096 x 512: 108 without, 103 with)."""
    columns = space.extents[micro.n]
    if -(-space.extents[micro.m] // micro.rows) < LONG_PANEL_ROW_BLOCKS or columns % micro.width:
        return []
    return [i for i in panel_operands(space, micro.m, micro.n)
            if _footprint(space, space.maps[i], element_bytes) // columns * micro.columns
            > target.l2_bytes]  # fmt: skip


def packed_column_tile(columns: int, block: int) -> int:
    """The tile of n for a packed panel: the widest odd number of blocks up to
    `columns` (up to the cache-blocking tile, where there is one), so that
    the packed rows spread over as many cache sets as a block's width
    allows."""
    blocks = max(columns // block, 1)
    return (blocks if blocks % 2 else max(blocks - 1, 1)) * block


__all__ = [
    "ALIASING_STRIDE",
    "LONG_PANEL_ROW_BLOCKS",
    "aliased_panels",
    "column_tile",
    "long_panels",
    "packed_column_tile",
    "panel_operands",
    "rows_fit_in_cache",
]
