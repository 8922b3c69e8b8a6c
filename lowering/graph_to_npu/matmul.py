"""Matrix products as NPU programs: `C = A B (+ bias) (ReLU)`, tiled to the
scratchpad and the accumulator, with double-buffered DMA.

The schedule (`MatmulSchedule`) is output-stationary over blocks of
`block_m` x `block_n` output tiles of `dim` x `dim`: a block's tiles stay in
one accumulator region while the k loop runs; each k step loads the
block's `block_m` tiles of A and `block_n` tiles of B into one of `buffers`
scratchpad slots and runs `block_m * block_n` gemms on them, so a loaded
tile is used `block_n` (or `block_m`) times. With two or more slots the
loads of step s + 1 overlap the gemms of step s; with two or more
accumulator regions the stores of one block overlap the next block's
gemms. `default_schedule` picks the block that the cycle estimate
(`estimate_cycles`: per step, the longer of its DMA and its gemms) says is
fastest, among those the accumulator holds.

A bias (a row of n values added to every row of C, or with `bias_per_row`
a column of m values) is one more k step. For floats the gemm multiplies a
resident column of ones (m x 1, loaded once) by the bias row (1 x n), or
the bias column by a row of ones, so it costs one gemm per tile and no
vector-unit pass. An int8 product's bias is int32, which the matrix unit
cannot take: its step loads the block's bias tiles into accumulator slots
(next to the regions, given back to the loads like scratchpad slots) and
adds them with one `alu` per tile. A ReLU
is one `alu` per tile on the accumulator (float), or part of the store's
requantisation (int8 out).

Tokens (docs/npu-isa.md, "Modules and dependency tokens"): the last load of
a step pushes to compute and the step's first gemm pops; the step's last
gemm gives the slot back (push_prev) when a later step of the product
reloads it, and that step's first load pops; the block's last compute
instruction pushes to store and its first store pops; the block's last
store gives its region back when a later block of the product reuses it.
Between two products the last store pushes to compute and a relay `alu`
(a move on a spare accumulator row) passes the token on to the load
module: the next product's first load waits for it, so it reads what the
previous product stored to DRAM and overwrites no slot still in use.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ember.dialects.npu.machine import (
    ALU_OPS,
    ELEMENT_TYPES,
    F32,
    INT8,
    INT32,
    MAX_STRIDE,
    ElementType,
    Instruction,
    NpuParams,
    NpuProgramError,
    f32_bits,
)
from ember.lowering.graph_to_npu.scratchpad import Operand, allocate


@dataclass(frozen=True)
class Piece:
    """One DMA of a tile: `rows` rows of `cols` elements, row r from
    `dram_addr + r * stride`, at row `first` of the tile."""

    dram_addr: int
    stride: int
    rows: int
    cols: int
    first: int = 0
    step: int = 1
    """Elements between a row's elements in DRAM (`load_strided` when not 1)."""


class Access(Protocol):
    """Where a matrix operand's elements live in DRAM."""

    def pieces(self, row: int, rows: int, col: int, cols: int) -> list[Piece]:
        """The DMAs that move the tile of `rows` x `cols` at (`row`, `col`)."""
        ...


@dataclass(frozen=True)
class RowMajor:
    """A dense matrix: row r at `address + r * row_bytes`."""

    address: int
    row_bytes: int
    elem_bytes: int

    def pieces(self, row: int, rows: int, col: int, cols: int) -> list[Piece]:
        start = self.address + row * self.row_bytes + col * self.elem_bytes
        return [Piece(start, self.row_bytes, rows, cols)]


