"""`tensor-default-schedule`: gives every structured op that has no
`schedule` attribute the default one (`#loop.schedule<...>`) for a CPU.

The default is the scalar heuristic (`ember.dialects.schedule.default_schedule`):
the dims in declared order with the output's last dim moved inside the
reduction dims, no tiles, every parallel dim's loops parallel, no
unrolling, no vector hint. A contraction (`contraction_schedule`: a body
`out + a * b` on f32 or f64, as matmul, batched matmul, Gemm and every
convolution layout have) gets a register-blocked micro-kernel instead where
the CPU has vector registers and an fma (`cpu`, an option: a name from
`NAMED_TARGETS` or `host`, the default) and the output's innermost dim holds
at least one vector, with n tiled for the L2 cache where the operand read
along n outgrows it (`targets/cpu/schedule/cache_blocking.py`). Any other `linalg.generic` whose innermost output dim
runs inside reduction loops gets that dim tiled to a register block of the
CPU's vectors (`targets/cpu/schedule/register_blocking.py`), and one that reduces
along an input's contiguous axis runs that axis innermost instead
(`targets/cpu/schedule/reduction_order.py`). An op that already has
a schedule keeps it; the pass checks that it fits the op and reports the op
if not. Other ops are left alone.

Without a schedule, `loop-generate` falls back to the scalar default, so with
`cpu=generic` (no vector unit) this pass changes no generated code. The CPU
pipeline runs it on buffers, between bufferization and `loop-generate`.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.ops import FillOp, LinalgStructuredOperation
from xdsl.ir import Operation
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.loop import constant_source
from ember.dialects.schedule import (
    PARALLEL,
    SCHEDULE,
    IterationSpace,
    MicroKernel,
    ScheduleAttr,
    ScheduleError,
    StructuredOp,
    default_schedule,
    describe,
    iteration_space,
    map_depends_on,
    micro_problem,
    overlap_vectors,
    schedule_of,
    verify_schedule,
)
from ember.errors import EmberError
from ember.targets.cpu.schedule.cache_blocking import (
    aliased_panels,
    column_tile,
    long_panels,
    packed_column_tile,
    panel_operands,
    rows_fit_in_cache,
)
from ember.targets.cpu.schedule.cpu_target import HOST, CpuTarget, cpu_target
from ember.targets.cpu.schedule.reduction_order import reduction_innermost
from ember.targets.cpu.schedule.register_blocking import block_innermost

MAX_ROWS = 8
"""The most rows (MR) of a micro-kernel block: more shares each vector read
of the n-dependent operand among more rows, but every row is one more
broadcast per step, and one more row of remainder to peel."""


def _element_bits(op: Operation) -> int:
    """The bit width of the op's output elements (0 unless f32 or f64)."""
    assert isinstance(op, LinalgStructuredOperation)
    output_type = op.outputs[0].type
    assert isinstance(output_type, MemRefType | TensorType)
    element = output_type.element_type
    return element.bitwidth if isinstance(element, Float32Type | Float64Type) else 0


STATIC_ROWS = 4
"""A static dim of at least this extent runs a micro-kernel's rows rather
than a run-time one (which may be 1 at run time: a batch of one image would
run every block one row at a time)."""


def _row_dim(space: IterationSpace, n: int, run_time: AbstractSet[int] = frozenset()) -> int | None:
    """The m of a micro-kernel with n: a parallel dim of the output whose
    every operand read as vectors (those that depend on n) does not depend
    on it, so that one vector read serves all the rows of a block; the one
    of largest extent, the innermost of the output on a tie. Where there is
    none (a depthwise NHWC convolution, whose input and weights both depend
    on the channels n), one that some vector operand does not depend on:
    that operand's reads are still shared by the rows (the weights of a tap
    by the output columns), the others are read once per row. Among those,
    a static dim of `STATIC_ROWS` or more comes before the `run_time` ones."""
    output = [e.position for e in space.output_maps[0].results if isinstance(e, AffineDimExpr)]
    vector_operands = [amap for amap in space.maps[: space.inputs]
                       if map_depends_on(amap, n)]  # fmt: skip

    def readers(d: int) -> int:
        """How many vector operands depend on d."""
        return sum(map_depends_on(amap, d) for amap in vector_operands)

    candidates = [d for d in output if d != n and space.iterators[d] == PARALLEL
                  and (readers(d) < len(vector_operands) or not vector_operands)]  # fmt: skip
    if not candidates:
        return None

    def rank(d: int) -> tuple[int, bool, int]:
        static_rows = d not in run_time and space.extents[d] >= STATIC_ROWS
        return -readers(d), static_rows, space.extents[d]

    return max(reversed(candidates), key=rank)


