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

A bias (a row of n values added to every row of C) is one more k step: the
gemm multiplies a resident column of ones (m x 1, loaded once) by the bias
row (1 x n), so it costs one gemm per tile and no vector-unit pass. A ReLU
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
from collections.abc import Sequence
from dataclasses import dataclass

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
class Matmul:
    """One product: `c[m, n] = a[m, k] b[k, n] (+ bias[n]) (ReLU)`, row-major
    in DRAM at byte addresses `a`, `b`, `c` (and `bias`)."""

    name: str
    m: int
    k: int
    n: int
    a: int
    b: int
    c: int
    bias: int | None = None
    relu: bool = False
    elem: ElementType = F32
    """A's and B's type (int8, bf16 or f32); a bias has the accumulator's."""
    out: ElementType = F32
    """C's type: f32 for float products; int8 (requantised) or int32 for int8."""
    scale: float = 1.0
    zero_point: int = 0
    """int8 out: C = clamp(round(relu?(acc) * scale) + zero_point)."""

    @property
    def macs(self) -> int:
        return self.m * self.k * self.n


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
    if product.bias is not None and product.elem == INT8:
        return "a bias on an int8 product"
    rows = {"A": product.k * product.elem.bytes, "B": product.n * product.elem.bytes,
            "C": product.n * product.out.bytes}  # fmt: skip
    for what, size in rows.items():
        if size > MAX_STRIDE:
            return f"rows of {what} of {size} bytes (the DMA strides at most {MAX_STRIDE})"
    return None


