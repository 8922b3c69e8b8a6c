"""`gpu-default-schedule`: the GPU target's default schedule on every
structured op on buffers that has none.

- A contraction (`out + a * b`, static extents: matmuls, batched matmuls,
  convolutions) with at least `TILED_FROM` rows and columns
  (`tiled_contraction` says which dims those are) gets a block-tiled
  `#ember_gpu.schedule<m = [...], n = [...], k = [...], block = [64, 64],
  threads = [16, 16], k_tile = 16, vector = [VR, VC], stages = 2>` (each
  thread 4 x 4 outputs, two pairs of 8 KiB tiles a block); the block is 32
  along a side shorter than 64, so that small products do not leave most
  threads idle; VR and VC are the widest loads (4, 2 or 1 elements) each
  operand's layout and the tiles allow (`_widest`). The elementwise
  generics after it that can run on its values in registers (its
  epilogue, `ember.passes.loop.epilogue`'s rules) get `#ember_gpu.epilogue`,
  and the contraction then writes the epilogue's output buffer
  (`_mark_epilogue` says why). A product operand built as a padded copy
  (a `memref.alloc` written only by fills of one constant and one
  `linalg.copy`, and read only by the contraction: a convolution's pads)
  gets those ops marked `#ember_gpu.padding`: the contraction's loads read
  the copy's source with bounds checks instead (`padding_of`), and that
  operand loads one element at a time. The copy moves to just before the
  contraction, after its output's fill: its source, which the kernel
  reads, is then live until the output is first written, so memory
  planning never puts the output over it.
- A depthwise convolution (`window_roles`: each output point reads one
  plane of its input through a window, no channel summed; static extents)
  gets `#ember_gpu.window<tile = [TH, TW], threads = [TX, TY]>`: blocks of
  TX x TY threads, each computing `WINDOW_OUTPUTS` x `WINDOW_OUTPUTS` (2 x 2)
  outputs from the input window its block stages in shared memory once;
  TX is `WINDOW_THREADS[0]` (16) and TY `WINDOW_THREADS[1]` (8), or the
  smallest power of two whose register tiles cover the output's width
  (height) where that is fewer, so a 7 x 7 output is not computed by
  blocks of 16 x 32 (`window_tile`). Its epilogue and the padded copy it
  reads are marked, and the copy moved, as a tiled contraction's are.
- A `linalg.generic` reduction of at least `REDUCE_FROM` reduction points,
  static extents, one output, whose body folds its inputs' value into the
  output with one associative, commutative op (`out = combine(g(inputs),
  out)`, combine one of addf, mulf, maximumf, minimumf, maxnumf, minnumf:
  `reduction_problem` says what runs so) gets, with at least
  `REDUCE_THREADS` points, `#ember_gpu.reduce<threads = 256>`: one block
  per point of its parallel dims (a row), 256 threads folding its
  reduction points side by side; with fewer, `#ember_gpu.reduce<threads =
  32, rows = R>`: a warp per row, R = `WARP_ROWS` (8) rows a block, or
  the number of rows where that is fewer (`block_reduction`). Softmax's
  and LayerNorm's row reductions, ReduceMean, ReduceMax and global pooling
  are such reductions.
- Every other op (elementwise, small reductions, reductions of another
  body, convolutions, small products) gets a `#loop.schedule` with its
  parallel dims first, in declared order, then its reduction dims, and its
  parallel dims flagged: `loop-generate` makes one nest whose parallel band
  `convert-loop-to-gpu` spreads over threads, each thread running the
  reductions of its point.

Ops with a schedule are left alone, so a schedule written by hand wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ember.dialects.ember_gpu import (
    WARP_SIZE,
    EpilogueAttr,
    GpuScheduleAttr,
    PaddingAttr,
    ReduceScheduleAttr,
    WindowScheduleAttr,
    tiling_problem,
)
from ember.dialects.schedule import (
    PARALLEL,
    SCHEDULE,
    IterationSpace,
    ScheduleAttr,
    StructuredOp,
    iteration_space,
)
from ember.lowering.loop_to_gpu.contraction import (
    Padding,
    contraction_problem,
    contraction_roles,
    padding_of,
)
from ember.lowering.loop_to_gpu.reduction import reduction_problem
from ember.lowering.loop_to_gpu.window import window_problem, window_roles
from ember.passes.loop.epilogue import find_epilogue
from ember.passes.loop.generate import on_buffers

TILED_FROM = 32
"""The smallest m and n extents that run as a block-tiled contraction."""
BLOCK = 64
THREADS = 16
K_TILE = 16
STAGES = 2
"""Double buffering: 2 x 8 KiB of tiles for a 64 x 64 block."""

REDUCE_FROM = 32
"""The fewest reduction points that run as a block per row. At 32 the
smallest block, a warp, has a point for each thread and a tree of 5 steps;
below, a block would leave threads idle, and one thread per row folding
fewer than 32 points sequentially costs about what the tree's barriers do.
A global average pool's 7 x 7 = 49 points per channel is above it: its
rows (2,048 channels in ResNet-50) are too few to fill a GPU with one
thread each, and a block reads each channel's 49 contiguous values
coalesced where a thread per channel strides 49 floats between
neighbours."""
REDUCE_THREADS = 256
"""The threads of a block-per-row reduction, which rows of at least this
many points get; shorter rows get a warp each (`WARP_ROWS` a block): a
block of 256 would leave threads idle and wait at log2(256 / 32) barriers,
where a warp's lanes fold a point or more each and finish with shuffles."""
WARP_ROWS = 8
"""The rows (warps) of a warp-per-row reduction's block: 256 threads."""
WINDOW_THREADS = (16, 8)
"""The most threads of a depthwise convolution's block, along its width
and its height: 128, so that a plane of 56 x 56 outputs still makes 8
blocks and a block's window (stride 2, 3 x 3: 33 x 65 floats) stays under
9 KiB."""
WINDOW_OUTPUTS = 2
"""The outputs a thread of a depthwise convolution computes along each
spatial dim: 4 from KH x KW weights read once, and neighbouring threads
still store neighbouring outputs."""


