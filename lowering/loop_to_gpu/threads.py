"""A loop nest as a kernel of one thread per point of its parallel band.

The band is the outermost `scf.parallel` and every `scf.parallel` nested
alone in its body (each loop's body holding nothing else), whose bounds do
not depend on the band's own induction variables. Its points are numbered
row-major (the last dim fastest, so neighbouring threads take neighbouring
points of the innermost dim: coalesced accesses wherever that dim is a
buffer's contiguous one), and thread `block_id.x * block_dim.x +
thread_id.x` runs the band's innermost body for point number that, if the
point exists (the last block is partial). What the body holds (sequential
`scf.for` reductions, inner loops) runs in that thread as written.

Code with no parallel band (an `scf.for` nest at the top of a kernel, a
single store) runs as a kernel of one thread: correct, and as slow as it
sounds; the default schedules leave none in the models Ember compiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from ember.dialects.loop_nests import constant_index
from ember.lowering.loop_to_gpu.outline import (
    KernelBuilder,
    ValueCopier,
    host_index,
    outside_values,
)

Size = int | SSAValue
"""A size known when compiling (an int) or only at run time (an `index`)."""


@dataclass(frozen=True)
class BandDim:
    """One dim of a parallel band: its loop's bounds and induction variable."""

    lower: SSAValue
    upper: SSAValue
    step: SSAValue
    iv: SSAValue


def parallel_band(op: scf.ParallelOp) -> tuple[list[BandDim], list[Operation]]:
    """The band's dims, outermost first, and the ops of its innermost body
    (without the `scf.reduce` terminator)."""
    dims: list[BandDim] = []
    loop = op
    while True:
        ivs = loop.body.block.args
        dims += [BandDim(lb, ub, st, iv) for lb, ub, st, iv in
                 zip(loop.lowerBound, loop.upperBound, loop.step, ivs)]  # fmt: skip
        body = [o for o in loop.body.block.ops if not isinstance(o, scf.ReduceOp)]
        inner = body[0] if len(body) == 1 else None
        band_ivs = {d.iv for d in dims}
        if (isinstance(inner, scf.ParallelOp) and not inner.initVals
                and not band_ivs & set(inner.operands)):  # fmt: skip
            loop = inner
            continue
        return dims, body


def _fold(values: Sequence[Size], combine: type[arith.MuliOp | arith.DivUIOp | arith.AddiOp],
          builder: Builder) -> Size:  # fmt: skip
    """`values` combined left to right by `combine` (a Python int where all are ints)."""
    result = values[0]
    for value in values[1:]:
        if isinstance(result, int) and isinstance(value, int):
            python = {arith.MuliOp: int.__mul__, arith.DivUIOp: int.__floordiv__,
                      arith.AddiOp: int.__add__}[combine]  # fmt: skip
            result = python(result, value)
            continue
        operands = [_as_index(builder, v) for v in (result, value)]
        result = builder.insert(combine(*operands)).results[0]
    return result


def _as_index(builder: Builder, value: Size) -> SSAValue:
    if isinstance(value, int):
        return builder.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).results[0]
    return value


def trip_count(builder: Builder, copy: ValueCopier, dim: BandDim) -> Size:
    """How many iterations `dim` has: `ceil((upper - lower) / step)`, an int
    where its bounds are constants, else computed at `builder` from the
    copies of its bounds."""
    bounds = [constant_index(v) for v in (dim.lower, dim.upper, dim.step)]
    if all(b is not None for b in bounds):
        lower, upper, step = bounds
        assert lower is not None and upper is not None and step is not None
        return max(0, -(-(upper - lower) // step))
    lower, upper, step = (copy(v) for v in (dim.lower, dim.upper, dim.step))
    span = builder.insert(arith.SubiOp(upper, lower)).results[0]
    one = _as_index(builder, 1)
    step_less_one = builder.insert(arith.SubiOp(step, one)).results[0]
    padded = builder.insert(arith.AddiOp(span, step_less_one)).results[0]
    return builder.insert(arith.DivUIOp(padded, step)).results[0]


def outline_band(kernel: KernelBuilder, host: ValueCopier, dims: Sequence[BandDim],
                 body: Sequence[Operation], threads: int) -> None:  # fmt: skip
    """Builds the kernel of one thread per point of the band `dims` running
    `body` (see the module docstring), and its launch at `host`."""
    build = kernel.body
    copy = kernel.copier
    band_ivs = {d.iv for d in dims}
    copy.copy_all(v for v in outside_values(body) if v not in band_ivs)
    for dim in dims:  # made before the guard, which uses them
        copy.copy_all([dim.lower, dim.step])
    counts = [trip_count(build, copy, d) for d in dims]
    total = _fold([1, *counts], arith.MuliOp, build)
    thread = build.insert(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).results[0]
    block = build.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).results[0]
    size = build.insert(gpu.BlockDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).results[0]
    first = build.insert(arith.MuliOp(block, size)).results[0]
    point = build.insert(arith.AddiOp(first, thread)).results[0]
    exists = build.insert(arith.CmpiOp(point, _as_index(build, total), "ult")).results[0]
    guarded = scf.IfOp(exists, [], [scf.YieldOp()])
    build.insert(guarded)
    inside = Builder(InsertPoint.at_start(guarded.true_region.block))
    rest = point
    mapping = copy.mapping
    for dim, count in reversed(list(zip(dims, counts))):
        count_value = _as_index(inside, count)
        position = inside.insert(arith.RemUIOp(rest, count_value)).results[0]
        rest = inside.insert(arith.DivUIOp(rest, count_value)).results[0]
        scaled = inside.insert(arith.MuliOp(position, copy(dim.step))).results[0]
        mapping[dim.iv] = inside.insert(arith.AddiOp(copy(dim.lower), scaled)).results[0]
    for op in body:
        inside.insert(op.clone(value_mapper=mapping))
    kernel.finish()
    host_total = _host_size(host, dims, counts)
    blocks = _fold([_fold([host_total, threads - 1], arith.AddiOp, host.builder), threads],
                   arith.DivUIOp, host.builder)  # fmt: skip
    one = host_index(host, 1)
    grid = [host_index(host, blocks) if isinstance(blocks, int) else blocks, one, one]
    kernel.launch(host.builder, grid, [host_index(host, threads), one, one])


def _host_size(host: ValueCopier, dims: Sequence[BandDim], counts: Sequence[Size]) -> Size:
    """The band's point count on the host (computed again there from the
    host's copies of the bounds where it is not a constant)."""
    if all(isinstance(c, int) for c in counts):
        return _fold([1, *counts], arith.MuliOp, host.builder)
    return _fold([1, *(trip_count(host.builder, host, d) for d in dims)], arith.MuliOp,
                 host.builder)  # fmt: skip


__all__ = ["BandDim", "outline_band", "parallel_band", "trip_count"]