@dataclass(frozen=True)
class Planes:
    """One NCHW image as a matrix read in place: row r = (c, i, j), a channel
    and a position in a `kernel` window (dilated by `dilation`), column
    n = (y, x), a position of the `width`-wide output; the element is the
    image's at (c, y * sh + i * dh + top, x * sw + j * dw + left) in its
    stored planes (`plane_bytes` apart, rows `pitch_bytes` apart; `offset`
    = (top, left) places the window in the stored halo; `strides` =
    (sh, sw)). With a 1 x 1 kernel it is the image itself, channels by
    pixels (a convolution's output); with a kernel, a convolution's im2col
    matrix, never built: a row of a tile is consecutive input elements
    (every sw-th: a strided load). A tile's columns lie in one output row
    (see `Matmul.col_tiles`)."""

    address: int
    plane_bytes: int
    pitch_bytes: int
    width: int
    elem_bytes: int
    offset: tuple[int, int] = (0, 0)
    kernel: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    strides: tuple[int, int] = (1, 1)

    def _address(self, row: int, col: int) -> int:
        channel, window = divmod(row, self.kernel[0] * self.kernel[1])
        i, j = divmod(window, self.kernel[1])
        y, x = divmod(col, self.width)
        return (self.address + channel * self.plane_bytes
                + (y * self.strides[0] + i * self.dilation[0] + self.offset[0]) * self.pitch_bytes
                + (x * self.strides[1] + j * self.dilation[1] + self.offset[1])
                * self.elem_bytes)  # fmt: skip

    def pieces(self, row: int, rows: int, col: int, cols: int) -> list[Piece]:
        """Maximal runs of rows whose addresses step by one stride the DMA
        can take (a 3 x 3 window: three rows a dilation apart per channel
        and kernel row; 1 x 1: every row a plane apart)."""
        starts = [self._address(row + t, col) for t in range(rows)]
        pieces: list[Piece] = []
        t = 0
        while t < rows:
            step = starts[t + 1] - starts[t] if t + 1 < rows else 0
            end = t + 1
            if 0 <= step <= MAX_STRIDE:
                while end < rows and starts[end] - starts[end - 1] == step:
                    end += 1
            pieces.append(Piece(starts[t], step if end - t > 1 else 0, end - t, cols, t,
                                self.strides[1]))  # fmt: skip
            t = end
        return pieces


@dataclass(frozen=True)
class Matmul:
    """One product: `c[m, n] = a[m, k] b[k, n] (+ bias) (ReLU)`, its operands
    where `a`, `b` and `c` say (`bias`: n values added to every row, or
    with `bias_per_row` m values, one per row)."""

    name: str
    m: int
    k: int
    n: int
    a: Access
    b: Access
    c: Access
    bias: Access | None = None
    relu: bool = False
    elem: ElementType = F32
    """A's and B's type (int8, bf16 or f32); a bias has the same."""
    out: ElementType = F32
    """C's type: f32 for float products; int8 (requantised) or int32 for int8."""
    scale: float | tuple[float, ...] = 1.0
    zero_point: int = 0
    """int8 out: C = clamp(round(relu?(acc) * scale) + zero_point); `scale`
    one value, or one per row (a convolution's output channels, each row
    stored after a `config_store` of its own)."""
    bias_per_row: bool = False
    col_tiles: tuple[tuple[int, int], ...] | None = None
    """The column tiles (first column, width): by default every `dim`
    columns; a convolution's stay within output rows."""

    @property
    def macs(self) -> int:
        return self.m * self.k * self.n

    def column_tiles(self, dim: int) -> list[tuple[int, int]]:
        if self.col_tiles is not None:
            return list(self.col_tiles)
        return [(j, min(dim, self.n - j)) for j in range(0, self.n, dim)]


def dense(name: str, m: int, k: int, n: int, a: int, b: int, c: int, bias: int | None = None,
          **options: Any) -> Matmul:  # fmt: skip
    """A product of dense row-major matrices at DRAM addresses `a`, `b`, `c`
    (and a bias row of n values)."""
    elem, out = options.get("elem", F32), options.get("out", F32)
    eb = elem.bytes
    return Matmul(name, m, k, n, RowMajor(a, k * eb, eb), RowMajor(b, n * eb, eb),
                  RowMajor(c, n * out.bytes, out.bytes),
                  None if bias is None else RowMajor(bias, n * eb, eb), **options)  # fmt: skip


@dataclass(frozen=True)
class MatmulSchedule:
    block_m: int
    block_n: int
    buffers: int = 2
    regions: int = 2

    def describe(self) -> str:
        return (f"blocks of {self.block_m}x{self.block_n} tiles, {self.buffers} SP buffers, "
                f"{self.regions} ACC regions")  # fmt: skip