def tiled_contraction(space: IterationSpace, types: Sequence[Attribute]) -> GpuScheduleAttr | None:
    """The block-tiled schedule of a contraction large enough for it, or
    None; `types` are its operands' types.

    The k dims are the reduction dims; the output's dims that one product
    operand reads and the other does not are the m or the n dims, the n
    dims being the group that holds the output's innermost dim (so that
    neighbouring threads store neighbouring elements); the dims both read
    are batch dims. A matmul is m = [i], n = [j], k = [l]; an NCHW
    convolution m = [f], n = [n, oh, ow], k = [c, kh, kw]. Each operand's
    tile is staged in the widest loads (`vector`) its layout and the tiles
    allow, and with two stages where their shared memory fits."""
    if space.product is None or DYNAMIC_INDEX in space.extents:
        return None
    k = [d for d, kind in enumerate(space.iterators) if kind != PARALLEL]
    (out,) = space.output_maps
    if not k or not all(isinstance(r, AffineDimExpr) for r in out.results):
        return None
    dims = [r.position for r in out.results]  # type: ignore[attr-defined]
    read = [{d for r in space.maps[i].results for d in r.used_dims()} for i in space.product]
    only = [[d for d in dims if d in mine and d not in other]
            for mine, other in (read, read[::-1])]  # fmt: skip
    if not all(only):
        return None
    n_group = (
        next(g for g in only if dims[-1] in g) if any(dims[-1] in g for g in only) else only[1]
    )
    m_group = only[0] if n_group is only[1] else only[1]
    rows, columns = (prod(space.extents[d] for d in g) for g in (m_group, n_group))
    if min(rows, columns) < TILED_FROM:
        return None
    block = [BLOCK if size >= BLOCK else TILED_FROM for size in (rows, columns)]
    fields = (m_group, n_group, k, block, [THREADS, THREADS], K_TILE)
    if contraction_problem(space, GpuScheduleAttr(*fields), types) is not None:
        return None
    vector = [_widest(fields, types, space, i) for i in range(2)]
    stages = (
        STAGES
        if tiling_problem(fields[:3], block, fields[4], K_TILE, vector, STAGES) is None
        else 1
    )
    return GpuScheduleAttr(*fields, vector, stages)


