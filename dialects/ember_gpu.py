"""The `ember_gpu` dialect: what Ember's `gpu` level needs and xDSL's `gpu`
dialect lacks.

The `gpu` level is upstream's `gpu` dialect: a `gpu.module` of
`gpu.func ... kernel` functions, launched from the host by
`gpu.launch_func`, whose bodies are `scf`/`arith`/`math`/`memref` code that
reads `gpu.thread_id`, `gpu.block_id`, `gpu.block_dim` and `gpu.grid_dim`
and synchronises a block with `gpu.barrier`. A kernel's memref arguments
are global memory (device buffers), in the default memory space.

xDSL's `gpu.func` has no workgroup attributions (MLIR's
`workgroup(%a : memref<32xf32, 3>)`), so a block's shared memory is an op
of this dialect:

- `ember_gpu.shared : memref<32x33xf32, 3 : i64>`: one buffer per block,
  which every thread of the block reads and writes (after a `gpu.barrier`
  for another thread's writes to show), alive for the kernel's run. Its
  type is static and in memory space 3 (`SHARED_MEMORY_SPACE`, NVVM's
  address space for shared memory); it stands in the kernel's entry block.

xDSL 0.75's `gpu` dialect has no `gpu.shuffle`, so a warp's exchange of
registers is an op of this dialect too:

- `%r = ember_gpu.shuffle_xor %v, 16 : f32`: a *warp* is 32 threads of
  consecutive linear id `x + X * (y + Y * z)` (`WARP_SIZE`), starting at a
  multiple of 32, and a thread's *lane* is its linear id mod 32; every lane
  gets in `%r` the `%v` of lane `lane ^ mask` of its warp (a butterfly),
  `mask` a constant from 1 to 16 (`SHUFFLE_MASKS`). It is a warp-wide
  synchronisation point: all 32 lanes of the warp must reach it together
  (a full warp, so the block's thread count is a multiple of 32, and no
  lane may skip it under a condition the others take), as CUDA's
  `__shfl_xor_sync(0xffffffff, v, mask)` requires. No memory is involved
  and no other thread of the block waits: writes to shared memory do not
  show to other warps through it.

A structured op that runs as a block-tiled contraction carries its GPU
schedule as its `schedule` attribute (as a CPU schedule is a
`#loop.schedule`), written by the GPU target's `gpu-default-schedule`,
printable and editable by hand, obeyed by `convert-loop-to-gpu`:

    #ember_gpu.schedule<m = [0], n = [1], k = [2], block = [64, 64], threads = [16, 16], k_tile = 16, vector = [4, 4], stages = 2>

- `m`, `n`, `k`: the op's dims the product runs along, as a matrix product
  of M x K by K x N: the rows are the points of the `m` dims (parallel dims
  the output and one operand read), the columns those of the `n` dims
  (parallel dims the output and the other operand read), the reduction
  those of the `k` dims (every reduction dim), each group numbered
  row-major. A convolution is such a product over its output channels,
  its output pixels and its (channel, window) points ("implicit GEMM");
  the op's other dims are batch dims, one grid z index per point;
- `block = [BM, BN]`: the outputs one block computes, BM rows by BN
  columns (the grid covers the output in such tiles, partial ones at the
  edges);
- `threads = [TX, TY]`: the block's threads, TX along n by TY along m; each
  computes a register tile of (BM / TY) x (BN / TX) outputs, thread (tx, ty)
  the rows ty, ty + TY, ... and the columns tx, tx + TX, ... of its block's
  tile, so neighbouring threads touch neighbouring columns (coalesced);
- `k_tile = BK`: the reduction runs in steps of BK, each staging a BM x BK
  tile of the first operand and a BK x BN tile of the second in shared
  memory (`ember_gpu.shared`), loaded by all the block's threads together
  between two `gpu.barrier`s;
- `vector = [VR, VC]` (optional, 1 each when left out): the elements one
  load copies from the row operand's tile (along k) and from the column
  operand's (along n): 1, 2 or 4 (`VECTOR_WIDTHS`; 4 f32 are one 16-byte
  `ld.global.v4.f32`); `convert-loop-to-gpu` takes a width above 1 only
  where the operand is contiguous along that group and aligned to it;
- `stages = S` (optional, 1 when left out): 1 or 2 (`STAGES`) pairs of
  tiles; with 2, each step loads the next step's tiles into registers
  before it multiplies the current ones and stores them into the other
  pair after, so the loads overlap the products and a step needs one
  barrier, not two.

An elementwise generic right after such a contraction whose values it can
compute from the contraction's in registers (a bias, an activation, a
residual: `ember.passes.loop.epilogue`'s rules) carries `#ember_gpu.epilogue`:
it runs in the contraction's kernel, on each output value before the store,
and no kernel of its own.

A product operand that is a padded copy (a buffer only written by fills of
one constant into parts of it and one `linalg.copy` into the rest, and
read only by the contraction: a convolution's `tensor.pad` on buffers)
has those fills and the copy marked `#ember_gpu.padding`: they run no
kernel of their own; the contraction's loads read the copy's source where
the point is inside it and take the fill's value elsewhere (bounds checks,
no padded buffer written). A depthwise convolution's padded input
(below) is marked and read so too, by its window's staging.

A reduction whose body folds one value of its inputs into its one output
with one associative, commutative operation (`out = combine(g(inputs...),
out)`) over many points runs one block per point of its parallel dims:

    #ember_gpu.reduce<threads = 256>

- `threads`: the block's threads, a power of two from 32 (a warp) to 1024
  (CUDA's limit); thread t folds the row's reduction points t, t + threads,
  ... from the combiner's identity, and the block combines the threads'
  partials in shared memory, halving them between barriers down to 32,
  and the first warp finishes with `shuffle_xor`s
  (`ember.lowering.loop_to_gpu.reduction` says how);
- `rows = R` (optional, printed where not 1): with `threads = 32`, a block
  runs R rows, a warp each (32 x R threads), for rows too short to fill a
  block: the warp's lanes fold the row's points side by side and combine
  their partials with shuffles alone, no shared memory and no barrier.

A convolution whose every output point reads one plane of its input (a
depthwise one: no channel summed) runs as windows staged in shared
memory:

    #ember_gpu.window<tile = [16, 32], threads = [16, 8]>

- `tile = [TH, TW]`: the output points one block computes, TH along the
  output's second-to-last dim by TW along its last (the grid covers each
  plane, every point of its other dims, in such tiles); the block stages
  the input window those outputs read, halo included, in shared memory
  once (`ember.lowering.loop_to_gpu.window` says how);
- `threads = [TX, TY]`: the block's threads, TX along the last dim by TY
  along the one before; each computes a register tile of (TH / TY) x
  (TW / TX) outputs from the staged window, thread (tx, ty) the rows ty,
  ty + TY, ... and the columns tx, tx + TX, ... of the block's tile.

Every other structured op runs with a `#loop.schedule` whose parallel dims
come first (`gpu-default-schedule` writes it): `loop-generate` makes its
nest and `convert-loop-to-gpu` gives each point of the parallel band a
thread.

The name follows `ember_linalg`: a project prefix, so it never shadows an
upstream dialect (`gpu` must keep parsing in `ember-opt`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I32, ArrayAttr, IntAttr, IntegerAttr, MemRefType, f32, i32, i64
from xdsl.dialects.gpu import FuncOp as GpuFuncOp
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ember.dialects.schedule import KernelSchedule, parse_fields

SHARED_MEMORY_SPACE = 3
"""The memory space of a block's shared memory (NVVM's address space 3)."""


def shared_memory_type(element: Attribute, shape: tuple[int, ...]) -> MemRefType:
    """The type of a shared-memory buffer of `shape` elements of `element`."""
    return MemRefType(element, shape, memory_space=IntegerAttr(SHARED_MEMORY_SPACE, i64))


def is_shared(memref_type: Attribute) -> bool:
    """Whether `memref_type` is a memref in shared memory."""
    if not isinstance(memref_type, MemRefType):
        return False
    space = memref_type.memory_space
    return isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE


@irdl_op_definition
class SharedOp(IRDLOperation):
    """A block's shared-memory buffer (see the module docstring)."""

    name = "ember_gpu.shared"
    buffer = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($buffer)"

    def __init__(self, buffer_type: MemRefType):
        super().__init__(result_types=[buffer_type])

    def verify_(self) -> None:
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, MemRefType)
        if not is_shared(buffer_type):
            raise VerifyException(
                f"{self.name}: the buffer must be in memory space {SHARED_MEMORY_SPACE}, "
                f"got {buffer_type}"
            )
        if not buffer_type.has_static_shape():
            raise VerifyException(f"{self.name}: the buffer must have a static shape")
        func = self.parent_op()
        if not isinstance(func, GpuFuncOp) or self.parent_block() is not func.body.blocks[0]:
            raise VerifyException(f"{self.name}: must stand in a gpu.func's entry block")