def block_shape(
    target: CpuTarget, rows_extent: int, columns: int, width: int, overlap: bool = False
) -> tuple[int, int]:
    """(MR, NR / W) for m of `rows_extent` and n of `columns` (at least one
    vector of `width`): the most accumulators MR x NR/W whose registers, with NR/W
    vectors of the n-dependent operand and one broadcast, fit the register
    file (AVX-512 f32: 6 x 4 vectors, AVX2: 6 x 2), up to `MAX_ROWS` rows
    and 4 vectors (2 on a 16-register file). A block that divides both
    extents is taken if it keeps at least half the accumulators of the
    largest block: each partial block is one more copy of the kernel in
    the IR (compile time) and runs at its own, lower, rate.

    With `overlap` (the output is filled just before, so `loop-generate`
    runs a dim's last block overlapping the one before instead of a partial
    one), every block is whole and one copy: the block with the most
    accumulators times the share of its work that is not recomputed wins
    (1024 rows: 6 x 4 vectors, 2 rows recomputed; 7 rows: 7 rows; the
    columns past the whole blocks are one narrower block, as `loop-generate`
    runs them: `overlap_vectors`)."""
    vectors_extent = columns // width
    most_vectors = min(4 if target.registers >= 32 else 2, vectors_extent)
    shapes = []
    for vectors in range(most_vectors, 0, -1):
        most_rows = min(MAX_ROWS, (target.registers - vectors - 1) // vectors, rows_extent)
        shapes += [(rows, vectors) for rows in range(most_rows, 0, -1)]
    if overlap:
        return max(shapes, key=lambda shape: _useful(shape, rows_extent, columns, width))
    largest = max(shapes, key=lambda shape: shape[0] * shape[1])
    dividing = [(r, v) for r, v in shapes if rows_extent % r == 0 and vectors_extent % v == 0]
    best = max(dividing, key=lambda shape: shape[0] * shape[1])
    return best if 2 * best[0] * best[1] >= largest[0] * largest[1] else largest


def _useful(shape: tuple[int, int], rows_extent: int, columns: int,
            width: int) -> tuple[float, int]:  # fmt: skip
    """A block's accumulators times the share of the blocks' work that is
    not recomputed by overlapping last blocks; then fewer rows recomputed."""
    rows, vectors = shape
    block = vectors * width
    covered_rows = -(-rows_extent // rows) * rows
    spare = overlap_vectors(columns, block, width)
    if spare:
        covered_columns = columns // block * block + spare * width
    else:
        covered_columns = -(-columns // block) * block
    share = rows_extent * columns / (covered_rows * covered_columns)
    return (rows * vectors * share, -covered_rows)


def _filled_output(op: Operation) -> bool:
    """Whether `op`'s output is a constant `linalg.fill` made just for it: on
    tensors the fill's result, on buffers a fill of the same buffer just
    before it."""
    assert isinstance(op, LinalgStructuredOperation)
    output = op.outputs[0]
    if isinstance(output.type, TensorType):
        return isinstance(output.owner, FillOp)
    fill = op.prev_op
    return isinstance(fill, FillOp) and fill.outputs[0] is output


PLANNING_EXTENT = 64
"""The extent the heuristics assume for a dim whose size is known only at
run time (a symbolic batch or sequence length)."""


def planning_space(space: IterationSpace) -> IterationSpace:
    """`space` with each run-time extent replaced by `PLANNING_EXTENT`."""
    if DYNAMIC_INDEX not in space.extents:
        return space
    extents = tuple(PLANNING_EXTENT if e == DYNAMIC_INDEX else e for e in space.extents)
    return replace(space, extents=extents)


def fit_run_time_extents(schedule: ScheduleAttr, space: IterationSpace) -> ScheduleAttr:
    """`schedule` (made for the `planning_space`) made valid for any size of the
    run-time extents: they are not tiled, and no micro-kernel runs vectors
    along one. A micro-kernel's m may be one: `loop-generate` peels its last
    rows at run time."""
    dynamic = {d for d, e in enumerate(space.extents) if e == DYNAMIC_INDEX}
    if not dynamic:
        return schedule
    micro = schedule.micro_kernel
    if micro is not None and micro.n in dynamic:
        return fit_run_time_extents(default_schedule(space), space)
    tiles = [0 if d in dynamic else t for d, t in enumerate(schedule.tile_sizes)]
    unroll = schedule.unroll_factor
    if schedule.loop_order and schedule.loop_order[-1] in dynamic:
        unroll = 1
    return ScheduleAttr(
        schedule.loop_order, tiles=tiles, parallel=schedule.parallel_dims, unroll=unroll,
        vector=schedule.vector_width, pack=schedule.packed_operands,
        micro=() if micro is None else [micro.m, micro.n, micro.rows, micro.columns],
    )  # fmt: skip


def contraction_schedule(
    op: Operation, space: IterationSpace, target: CpuTarget,
    run_time: AbstractSet[int] = frozenset(),
) -> ScheduleAttr | None:  # fmt: skip
    """The micro-kernel schedule of a contraction on `target`, or None where
    none applies (not a contraction, no vector unit with an fma, an output
    row shorter than a vector, no m whose rows share the vector reads, or a
    layout `micro_problem` refuses). n is the output's innermost dim, m
    from `_row_dim`, the block from `block_shape`; the loops outside the
    blocks are the scalar default's, n tiled where its weights outgrow the
    L2 cache (`column_tile`); a sum of bfloat16 pairs (`BF16Pairs`) packs
    only its constant columns (`_pairs_packing`). `space` is the `planning_space`; `run_time`
    its dims whose extents are known only at run time."""
    contraction = space.multiplied is not None or space.bf16_pairs is not None
    if not contraction or not target.has_micro_kernels or not space.output_maps:
        return None
    bits = _element_bits(op)
    width = target.vector_width(bits) if bits else 0
    results = space.output_maps[0].results
    if not width or not results or not isinstance(results[-1], AffineDimExpr):
        return None
    n = results[-1].position
    if space.extents[n] < width:
        return None
    m = _row_dim(space, n, run_time)
    if m is None:
        return None
    rows, vectors = block_shape(target, space.extents[m], space.extents[n], width,
                                overlap=_filled_output(op))  # fmt: skip
    micro = MicroKernel(m, n, rows, vectors * width, width)
    if micro_problem(space, micro) is not None:
        return None
    scalar = default_schedule(space)
    tiles = [0] * len(space.extents)
    blocking = column_tile(space, m, n, rows, vectors * width, target, bits // 8)
    if space.bf16_pairs is not None:
        tiles[n], pack = _pairs_packing(op, space, micro, blocking)
    else:
        tiles[n], pack = _packing(op, space, micro, blocking, target, bits // 8)
    return ScheduleAttr(scalar.loop_order, tiles=tiles, parallel=scalar.parallel_dims,
                        vector=width, pack=pack, micro=[m, n, rows, vectors * width])  # fmt: skip


def constant_panels(op: Operation, space: IterationSpace, m: int, n: int) -> list[int]:
    """The panel operands (`panel_operands`) of `op` that are constant
    buffers (`loop.weight`): `loop-generate` packs those at compile time, so
    reading them tile by tile costs nothing per call."""
    assert isinstance(op, LinalgStructuredOperation)
    inputs = op.inputs
    return [i for i in panel_operands(space, m, n) if constant_source(inputs[i]) is not None]


def _packing(op: Operation, space: IterationSpace, micro: MicroKernel, tile: int,
             target: CpuTarget, element_bytes: int) -> tuple[int, list[int]]:  # fmt: skip
    """The tile of n and the operands to pack for `micro`, given the
    cache-blocking `tile` (0: none).

    Constant panels are packed (at compile time: `loop-generate`), tiled by
    one block where n is whole vectors and either nothing else tiles n or
    the row operands fit in half the L2 cache (`rows_fit_in_cache`): each
    block then reads its panel as one contiguous stream, once per row
    block, and the first pass over it, from memory, is one block's panel
    long. A chain of ResNet-50's 7x7 1x1 convolutions (49 rows, 4 MiB of
    weights) ran 1.25 times faster this way than in L2-sized tiles of 9
    blocks on an AVX-512 Xeon. Other panels whose rows alias in L1 are
    copied per call where four row blocks share the copy, and so are panels
    too long for the L2 cache even one block wide (`long_panels`). A packed tile of
    several blocks is made an odd number of them (`packed_column_tile`),
    its rows spread over the L1 sets. Where n is not whole vectors, its
    last tile must be at least a vector wide and the blocks must start from
    the output's fill (`_filled_output`): that tile's vectors then overlap
    to end on its last column (a classifier's 1000 columns: 15 blocks of 64
    and one of 40 columns, as vectors at 0, 16 and 24), where reading
    whole vectors would run past the panel's columns."""
    m, n, block = micro.m, micro.n, micro.columns
    constants = constant_panels(op, space, m, n)
    streams = not tile or rows_fit_in_cache(space, m, n, target, element_bytes)
    if constants and streams and _tiles_by_block(op, space.extents[n], micro):
        tile = block
    shared = space.extents[m] >= 4 * micro.rows
    aliased = aliased_panels(space, m, n, element_bytes) if shared else []
    long = long_panels(space, micro, target, element_bytes)
    copied = sorted({i for i in (*aliased, *long) if i not in constants})
    if copied:
        tile = tile or space.extents[n]
    pack = sorted({*copied, *constants}) if tile else []
    if pack and tile > block:
        tile = packed_column_tile(tile, block)
    return tile, pack


def _pairs_packing(op: Operation, space: IterationSpace, micro: MicroKernel,
                   tile: int) -> tuple[int, list[int]]:  # fmt: skip
    """The tile of n and the operands to pack for a sum of bfloat16 pairs: a
    constant column operand packed at compile time, n tiled by one block (as
    `_packing` does constant panels: each block streams its pairs, 2 NR
    elements per k, from one contiguous run); otherwise read in place, n
    tiled by `tile`. The row operand, read through `2 k + p`, is never
    packed."""
    pairs = space.bf16_pairs
    assert pairs is not None
    constants = constant_panels(op, space, micro.m, micro.n)
    if pairs.column in constants and _tiles_by_block(op, space.extents[micro.n], micro):
        return micro.columns, [pairs.column]
    return tile, []


def _tiles_by_block(op: Operation, columns: int, micro: MicroKernel) -> bool:
    """Whether `micro`'s blocks can cover `columns` of n tiled by one block:
    whole vectors, or a last tile of a vector or more whose blocks start
    from a fill (see `_packing`)."""
    if columns % micro.width == 0:
        return True
    return columns % micro.columns >= micro.width and _filled_output(op)


@dataclass
class AttachDefaultSchedule(RewritePattern):
    """A structured op without a schedule gets the default for `target`
    (a contraction's micro-kernel, another generic's register block); one
    with a schedule is checked against the op."""

    target: CpuTarget

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        schedule = schedule_of(op)
        if schedule is not None:
            verify_schedule(schedule, iteration_space(op), describe(op))
            return
        op.attributes[SCHEDULE] = default_for(op, self.target)
        rewriter.notify_op_modified(op)


def default_for(op: StructuredOp, target: CpuTarget) -> ScheduleAttr:
    """The default schedule of `op` on `target` (see the module docstring)."""
    space = iteration_space(op)
    planned = planning_space(space)
    run_time = {d for d, extent in enumerate(space.extents) if extent == DYNAMIC_INDEX}
    schedule = contraction_schedule(op, planned, target, run_time)
    if schedule is None:
        schedule = default_schedule(planned)
        if isinstance(op, linalg.GenericOp):
            width = target.vector_width(32)
            schedule = reduction_innermost(planned, schedule, width)
            schedule = block_innermost(planned, schedule, width)
    return fit_run_time_extents(schedule, space)


@dataclass(frozen=True)
class DefaultSchedulePass(ModulePass):
    """Attaches the default schedule for a CPU (`cpu`: `host` or a name from
    `NAMED_TARGETS`) to every structured op that lacks one."""

    name = "tensor-default-schedule"

    cpu: str = field(default=HOST)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            target = cpu_target(self.cpu)
        except EmberError as error:
            raise ScheduleError(f"{self.name}: {error}") from None
        pattern = AttachDefaultSchedule(target)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)


__all__ = [
    "AttachDefaultSchedule",
    "DefaultSchedulePass",
    "block_shape",
    "contraction_schedule",
    "default_for",
]