def _widest(fields: tuple[list[int], list[int], list[int], list[int], list[int], int],
            types: Sequence[Attribute], space: IterationSpace, operand: int) -> int:  # fmt: skip
    """The widest staging load (4, 2 or 1 elements) the schedule of `fields`
    allows for its row (`operand` 0) or column operand (1), the other's at 1."""
    for width in (4, 2):
        vector = [width if i == operand else 1 for i in range(2)]
        if tiling_problem(fields[:3], fields[3], fields[4], fields[5], vector) is not None:
            continue
        if contraction_problem(space, GpuScheduleAttr(*fields, vector), types) is None:
            return width
    return 1


def window_tile(space: IterationSpace, types: Sequence[Attribute]) -> WindowScheduleAttr | None:
    """The window schedule of a depthwise convolution, or None (see the
    module docstring)."""
    roles = window_roles(space, types)
    if isinstance(roles, str):
        return None
    threads = []
    for size, most in zip((space.extents[roles.width], space.extents[roles.height]),
                          WINDOW_THREADS, strict=True):  # fmt: skip
        count = 1
        while count < most and count * WINDOW_OUTPUTS < size:
            count *= 2
        threads.append(count)
    tx, ty = threads
    schedule = WindowScheduleAttr([ty * WINDOW_OUTPUTS, tx * WINDOW_OUTPUTS], [tx, ty])
    return schedule if window_problem(space, schedule, types) is None else None


def block_reduction(op: StructuredOp, space: IterationSpace) -> ReduceScheduleAttr | None:
    """The block- or warp-per-row schedule of a reduction large enough for
    it, or None (see the module docstring)."""
    points, rows = (prod(space.extents[d] for d, kind in enumerate(space.iterators)
                         if (kind != PARALLEL) == reduced) for reduced in (True, False))  # fmt: skip
    if points < REDUCE_FROM or reduction_problem(op, space) is not None:
        return None
    if points < REDUCE_THREADS:
        return ReduceScheduleAttr(WARP_SIZE, min(WARP_ROWS, rows))
    return ReduceScheduleAttr(REDUCE_THREADS)


def loop_schedule(space: IterationSpace) -> ScheduleAttr:
    """Parallel dims outermost, then the reductions; the parallel ones flagged."""
    parallel = [d for d, kind in enumerate(space.iterators) if kind == PARALLEL]
    reductions = [d for d, kind in enumerate(space.iterators) if kind != PARALLEL]
    return ScheduleAttr([*parallel, *reductions], parallel=parallel)