def _tiles(size: int, dim: int) -> int:
    return -(-size // dim)


def _fits(schedule: MatmulSchedule, params: NpuParams) -> bool:
    rows = schedule.block_m * schedule.block_n * params.dim * schedule.regions
    return rows <= params.accumulator_rows - 1  # the last row is the relays'


def estimate_cycles(product: Matmul, schedule: MatmulSchedule, params: NpuParams) -> int:
    """Per k step of every block, the longer of its loads and its gemms."""
    dim, tiles_m, tiles_n = params.dim, _tiles(product.m, params.dim), _tiles(product.n, params.dim)
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
    tiles_m, tiles_n = _tiles(product.m, params.dim), _tiles(product.n, params.dim)
    best: tuple[int, int, MatmulSchedule] | None = None
    for bm in range(1, tiles_m + 1):
        for bn in range(1, tiles_n + 1):
            schedule = MatmulSchedule(bm, bn)
            if not _fits(schedule, params):
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


def _sp_plan(product: Matmul, schedule: MatmulSchedule, params: NpuParams) -> dict[str, int]:
    lines = params.dim * product.elem.bytes  # a full tile of the operand type
    operands = [Operand(f"{side}{slot}.{t}", lines, product.elem.bytes)
                for slot in range(schedule.buffers)
                for side, count in (("a", schedule.block_m), ("b", schedule.block_n))
                for t in range(count)]  # fmt: skip
    if product.bias is not None:
        operands.append(Operand("ones", lines, product.elem.bytes))
    return allocate(operands, params)


def emit_matmul(builder: ProgramBuilder, product: Matmul, schedule: MatmulSchedule,
                more_follow: bool = False) -> range:  # fmt: skip
    """Appends the instructions of `product` (after the builder's earlier
    products, see the module docstring; `more_follow`: its last store gives
    a token for the relay to the next one); returns their indices."""
    params, dim = builder.params, builder.params.dim
    problem = check_matmul(product, params)
    if problem is not None:
        raise NpuProgramError(f"{product.name}: the NPU cannot run {problem}")
    if not _fits(schedule, params):
        raise NpuProgramError(f"{product.name}: {schedule.describe()} overflow the accumulator")
    start = len(builder.instructions)
    first = builder.products == 0
    builder.products += 1
    sp = _sp_plan(product, schedule, params)
    eb, ob = product.elem.bytes, product.out.bytes
    acc_elem = (INT32 if product.elem == INT8 else F32).code
    if product.out == INT8:
        builder.emit("config_store", scale=f32_bits(product.scale), zero_point=product.zero_point,
                     relu=int(product.relu))  # fmt: skip
    tiles_m, tiles_n = _tiles(product.m, dim), _tiles(product.n, dim)
    blocks = [(bi, bj) for bi in range(0, tiles_m, schedule.block_m)
              for bj in range(0, tiles_n, schedule.block_n)]  # fmt: skip
    k_steps: list[int | None] = [*range(0, product.k, dim)]
    if product.bias is not None:
        k_steps.append(None)  # the bias step
    total_steps = len(blocks) * len(k_steps)
    region_rows = schedule.block_m * schedule.block_n * dim
    step = 0
    for b, (bi, bj) in enumerate(blocks):
        rows = [
            min(dim, product.m - t * dim) for t in range(bi, min(bi + schedule.block_m, tiles_m))
        ]
        cols = [
            min(dim, product.n - t * dim) for t in range(bj, min(bj + schedule.block_n, tiles_n))
        ]
        region = (b % schedule.regions) * region_rows
        tile_row = {(i, j): region + (i * schedule.block_n + j) * dim
                    for i in range(len(rows)) for j in range(len(cols))}  # fmt: skip
        for s, p in enumerate(k_steps):
            slot = step % schedule.buffers
            loads = []
            if step == 0 and product.bias is not None:  # the ones column, loaded once
                loads.append(builder.emit(
                    "load", dram_addr=builder.ones[product.elem.code], stride=eb, local=sp["ones"],
                    rows=dim, cols=1, to_acc=0, elem=product.elem.code))  # fmt: skip
            if p is None:
                for j, width in enumerate(cols):
                    loads.append(builder.emit(
                        "load", dram_addr=product.bias + (bj + j) * dim * eb, stride=0,  # type: ignore[operator]
                        local=sp[f"b{slot}.{j}"], rows=1, cols=width, to_acc=0, elem=product.elem.code))  # fmt: skip
                depth = 1
            else:
                depth = min(dim, product.k - p)
                for i, height in enumerate(rows):
                    loads.append(builder.emit(
                        "load", dram_addr=product.a + ((bi + i) * dim * product.k + p) * eb,
                        stride=product.k * eb, local=sp[f"a{slot}.{i}"], rows=height, cols=depth,
                        to_acc=0, elem=product.elem.code))  # fmt: skip
                for j, width in enumerate(cols):
                    loads.append(builder.emit(
                        "load", dram_addr=product.b + (p * product.n + (bj + j) * dim) * eb,
                        stride=product.n * eb, local=sp[f"b{slot}.{j}"], rows=depth, cols=width,
                        to_acc=0, elem=product.elem.code))  # fmt: skip
            if step >= schedule.buffers or (step == 0 and not first):
                builder.flag(loads[0], "pop_next")  # the slot given back, or the relay
            builder.flag(loads[-1], "push_next")
            gemms = [builder.emit(
                "gemm", a=sp["ones"] if p is None else sp[f"a{slot}.{i}"], b=sp[f"b{slot}.{j}"],
                c=tile_row[i, j], m=height, k=depth, n=width, accumulate=int(s > 0),
                elem=product.elem.code)
                for i, height in enumerate(rows) for j, width in enumerate(cols)]  # fmt: skip
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
                                    rows=rows[i], cols=cols[j], use_imm=0, elem=acc_elem, imm=0)  # fmt: skip
        builder.flag(tail, "push_next")
        stores = [builder.emit(
            "store", dram_addr=product.c + ((bi + i) * dim * product.n + (bj + j) * dim) * ob,
            stride=product.n * ob, local=row, rows=rows[i], cols=cols[j], from_acc=1,
            elem=product.out.code)
            for (i, j), row in tile_row.items()]  # fmt: skip
        builder.flag(stores[0], "pop_prev")
        if b + schedule.regions < len(blocks) or (b == len(blocks) - 1 and more_follow):
            builder.flag(stores[-1], "push_prev")  # the region back, or the relay's token
    return range(start, len(builder.instructions))


def emit_relay(builder: ProgramBuilder) -> int:
    """Between two products: the token of the last store passed on to the
    load module (see the module docstring)."""
    spare = builder.params.accumulator_rows - 1
    return builder.emit("alu", ("pop_next", "push_prev"), op=ALU_OPS.index("move"), src=spare,
                        src2=spare, dst=spare, rows=1, cols=1, use_imm=1, elem=F32.code, imm=0)  # fmt: skip


def emit_products(builder: ProgramBuilder, products: Sequence[Matmul],
                  schedules: Sequence[MatmulSchedule]) -> list[range]:  # fmt: skip
    """The products one after the other (each after the previous one's
    stores, through a relay), each product's instruction indices."""
    ranges = []
    for index, (product, schedule) in enumerate(zip(products, schedules, strict=True)):
        if index:
            emit_relay(builder)
        ranges.append(emit_matmul(builder, product, schedule, index + 1 < len(products)))
    return ranges


__all__ = ["Matmul", "MatmulSchedule", "ProgramBuilder", "check_matmul",
           "default_schedule", "emit_matmul", "emit_products", "emit_relay", "estimate_cycles"]  # fmt: skip
