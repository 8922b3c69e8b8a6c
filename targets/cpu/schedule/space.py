"""The CPU's space of schedules for one structured op: what `ember tune` searches.

A point of the space is a value for each of its *knobs*, each knob a short
list of choices made from the op's iteration space and the CPU:

- `order`: the default loop order (`default_loop_order`, or the
  heuristics' reorder), and each order made from it by moving one dim
  (outward or inward) to another place;
- `tile{d}` for each dim d of extent 4 or more: untiled, or a power of two
  (a multiple of the vector width along the output's innermost dim) below
  its extent, and the default's tile;
- `unroll` (1, 2, 4, 8) for ops that run as plain loops; their `vector`
  hint stays the default's (none: LLVM's own choice, which interleaves; a
  forced width LLVM cannot follow is a warning at every compile);
- `micro`: for a contraction, no micro-kernel, or one over (m, n) with MR
  rows by NR / W vectors, every (m, MR, NR / W) whose accumulators, the
  vectors of a step and one broadcast fit the register file (the shapes
  `block_shape` picks from), n the output's innermost dim;
- `pack`: no packing, or the inputs the default packs, or every input
  whose map is a projected permutation (with a tile of n, as the default
  packs);
- `parallel`, for code on more than one thread: the default's parallel
  dims, or only the first one or two of them in loop order
  (`loop-parallelize` splits the outermost parallel loops).

`schedule(point)` builds the `#loop.schedule` of a point, or None where
the fields do not make one the op can run (`verify_schedule` and the
schedule's own checks are the filter): a point that is not a schedule is
never compiled. The default schedule is a point of the space (`default`),
so the search starts from it and can only add to it. On one thread the
parallel dims are the default's (one thread runs no parallel loop).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from xdsl.ir.affine import AffineDimExpr

from ember.dialects.schedule import (
    PARALLEL,
    IterationSpace,
    MicroKernel,
    ScheduleAttr,
    ScheduleError,
    is_projected_permutation,
    micro_problem,
    schedule_problem,
    verify_schedule,
)
from ember.targets.cpu.schedule.cpu_target import CpuTarget
from ember.targets.cpu.schedule.default_schedule import MAX_ROWS

Choice = int | tuple[int, ...]
"""One value of a knob: a tile or an unroll factor, or a tuple (an order, a
micro-kernel, packed operands, parallel dims)."""

TILE = "tile"
"""The knobs `tile{d}` set the tile of dim d."""


@dataclass(frozen=True)
class Point:
    """A value for each knob of a `ScheduleSpace`: a schedule's fields as
    the space names them. `tiles` holds one tile per dim (0: untiled; the
    knob `tile{d}` sets `tiles[d]`), `micro` is (m, n, MR, NR / W, W) or ()
    for none; where no knob set them (None), `parallel` and `vector` are
    the default schedule's and `unroll` is 1."""

    order: tuple[int, ...]
    tiles: tuple[int, ...]
    micro: tuple[int, ...] = ()
    pack: tuple[int, ...] = ()
    parallel: tuple[int, ...] | None = None
    unroll: int | None = None
    vector: int | None = None

    def knob(self, name: str) -> Choice | None:
        """The value of knob `name`."""
        if name.startswith(TILE):
            return self.tiles[int(name.removeprefix(TILE))]
        value: Choice | None = getattr(self, name)
        return value

    def with_knob(self, name: str, value: Choice) -> Point:
        """This point with knob `name` set to `value`."""
        if not name.startswith(TILE):
            return replace(self, **{name: value})
        dim = int(name.removeprefix(TILE))
        assert isinstance(value, int), name
        return replace(self, tiles=(*self.tiles[:dim], value, *self.tiles[dim + 1 :]))


UNROLLS = (1, 2, 4, 8)
MIN_TILED_EXTENT = 4
"""Dims shorter than this are never tiled."""


@dataclass(frozen=True)
class ScheduleSpace:
    """The schedules of one op on one CPU (see the module docstring)."""

    space: IterationSpace
    default_schedule: ScheduleAttr
    knobs: Mapping[str, tuple[Choice, ...]]

    @property
    def default(self) -> Point:
        """The default schedule as a point."""
        return point_of(self.default_schedule, self.space)

    def size(self) -> int:
        """How many points there are (most are not schedules)."""
        total = 1
        for choices in self.knobs.values():
            total *= len(choices)
        return total

    def random_point(self, rng: random.Random) -> Point:
        point = Point(tuple(self.default_schedule.loop_order), (0,) * len(self.space.extents))
        for name, choices in self.knobs.items():
            point = point.with_knob(name, rng.choice(choices))
        return point

    def mutate(self, point: Point, rng: random.Random) -> Point:
        """`point` with one knob that has a choice set to another value."""
        open_knobs = [name for name, choices in self.knobs.items() if len(choices) > 1]
        if not open_knobs:
            return point
        name = rng.choice(open_knobs)
        others = [c for c in self.knobs[name] if c != point.knob(name)]
        return point.with_knob(name, rng.choice(others))

    def schedule(self, point: Point) -> ScheduleAttr | None:
        """The schedule of `point`, or None where it is not one the op can run."""
        order, tiles, pack = list(point.order), list(point.tiles), list(point.pack)
        if point.micro:
            m, n, rows, vectors, width = point.micro
            unroll, vector, micro = 1, width, [m, n, rows, vectors * width]
            if pack and not tiles[n]:
                return None  # the panels are packed per tile of n
        else:
            unroll = 1 if point.unroll is None else point.unroll
            vector = self.default_schedule.vector_width if point.vector is None else point.vector
            micro = []
        default_parallel = self.default_schedule.parallel_dims
        parallel = default_parallel if point.parallel is None else list(point.parallel)
        if schedule_problem(order, tiles, parallel, unroll, vector, pack, micro) is not None:
            return None
        schedule = ScheduleAttr(order, tiles=tiles, parallel=parallel, unroll=unroll,
                                vector=vector, pack=pack, micro=micro)  # fmt: skip
        try:
            verify_schedule(schedule, self.space, "a candidate")
        except ScheduleError:
            return None
        return schedule