class AttachTiledSchedule(RewritePattern):
    """A tiled contraction's schedule, its epilogue's and its padding's marks
    (first, so that a padded copy's fills and copy are not scheduled yet);
    a depthwise convolution's window schedule and its epilogue's marks."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        if SCHEDULE in op.attributes or not on_buffers(op):
            return
        types = [v.type for v in op.operands]
        space = iteration_space(op)
        tiled = tiled_contraction(space, types)
        if tiled is None:
            window = window_tile(space, types)
            if window is not None:
                roles = window_roles(space, types)
                assert not isinstance(roles, str)
                _attach(op, window, [padding_of(op.operands[roles.input], op, marked=False)],
                        rewriter)  # fmt: skip
            return
        roles = contraction_roles(space, tiled, types)
        assert not isinstance(roles, str)
        paddings = [
            padding_of(op.operands[i], op, marked=False) for i in (roles.rows, roles.columns)
        ]
        if any(p is not None for p in paddings):  # a padded operand loads one element at a time
            vector = [1 if p is not None else w
                      for p, w in zip(paddings, tiled.vector_widths, strict=True)]  # fmt: skip
            tiled = GpuScheduleAttr(*tiled.groups, tiled.block_tile, tiled.block_threads,
                                    tiled.k_step, vector, tiled.buffers)  # fmt: skip
        _attach(op, tiled, paddings, rewriter)


def _attach(op: StructuredOp, schedule: Attribute, paddings: list[Padding | None],
            rewriter: PatternRewriter) -> None:  # fmt: skip
    """Gives `op` `schedule`, marks its epilogue and the ops building its
    padded operands (`paddings`), and moves each padded copy just before it."""
    for padding in paddings:
        for padding_op in padding.ops if padding is not None else ():
            padding_op.attributes[SCHEDULE] = PaddingAttr()
            rewriter.notify_op_modified(padding_op)
    op.attributes[SCHEDULE] = schedule
    _mark_epilogue(op)
    for padding in paddings:
        if padding is not None:  # its copy, the last reader of its source, after op's fill
            padding.ops[-1].detach()
            rewriter.insert(padding.ops[-1], InsertPoint.before(op))
    rewriter.notify_op_modified(op)


class AttachGpuSchedule(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StructuredOp, rewriter: PatternRewriter) -> None:
        if SCHEDULE in op.attributes or not on_buffers(op):
            return
        space = iteration_space(op)
        op.attributes[SCHEDULE] = block_reduction(op, space) or loop_schedule(space)
        rewriter.notify_op_modified(op)


def _mark_epilogue(op: StructuredOp) -> None:
    """Marks the epilogue of `op`, a tiled contraction or a window
    convolution, and makes the IR say
    what its kernel does with memory: `op` (and the fill before it) writes
    the epilogue's output, which the first generic reads. Memory planning
    then keeps that buffer apart from `op`'s operands: the kernel's blocks
    store into it while other blocks still read them. (Each step stays an
    elementwise op reading and writing the same point, so the IR still means
    what it did, run op by op.)"""
    epilogue = find_epilogue(op, lambda _: True)
    if epilogue is None or any(SCHEDULE in g.attributes for g in epilogue.generics):
        return
    for generic in epilogue.generics:
        generic.attributes[SCHEDULE] = EpilogueAttr()
    accumulator, output = op.outputs[0], epilogue.output
    first = op.prev_op if _writes(op.prev_op, accumulator) else op
    _define_before(output, first)
    accumulator.replace_all_uses_with(output)
    if isinstance(accumulator.owner, memref.AllocOp) and not accumulator.uses:
        accumulator.owner.detach()
        accumulator.owner.erase()


def _writes(op: Operation | None, buffer: SSAValue) -> bool:
    return isinstance(op, linalg.FillOp) and op.outputs[0] is buffer


def _define_before(value: SSAValue, op: Operation) -> None:
    """Moves the ops defining `value` (a buffer and the views it is made
    from) that come after `op` in its block to just before it."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_block() is not op.parent_block():
        return
    if not op.is_before_in_block(owner):
        return
    for operand in owner.operands:
        _define_before(operand, op)
    owner.detach()
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(owner, op)


@dataclass(frozen=True)
class GpuDefaultSchedulePass(ModulePass):
    """Attaches the GPU's default schedule to every structured op on buffers
    that lacks one (see the module docstring)."""

    name = "gpu-default-schedule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for pattern in (AttachTiledSchedule(), AttachGpuSchedule()):
            PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)


__all__ = [
    "REDUCE_FROM",
    "REDUCE_THREADS",
    "WARP_ROWS",
    "WINDOW_OUTPUTS",
    "WINDOW_THREADS",
    "GpuDefaultSchedulePass",
    "block_reduction",
    "loop_schedule",
    "tiled_contraction",
    "window_tile",
]