WARP_SIZE = 32
"""The threads of a warp: the lanes a shuffle exchanges values among."""
SHUFFLE_MASKS = range(1, WARP_SIZE // 2 + 1)
"""The lane masks a `shuffle_xor` may take, 1 to 16: each keeps the partner
lane in the warp (a warp reduction uses 16, 8, 4, 2, 1)."""


@irdl_op_definition
class ShuffleXorOp(IRDLOperation):
    """Every lane of a warp gets `value` of lane `lane ^ mask` (see the
    module docstring): a warp-wide synchronisation point."""

    name = "ember_gpu.shuffle_xor"
    value = operand_def(f32)
    mask = prop_def(IntegerAttr[I32])
    result = result_def(f32)
    assembly_format = "$value `,` $mask attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, mask: int):
        super().__init__(operands=[value], properties={"mask": IntegerAttr(mask, i32)},
                         result_types=[value.type])  # fmt: skip

    @property
    def lane_mask(self) -> int:
        return self.mask.value.data

    def verify_(self) -> None:
        if self.lane_mask not in SHUFFLE_MASKS:
            raise VerifyException(
                f"{self.name}: the mask must be a lane number from {SHUFFLE_MASKS.start} to "
                f"{SHUFFLE_MASKS.stop - 1}, got {self.lane_mask}"
            )
        parent = self.parent_op()
        while parent is not None and not isinstance(parent, GpuFuncOp):
            parent = parent.parent_op()
        if parent is None:
            raise VerifyException(f"{self.name}: must stand in a gpu.func (a kernel's warp)")


MAX_THREADS = 1024
"""The most threads a block may have (CUDA's limit)."""
MAX_REGISTER_TILE = 64
"""The most outputs one thread accumulates (registers it keeps live)."""
MAX_SHARED_BYTES = 48 * 1024
"""The most shared memory a block may stage (CUDA's static limit)."""
VECTOR_WIDTHS = (1, 2, 4)
"""The elements one staging load may copy (4 f32: a 16-byte access)."""
STAGES = (1, 2)
"""The pairs of shared tiles a tiled contraction may keep (2: double buffering)."""


def tiling_problem(groups: Sequence[Sequence[int]], block: Sequence[int], threads: Sequence[int],
                   k_tile: int, vector: Sequence[int] = (1, 1), stages: int = 1,
                   element_bytes: int = 4) -> str | None:  # fmt: skip
    """What is wrong with these fields of a `#ember_gpu.schedule` (None if
    nothing): the rules every tiled contraction's schedule keeps. `groups`
    are the m, n and k dims."""
    dims = [d for group in groups for d in group]
    if not all(groups) or len(set(dims)) != len(dims) or min(dims) < 0:
        return (f"m, n and k must be non-empty and name distinct dims, got "
                f"{', '.join(f'{g} = {list(v)}' for g, v in zip('mnk', groups))}")  # fmt: skip
    if len(block) != 2 or len(threads) != 2 or min(*block, *threads, k_tile) < 1:
        return (f"block and threads must be two positive sizes and k_tile positive, got "
                f"block = {list(block)}, threads = {list(threads)}, k_tile = {k_tile}")  # fmt: skip
    (bm, bn), (tx, ty) = block, threads
    if bm % ty or bn % tx:
        return f"block = {list(block)} must be whole multiples of [threads[1], threads[0]] = [{ty}, {tx}]"
    count = tx * ty
    if count > MAX_THREADS:
        return f"{count} threads per block, more than {MAX_THREADS}"
    if (bm // ty) * (bn // tx) > MAX_REGISTER_TILE:
        return (f"each thread would accumulate {bm // ty} x {bn // tx} outputs, more than "
                f"{MAX_REGISTER_TILE}")  # fmt: skip
    if len(vector) != 2 or any(v not in VECTOR_WIDTHS for v in vector):
        return f"vector must be two widths out of {list(VECTOR_WIDTHS)}, got {list(vector)}"
    if stages not in STAGES:
        return f"stages must be one of {list(STAGES)}, got {stages}"
    vr, vc = vector
    if k_tile % vr or bn % vc:
        return (f"vector = {list(vector)} must divide the tiles' rows of k_tile = {k_tile} and "
                f"block[1] = {bn} elements")  # fmt: skip
    if (bm * k_tile // vr) % count or (k_tile * bn // vc) % count:
        return (f"the staged tiles ({bm} x {k_tile} and {k_tile} x {bn}, in loads of "
                f"{vr} and {vc}) must split evenly among the {count} threads")  # fmt: skip
    shared = stages * (bm + bn) * k_tile * element_bytes
    if shared > MAX_SHARED_BYTES:
        return (
            f"the staged tiles need {shared} bytes of shared memory, more than {MAX_SHARED_BYTES}"
        )
    return None


def _ints(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(v) for v in values])


_LIST_FIELDS = ("m", "n", "k", "block", "threads")
_FIELDS = (*_LIST_FIELDS, "k_tile", "vector", "stages")
_OPTIONAL: dict[str, list[int] | int] = {"vector": [1, 1], "stages": 1}


@irdl_attr_definition
class GpuScheduleAttr(ParametrizedAttribute, KernelSchedule):
    """How a contraction runs as block tiles on a GPU (see the module docstring)."""

    name = "ember_gpu.schedule"

    m: ArrayAttr[IntAttr]
    n: ArrayAttr[IntAttr]
    k: ArrayAttr[IntAttr]
    block: ArrayAttr[IntAttr]
    threads: ArrayAttr[IntAttr]
    k_tile: IntAttr
    vector: ArrayAttr[IntAttr]
    stages: IntAttr

    def __init__(self, m: Sequence[int], n: Sequence[int], k: Sequence[int],
                 block: Sequence[int], threads: Sequence[int], k_tile: int,
                 vector: Sequence[int] = (1, 1), stages: int = 1):  # fmt: skip
        super().__init__(_ints(m), _ints(n), _ints(k), _ints(block), _ints(threads),
                         IntAttr(k_tile), _ints(vector), IntAttr(stages))  # fmt: skip

    @property
    def groups(self) -> tuple[list[int], list[int], list[int]]:
        """The m, n and k dims."""
        m, n, k = ([d.data for d in group.data] for group in (self.m, self.n, self.k))
        return m, n, k

    @property
    def block_tile(self) -> tuple[int, int]:
        """(BM, BN)."""
        bm, bn = (v.data for v in self.block.data)
        return bm, bn

    @property
    def block_threads(self) -> tuple[int, int]:
        """(TX, TY)."""
        tx, ty = (v.data for v in self.threads.data)
        return tx, ty

    @property
    def k_step(self) -> int:
        return self.k_tile.data

    @property
    def vector_widths(self) -> tuple[int, int]:
        """(VR, VC): the elements per staging load of the row and the column operand."""
        vr, vc = (v.data for v in self.vector.data)
        return vr, vc

    @property
    def buffers(self) -> int:
        """The pairs of shared tiles (the `stages` field)."""
        return self.stages.data

    def verify(self) -> None:
        problem = tiling_problem(self.groups, self.block_tile, self.block_threads, self.k_step,
                                 self.vector_widths, self.buffers)  # fmt: skip
        if problem is not None:
            raise VerifyException(f"{self.name}: {problem}")

    def print_parameters(self, printer: Printer) -> None:
        fields = [f"{name} = {[v.data for v in getattr(self, name).data]}" for name in _LIST_FIELDS]
        fields += [f"k_tile = {self.k_step}", f"vector = {list(self.vector_widths)}",
                   f"stages = {self.buffers}"]  # fmt: skip
        printer.print_string(f"<{', '.join(fields)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[ArrayAttr[IntAttr] | IntAttr]:
        values, start, end = parse_fields(parser, cls.name, _FIELDS, ("k_tile", "stages"))
        missing = [name for name in _FIELDS if name not in values and name not in _OPTIONAL]
        if missing:
            parser.raise_error(f"{cls.name}: {', '.join(missing)} required", start, end)
        m, n, k, block, threads, k_tile, vector, stages = (
            values.get(name, _OPTIONAL.get(name)) for name in _FIELDS
        )
        lists = (m, n, k, block, threads)
        assert all(isinstance(v, list) for v in (*lists, vector))
        assert isinstance(k_tile, int) and isinstance(stages, int)
        problem = tiling_problem((m, n, k), block, threads, k_tile, vector, stages)  # type: ignore[arg-type]
        if problem is not None:
            parser.raise_error(f"{cls.name}: {problem}", start, end)
        return [*(_ints(v) for v in lists), IntAttr(k_tile), _ints(vector), IntAttr(stages)]  # type: ignore[arg-type]


@irdl_attr_definition
class EpilogueAttr(ParametrizedAttribute, KernelSchedule):
    """The schedule of an elementwise generic that runs in the registers of
    the tiled contraction before it (see the module docstring)."""

    name = "ember_gpu.epilogue"


@irdl_attr_definition
class PaddingAttr(ParametrizedAttribute, KernelSchedule):
    """The schedule of a `linalg.fill` or `linalg.copy` that builds a padded
    operand of the tiled contraction or window convolution after it (see
    the module docstring)."""

    name = "ember_gpu.padding"


MIN_REDUCE_THREADS = 32
"""The fewest threads of a block-per-row reduction (a warp)."""


def reduce_threads_problem(threads: int, rows: int = 1) -> str | None:
    """What is wrong with `threads` and `rows` as a `#ember_gpu.reduce`'s
    fields (None if nothing): `threads` a power of two from
    `MIN_REDUCE_THREADS` to `MAX_THREADS`, so the tree of partials halves
    evenly down to one; `rows` positive, above 1 only for a warp a row
    (`threads` 32), and at most `MAX_THREADS` threads a block."""
    if not MIN_REDUCE_THREADS <= threads <= MAX_THREADS or threads & (threads - 1):
        return (f"threads must be a power of two from {MIN_REDUCE_THREADS} to {MAX_THREADS}, "
                f"got {threads}")  # fmt: skip
    if rows < 1 or (rows > 1 and threads != WARP_SIZE) or threads * rows > MAX_THREADS:
        return (f"rows must be 1, or with threads = {WARP_SIZE} (a warp a row) at most "
                f"{MAX_THREADS // WARP_SIZE}, got rows = {rows} with threads = {threads}")  # fmt: skip
    return None


@irdl_attr_definition
class ReduceScheduleAttr(ParametrizedAttribute, KernelSchedule):
    """How a reduction runs as one block per point of its parallel dims (see
    the module docstring)."""

    name = "ember_gpu.reduce"

    threads: IntAttr
    rows: IntAttr

    def __init__(self, threads: int, rows: int = 1):
        super().__init__(IntAttr(threads), IntAttr(rows))

    @property
    def block_threads(self) -> int:
        """The threads of a row (a block's, where `rows` is 1)."""
        return self.threads.data

    @property
    def block_rows(self) -> int:
        return self.rows.data

    def verify(self) -> None:
        problem = reduce_threads_problem(self.block_threads, self.block_rows)
        if problem is not None:
            raise VerifyException(f"{self.name}: {problem}")

    def print_parameters(self, printer: Printer) -> None:
        rows = f", rows = {self.block_rows}" if self.block_rows != 1 else ""
        printer.print_string(f"<threads = {self.block_threads}{rows}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[IntAttr]:
        with parser.in_angle_brackets():
            start = parser.pos
            parser.parse_keyword("threads", " (the ember_gpu.reduce field)")
            parser.parse_punctuation("=")
            threads = parser.parse_integer(allow_boolean=False)
            rows = 1
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("rows", " (the ember_gpu.reduce field after threads)")
                parser.parse_punctuation("=")
                rows = parser.parse_integer(allow_boolean=False)
            end = parser.pos
        problem = reduce_threads_problem(threads, rows)
        if problem is not None:
            parser.raise_error(f"{cls.name}: {problem}", start, end)
        return [IntAttr(threads), IntAttr(rows)]


def window_tiling_problem(tile: Sequence[int], threads: Sequence[int]) -> str | None:
    """What is wrong with these fields of a `#ember_gpu.window` (None if
    nothing): two positive sizes each, the tile whole multiples of the
    threads, at most `MAX_THREADS` threads and `MAX_REGISTER_TILE` outputs
    a thread. (The staged window's size depends on the op's strides: the
    lowering checks it against `MAX_SHARED_BYTES`.)"""
    if len(tile) != 2 or len(threads) != 2 or min(*tile, *threads) < 1:
        return (f"tile and threads must be two positive sizes, got tile = {list(tile)}, "
                f"threads = {list(threads)}")  # fmt: skip
    (th, tw), (tx, ty) = tile, threads
    if th % ty or tw % tx:
        return f"tile = {list(tile)} must be whole multiples of [threads[1], threads[0]] = [{ty}, {tx}]"
    if tx * ty > MAX_THREADS:
        return f"{tx * ty} threads per block, more than {MAX_THREADS}"
    if (th // ty) * (tw // tx) > MAX_REGISTER_TILE:
        return (f"each thread would compute {th // ty} x {tw // tx} outputs, more than "
                f"{MAX_REGISTER_TILE}")  # fmt: skip
    return None


_WINDOW_FIELDS = ("tile", "threads")


@irdl_attr_definition
class WindowScheduleAttr(ParametrizedAttribute, KernelSchedule):
    """How a depthwise convolution runs as output tiles computed from input
    windows staged in shared memory (see the module docstring)."""

    name = "ember_gpu.window"

    tile: ArrayAttr[IntAttr]
    threads: ArrayAttr[IntAttr]

    def __init__(self, tile: Sequence[int], threads: Sequence[int]):
        super().__init__(_ints(tile), _ints(threads))

    @property
    def block_tile(self) -> tuple[int, int]:
        """(TH, TW)."""
        th, tw = (v.data for v in self.tile.data)
        return th, tw

    @property
    def block_threads(self) -> tuple[int, int]:
        """(TX, TY)."""
        tx, ty = (v.data for v in self.threads.data)
        return tx, ty

    def verify(self) -> None:
        problem = window_tiling_problem(self.block_tile, self.block_threads)
        if problem is not None:
            raise VerifyException(f"{self.name}: {problem}")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<tile = {list(self.block_tile)}, threads = {list(self.block_threads)}>"
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[ArrayAttr[IntAttr]]:
        values, start, end = parse_fields(parser, cls.name, _WINDOW_FIELDS, ())
        missing = [name for name in _WINDOW_FIELDS if name not in values]
        if missing:
            parser.raise_error(f"{cls.name}: {', '.join(missing)} required", start, end)
        tile, threads = (values[name] for name in _WINDOW_FIELDS)
        assert isinstance(tile, list) and isinstance(threads, list)
        problem = window_tiling_problem(tile, threads)
        if problem is not None:
            parser.raise_error(f"{cls.name}: {problem}", start, end)
        return [_ints(tile), _ints(threads)]


EmberGpu = Dialect(
    "ember_gpu",
    [SharedOp, ShuffleXorOp],
    [GpuScheduleAttr, EpilogueAttr, PaddingAttr, ReduceScheduleAttr, WindowScheduleAttr],
)

__all__ = [
    "MAX_REGISTER_TILE",
    "MAX_SHARED_BYTES",
    "MAX_THREADS",
    "MIN_REDUCE_THREADS",
    "SHARED_MEMORY_SPACE",
    "SHUFFLE_MASKS",
    "STAGES",
    "VECTOR_WIDTHS",
    "WARP_SIZE",
    "EmberGpu",
    "EpilogueAttr",
    "GpuScheduleAttr",
    "PaddingAttr",
    "ReduceScheduleAttr",
    "SharedOp",
    "ShuffleXorOp",
    "WindowScheduleAttr",
    "is_shared",
    "reduce_threads_problem",
    "shared_memory_type",
    "tiling_problem",
    "window_tiling_problem",
]