def point_of(schedule: ScheduleAttr, space: IterationSpace) -> Point:
    """`schedule` as a point of the knobs `schedule_space` makes."""
    tiles = tuple(tile if space.extents[d] >= MIN_TILED_EXTENT else 0
                  for d, tile in enumerate(schedule.tile_sizes))  # fmt: skip
    micro = schedule.micro_kernel
    point = Point(tuple(schedule.loop_order), tiles, pack=tuple(schedule.packed_operands),
                  parallel=tuple(schedule.parallel_dims))  # fmt: skip
    if micro is not None:
        return replace(point, micro=(micro.m, micro.n, micro.rows, micro.vectors, micro.width))
    return replace(point, unroll=schedule.unroll_factor, vector=schedule.vector_width)


def schedule_space(space: IterationSpace, default: ScheduleAttr, target: CpuTarget,
                   element_bits: int = 32, threads: int = 1) -> ScheduleSpace:  # fmt: skip
    """The space of schedules of an op with iteration space `space` whose
    default schedule on `target` is `default`, for code running on
    `threads` threads (see the module docstring)."""
    width = target.vector_width(element_bits)
    knobs: dict[str, tuple[Choice, ...]] = {"order": _orders(default.loop_order)}
    innermost = _innermost_output_dim(space)
    for d, extent in enumerate(space.extents):
        if extent >= MIN_TILED_EXTENT:
            step = width if d == innermost and width else 1
            knobs[f"{TILE}{d}"] = _tiles(extent, step, default.tile_sizes[d])
    micro = _micro_choices(space, target, width) if space.product is not None else []
    default_micro = point_of(default, space).micro
    if micro or default_micro:
        knobs["micro"] = _unique([default_micro, (), *micro])
    if not micro or not default_micro:
        knobs["unroll"] = UNROLLS
    packable = tuple(i for i in range(space.inputs) if is_projected_permutation(space.maps[i]))
    knobs["pack"] = _unique([tuple(default.packed_operands), (), packable])
    if threads > 1:
        knobs["parallel"] = _parallel_choices(default)
    return ScheduleSpace(space, default, knobs)


def _parallel_choices(default: ScheduleAttr) -> tuple[Choice, ...]:
    """The default's parallel dims, and the first one or two of them in loop
    order (`loop-parallelize` splits the outermost parallel loops)."""
    parallel = set(default.parallel_dims)
    in_order = tuple(d for d in default.loop_order if d in parallel)
    return _unique([tuple(default.parallel_dims), tuple(sorted(in_order[:1])),
                    tuple(sorted(in_order[:2]))])  # fmt: skip


def _unique(values: Sequence[Choice]) -> tuple[Choice, ...]:
    return tuple(dict.fromkeys(v for v in values if v is not None))


def _orders(default: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The default order and every order that moves one of its dims elsewhere."""
    orders = [tuple(default)]
    for source, target in itertools.permutations(range(len(default)), 2):
        moved = list(default)
        moved.insert(target, moved.pop(source))
        orders.append(tuple(moved))
    return tuple(dict.fromkeys(orders))


def _tiles(extent: int, step: int, default: int) -> tuple[int, ...]:
    """Untiled, the default's tile, and powers of two (multiples of `step`)
    below `extent`."""
    sizes = [0, default]
    size = max(step, 2)
    while size < extent:
        sizes.append(size)
        size *= 2
    return tuple(dict.fromkeys(sizes))


def _innermost_output_dim(space: IterationSpace) -> int | None:
    results = space.output_maps[0].results if space.output_maps else ()
    last = results[-1] if results else None
    return last.position if isinstance(last, AffineDimExpr) else None


def _micro_choices(space: IterationSpace, target: CpuTarget,
                   width: int) -> list[tuple[int, int, int, int, int]]:  # fmt: skip
    """Every micro-kernel (m, n, MR, NR / W, W) the op and the register file allow."""
    n = _innermost_output_dim(space)
    if n is None or not width or not target.has_micro_kernels or space.extents[n] < width:
        return []
    output = space.output_maps[0].results
    rows_dims = [e.position for e in output
                 if isinstance(e, AffineDimExpr) and e.position != n
                 and space.iterators[e.position] == PARALLEL and space.extents[e.position] > 1]  # fmt: skip
    choices = []
    most_vectors = min(4 if target.registers >= 32 else 2, space.extents[n] // width)
    for m in rows_dims:
        if micro_problem(space, MicroKernel(m, n, 1, width, width)) is not None:
            continue
        for vectors in range(1, most_vectors + 1):
            most_rows = min(MAX_ROWS, (target.registers - vectors - 1) // vectors,
                            space.extents[m])  # fmt: skip
            choices += [(m, n, rows, vectors, width) for rows in range(1, most_rows + 1)]
    return choices


__all__ = ["Choice", "Point", "ScheduleSpace", "point_of", "schedule_space"]