def check_matmul(product: Matmul, params: NpuParams) -> str | None:
    """Why the NPU cannot run `product` (None: it can)."""
    if product.elem.code not in (INT8.code, F32.code, ELEMENT_TYPES[1].code):
        return f"{product.elem.name} operands"
    if product.out not in ((INT8, INT32) if product.elem == INT8 else (F32,)):
        return f"{product.out.name} results of {product.elem.name} operands"
    for what, access in (("A", product.a), ("B", product.b), ("C", product.c)):
        if isinstance(access, RowMajor) and access.row_bytes > MAX_STRIDE:
            return (f"rows of {what} of {access.row_bytes} bytes (the DMA strides at most "
                    f"{MAX_STRIDE})")  # fmt: skip
    return None


def _tiles(size: int, dim: int) -> int:
    return -(-size // dim)


def _bias_tiles(product: Matmul, schedule: MatmulSchedule) -> int:
    """Accumulator tiles per slot for an int8 product's int32 bias (one per
    row tile of a block, or per column tile), added by the vector unit."""
    if product.bias is None or product.elem != INT8:
        return 0
    return schedule.block_m if product.bias_per_row else schedule.block_n


def fits(schedule: MatmulSchedule, params: NpuParams, product: Matmul | None = None) -> bool:
    """Whether `schedule`'s regions (and an int8 product's bias slots) fit
    the accumulator, its last row left to the relays."""
    tiles = schedule.block_m * schedule.block_n * schedule.regions
    if product is not None:
        tiles += schedule.buffers * _bias_tiles(product, schedule)
    return tiles * params.dim <= params.accumulator_rows - 1  # the last row is the relays'


def estimate_cycles(product: Matmul, schedule: MatmulSchedule, params: NpuParams) -> int:
    """Per k step of every block, the longer of its loads and its gemms."""
    dim, tiles_m = params.dim, _tiles(product.m, params.dim)
    tiles_n = len(product.column_tiles(dim))
    steps = _tiles(product.k, dim) + (product.bias is not None)
    tile_bytes = dim * dim * product.elem.bytes
    total = 0
    for bi in range(0, tiles_m, schedule.block_m):
        for bj in range(0, tiles_n, schedule.block_n):
            bm, bn = min(schedule.block_m, tiles_m - bi), min(schedule.block_n, tiles_n - bj)
            dma = math.ceil((bm + bn) * tile_bytes / params.dma_bytes_per_cycle)
            total += steps * max(dma, bm * bn * dim)
    return total


def default_schedule(product: Matmul, params: NpuParams) -> MatmulSchedule:
    """The block the accumulator holds (two regions) that `estimate_cycles`
        says is fastest; on a tie, the one with more tiles per block (it loads
    less, and the estimate leaves out the DMA's latency)."""
    tiles_m, tiles_n = _tiles(product.m, params.dim), len(product.column_tiles(params.dim))
    best: tuple[int, int, MatmulSchedule] | None = None
    for bm in range(1, tiles_m + 1):
        for bn in range(1, tiles_n + 1):
            schedule = MatmulSchedule(bm, bn)
            if not fits(schedule, params, product):
                break
            key = (estimate_cycles(product, schedule, params), -bm * bn)
            if best is None or key < best[:2]:
                best = (*key, schedule)
    assert best is not None  # a 1 x 1 block always fits
    return best[2]


class ProgramBuilder:
    """The instructions of a program being generated, with the SP and ACC
    places its products share (the ones columns, the relay row)."""

    def __init__(self, params: NpuParams, ones: dict[int, int]):
        self.params = params
        self.instructions: list[Instruction] = []
        self.ones = ones
        """Per element type code, the DRAM address of `dim` ones (a column)."""
        self.products = 0

    def emit(self, mnemonic: str, flags: Sequence[str] = (), **fields: int) -> int:
        self.instructions.append(Instruction(mnemonic, fields, frozenset(flags)))
        return len(self.instructions) - 1

    def flag(self, index: int, flag: str) -> None:
        inst = self.instructions[index]
        self.instructions[index] = Instruction(inst.mnemonic, inst.fields, inst.flags | {flag})

    def finish(self) -> list[Instruction]:
        self.emit("finish")
        return self.instructions


def scratchpad_plan(product: Matmul, schedule: MatmulSchedule, params: NpuParams) -> dict[str, int]:
    """The first SP line of each load slot's tiles (and the ones); an
    NpuProgramError where they do not fit."""
    lines = params.dim * product.elem.bytes  # a full tile of the operand type
    operands = [Operand(f"{side}{slot}.{t}", lines, product.elem.bytes)
                for slot in range(schedule.buffers)
                for side, count in (("a", schedule.block_m), ("b", schedule.block_n))
                for t in range(count)]  # fmt: skip
    if product.bias is not None and product.elem != INT8:  # a column of dim ones, or a row
        ones = product.elem.bytes if product.bias_per_row else lines
        operands.append(Operand("ones", ones, product.elem.bytes))
    return allocate(operands, params)


def _gemm_operands(product: Matmul, sp: dict[str, int], slot: int, bias_step: bool, i: int,
                   j: int) -> tuple[int, int]:  # fmt: skip
    """The SP lines of A and B of tile (i, j)'s gemm (the bias step: the
    ones and the bias, on the side `bias_per_row` says)."""
    if bias_step and not product.bias_per_row:
        return sp["ones"], sp[f"b{slot}.{j}"]
    if bias_step:
        return sp[f"a{slot}.{i}"], sp["ones"]
    return sp[f"a{slot}.{i}"], sp[f"b{slot}.{j}"]


def _bias_slot(product: Matmul, schedule: MatmulSchedule, slot: int, tile: int, dim: int) -> int:
    """The ACC row of an int8 product's bias tile `tile` in load slot `slot`
    (after the regions)."""
    base = schedule.block_m * schedule.block_n * schedule.regions * dim
    return base + (slot * _bias_tiles(product, schedule) + tile) * dim


def _int8_bias_loads(builder: ProgramBuilder, product: Matmul, schedule: MatmulSchedule,
                     slot: int, row_tiles: list[tuple[int, int]],
                     cols: list[tuple[int, int]]) -> list[int]:  # fmt: skip
    """A block's bias tiles into the accumulator (int32). Per row tile
    (`bias_per_row`): its rows, `dim` values each, from an access whose
    rows repeat each row's bias; per column tile: the block's tallest row
    count of its columns, from an access with stride 0 (the row repeated)."""
    assert product.bias is not None
    dim = builder.params.dim
    if product.bias_per_row:
        tiles = [(row, height, 0, dim) for row, height in row_tiles]
    else:
        tiles = [(0, row_tiles[0][1], col, width) for col, width in cols]
    return [builder.emit("load", dram_addr=piece.dram_addr, stride=piece.stride,
                         local=_bias_slot(product, schedule, slot, t, dim) + piece.first,
                         rows=piece.rows, cols=piece.cols, to_acc=1, elem=INT32.code)
            for t, (row, rows, col, width) in enumerate(tiles)
            for piece in product.bias.pieces(row, rows, col, width)]  # fmt: skip


def _int8_bias_adds(builder: ProgramBuilder, product: Matmul, schedule: MatmulSchedule, slot: int,
                    row_tiles: list[tuple[int, int]], cols: list[tuple[int, int]],
                    tile_row: dict[tuple[int, int], int]) -> list[int]:  # fmt: skip
    """tile += its bias tile, on the vector unit (int32)."""
    dim = builder.params.dim
    return [builder.emit("alu", op=ALU_OPS.index("add"), src=row,
                         src2=_bias_slot(product, schedule, slot, i if product.bias_per_row
                                         else j, dim),
                         dst=row, rows=row_tiles[i][1], cols=cols[j][1], use_imm=0,
                         elem=INT32.code, imm=0)
            for (i, j), row in tile_row.items()]  # fmt: skip


def emit_matmul(builder: ProgramBuilder, product: Matmul, schedule: MatmulSchedule,
                more_follow: bool = False) -> range:  # fmt: skip
    """Appends the instructions of `product` (after the builder's earlier
    products, see the module docstring; `more_follow`: its last store gives
    a token for the relay to the next one); returns their indices."""
    params, dim = builder.params, builder.params.dim
    problem = check_matmul(product, params)
    if problem is not None:
        raise NpuProgramError(f"{product.name}: the NPU cannot run {problem}")
    if not fits(schedule, params, product):
        raise NpuProgramError(f"{product.name}: {schedule.describe()} overflow the accumulator")
    start = len(builder.instructions)
    first = builder.products == 0
    builder.products += 1
    sp = scratchpad_plan(product, schedule, params)
    eb = product.elem.bytes
    acc_elem = (INT32 if product.elem == INT8 else F32).code
    if product.out == INT8 and not isinstance(product.scale, tuple):
        builder.emit("config_store", scale=f32_bits(product.scale), zero_point=product.zero_point,
                     relu=int(product.relu))  # fmt: skip
    tiles_m, col_tiles = _tiles(product.m, dim), product.column_tiles(dim)
    blocks = [(bi, bj) for bi in range(0, tiles_m, schedule.block_m)
              for bj in range(0, len(col_tiles), schedule.block_n)]  # fmt: skip
    k_steps: list[int | None] = [*range(0, product.k, dim)]
    if product.bias is not None:
        k_steps.append(None)  # the bias step
    total_steps = len(blocks) * len(k_steps)
    region_rows = schedule.block_m * schedule.block_n * dim
    line_rows = product.elem.bytes  # SP lines per row of an operand

    def load(piece: Piece, local: int) -> int:
        strided = {"step": piece.step} if piece.step != 1 else {}
        return builder.emit("load_strided" if strided else "load", dram_addr=piece.dram_addr,
                            stride=piece.stride, local=local + piece.first * line_rows,
                            rows=piece.rows, cols=piece.cols, to_acc=0, elem=product.elem.code,
                            **strided)  # fmt: skip

    step = 0
    for b, (bi, bj) in enumerate(blocks):
        row_tiles = [(t * dim, min(dim, product.m - t * dim))
                     for t in range(bi, min(bi + schedule.block_m, tiles_m))]  # fmt: skip
        cols = col_tiles[bj : bj + schedule.block_n]
        region = (b % schedule.regions) * region_rows
        tile_row = {(i, j): region + (i * schedule.block_n + j) * dim
                    for i in range(len(row_tiles)) for j in range(len(cols))}  # fmt: skip
        for s, p in enumerate(k_steps):
            slot = step % schedule.buffers
            loads = []
            if step == 0 and product.bias is not None and product.elem != INT8:  # the ones, once
                ones = builder.ones[product.elem.code]
                shape = (1, dim) if product.bias_per_row else (dim, 1)
                loads.append(load(Piece(ones, eb, *shape), sp["ones"]))
            if p is None and product.elem == INT8:  # the int32 bias, into ACC
                loads += _int8_bias_loads(builder, product, schedule, slot, row_tiles, cols)
            elif p is None:  # the bias: a k = 1 product with the ones
                depth = 1
                assert product.bias is not None
                if product.bias_per_row:
                    for i, (row, height) in enumerate(row_tiles):
                        loads += [load(piece, sp[f"a{slot}.{i}"])
                                  for piece in product.bias.pieces(row, height, 0, 1)]  # fmt: skip
                else:
                    for j, (col, width) in enumerate(cols):
                        loads += [load(piece, sp[f"b{slot}.{j}"])
                                  for piece in product.bias.pieces(0, 1, col, width)]  # fmt: skip
            else:
                depth = min(dim, product.k - p)
                for i, (row, height) in enumerate(row_tiles):
                    loads += [load(piece, sp[f"a{slot}.{i}"])
                              for piece in product.a.pieces(row, height, p, depth)]  # fmt: skip
                for j, (col, width) in enumerate(cols):
                    loads += [load(piece, sp[f"b{slot}.{j}"])
                              for piece in product.b.pieces(p, depth, col, width)]  # fmt: skip
            if step >= schedule.buffers or (step == 0 and not first):
                builder.flag(loads[0], "pop_next")  # the slot given back, or the relay
            builder.flag(loads[-1], "push_next")
            if p is None and product.elem == INT8:  # the compute of a step: adds, or gemms
                gemms = _int8_bias_adds(builder, product, schedule, slot, row_tiles, cols,
                                        tile_row)  # fmt: skip
            else:
                operands = [(i, j, *_gemm_operands(product, sp, slot, p is None, i, j))
                            for i in range(len(row_tiles)) for j in range(len(cols))]  # fmt: skip
                gemms = [builder.emit(
                    "gemm", a=a, b=b_line, c=tile_row[i, j], m=row_tiles[i][1], k=depth,
                    n=cols[j][1], accumulate=int(s > 0), elem=product.elem.code)
                    for i, j, a, b_line in operands]  # fmt: skip
            builder.flag(gemms[0], "pop_prev")
            if s == 0 and b >= schedule.regions:
                builder.flag(gemms[0], "pop_next")  # the region's last store is done
            if step + schedule.buffers < total_steps:
                builder.flag(gemms[-1], "push_prev")
            step += 1
        tail = gemms[-1]
        if product.relu and product.out != INT8:
            for (i, j), row in tile_row.items():
                tail = builder.emit("alu", op=ALU_OPS.index("relu"), src=row, src2=row, dst=row,
                                    rows=row_tiles[i][1], cols=cols[j][1], use_imm=0,
                                    elem=acc_elem, imm=0)  # fmt: skip
        builder.flag(tail, "push_next")
        stores = _stores(builder, product, row_tiles, cols, tile_row)
        builder.flag(stores[0], "pop_prev")
        if b + schedule.regions < len(blocks) or (b == len(blocks) - 1 and more_follow):
            builder.flag(stores[-1], "push_prev")  # the region back, or the relay's token
    return range(start, len(builder.instructions))


def _stores(builder: ProgramBuilder, product: Matmul, row_tiles: list[tuple[int, int]],
            cols: list[tuple[int, int]], tile_row: dict[tuple[int, int], int]) -> list[int]:  # fmt: skip
    """A block's tiles from the accumulator to C, in as few DMAs as its
    access allows; with a scale per row, row by row, each after the
    `config_store` of its scale. Returns the stores' indices."""
    per_row = isinstance(product.scale, tuple)
    stores = []
    for (i, j), row in tile_row.items():
        (first, height), (col, width) = row_tiles[i], cols[j]
        spans = [(first + r, 1, r) for r in range(height)] if per_row else [(first, height, 0)]
        for start, rows, offset in spans:
            if per_row:
                scale = product.scale[start]  # type: ignore[index]
                builder.emit("config_store", scale=f32_bits(scale), zero_point=product.zero_point,
                             relu=int(product.relu))  # fmt: skip
            stores += [builder.emit(
                "store", dram_addr=piece.dram_addr, stride=piece.stride,
                local=row + offset + piece.first, rows=piece.rows, cols=piece.cols, from_acc=1,
                elem=product.out.code)
                for piece in product.c.pieces(start, rows, col, width)]  # fmt: skip
    return stores


def emit_relay(builder: ProgramBuilder) -> int:
    """Between two products: the token of the last store passed on to the
    load module (see the module docstring)."""
    spare = builder.params.accumulator_rows - 1
    return builder.emit("alu", ("pop_next", "push_prev"), op=ALU_OPS.index("move"), src=spare,
                        src2=spare, dst=spare, rows=1, cols=1, use_imm=1, elem=F32.code, imm=0)  # fmt: skip


def emit_products(builder: ProgramBuilder, products: Sequence[Any], schedules: Sequence[Any],
                  emit: Callable[[ProgramBuilder, Any, Any, bool], range] = emit_matmul,
                  ) -> list[range]:  # fmt: skip
    """The products one after the other (each after the previous one's
    stores, through a relay), each product's instruction indices. `emit`
    appends one (with its schedule; whether more follow): `emit_matmul`, or
    one that also takes the vector unit's layers."""
    ranges = []
    for index, (product, schedule) in enumerate(zip(products, schedules, strict=True)):
        if index:
            emit_relay(builder)
        ranges.append(emit(builder, product, schedule, index + 1 < len(products)))
    return ranges


__all__ = ["Access", "Matmul", "MatmulSchedule", "Piece", "Planes", "RowMajor", "dense", "ProgramBuilder", "check_matmul",
           "default_schedule", "emit_matmul", "fits", "scratchpad_plan", "emit_products", "emit_relay", "estimate_cycles"]  # fmt: skip
