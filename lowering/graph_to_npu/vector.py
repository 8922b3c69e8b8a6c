"""Elementwise ops and pooling on the NPU's vector unit: `out = op(in_0,
in_1, ...)` over tiles of an NCHW image read as a matrix [C, OH*OW].

A `VectorOp` combines its operands (`Access`es of the same matrix shape:
the two addends of an Add, or the window taps of a pool, each tap the
image read through one kernel offset with the pool's strides) with `add`
or `max`, then optionally scales (an average's 1 / taps), multiplies by
and adds a value per channel (an unfolded BatchNormalization) and applies
a ReLU, all in float32 on accumulator rows. Tiles are `dim` channels by at
most `dim` output columns within one output row (as a convolution's), so
a tile of every operand is one `load` (or `load_strided`) per run of
channels a constant stride apart, straight into the accumulator.

Each tile uses one of two accumulator slots of `taps` tiles (of fewer
channels than `dim` where that many full ones do not fit): its operands
are loaded side by side, the vector unit folds them into the first, the
store writes it out. Tokens: the tile's last load pushes to compute and
its first `alu` pops; that `alu` also pops the token of the previous
tile's store (so the slot the next tile loads into is free), and the
tile's last `alu` pushes to store and, when a tile follows, back to the
load module, whose next tile's first load pops it. So loads of tile t + 1
overlap the store of tile t. Between layers the relay of `matmul` passes
the last store's token on, as between products.
"""

from __future__ import annotations

from dataclasses import dataclass

from ember.dialects.npu.machine import ALU_OPS, F32, NpuParams, NpuProgramError, f32_bits
from ember.lowering.graph_to_npu.matmul import Access, Piece, ProgramBuilder, RowMajor

SLOTS = 2


@dataclass(frozen=True)
class VectorSchedule:
    """Tiles of `rows` channels (at most `dim`), each of the two slots
    holding one tile of every operand."""

    taps: int
    rows: int
    slots: int = SLOTS

    def describe(self) -> str:
        return f"{self.slots} ACC slots of {self.taps} tiles of {self.rows} rows (vector unit)"


@dataclass(frozen=True)
class PerRow:
    """One value per row of a matrix, stored as rows of `dim` copies: every
    column tile of a row reads the same copies."""

    copies: RowMajor

    def pieces(self, row: int, rows: int, col: int, cols: int) -> list[Piece]:
        del col  # every column tile reads from the first copy on
        return self.copies.pieces(row, rows, 0, cols)


@dataclass(frozen=True)
class VectorOp:
    """`out[c, n] = relu?(scale * combine_t(operands[t][c, n]))` over
    `channels` rows and `columns` columns, tiled by `col_tiles`."""

    name: str
    channels: int
    columns: int
    operands: tuple[Access, ...]
    out: Access
    combine: str
    """`add` or `max`."""
    col_tiles: tuple[tuple[int, int], ...]
    scale: float = 1.0
    relu: bool = False
    position_scale: Access | None = None
    """Per column, a factor applied after `scale` (an average's 1 / count
    where the count changes at a padded border), loaded as a tile beside the
    operands."""
    channel_scale: Access | None = None
    channel_shift: Access | None = None
    """Per channel (row), a factor and a term applied after those: rows of
    `dim` copies of each channel's value, loaded as tiles beside the
    operands."""

    @property
    def macs(self) -> int:
        return 0

    @property
    def rows_operands(self) -> tuple[Access, ...]:
        """Everything a tile loads: the operands, then the per-channel tiles."""
        return (*self.operands, *(a for _, a in self.factors))

    @property
    def factors(self) -> list[tuple[str, Access]]:
        """The tiles applied after combining, in order, with their alu op."""
        given = (("mul", self.position_scale), ("mul", self.channel_scale),
                 ("add", self.channel_shift))  # fmt: skip
        return [(name, access) for name, access in given if access is not None]

    def summary(self) -> str:
        return f"{self.combine} of {len(self.operands)}: {self.channels}x{self.columns} f32"


def max_taps(params: NpuParams) -> int:
    """The most operands a vector op may have: two slots of that many tiles
    of one row each fit in the accumulator (its last row is the relays')."""
    return (params.accumulator_rows - 1) // SLOTS


def vector_schedule(op: VectorOp, params: NpuParams) -> VectorSchedule:
    """Full tiles of `dim` channels where two slots of them fit, else as many
    channels a tile as do (a global pool's many taps)."""
    taps = len(op.rows_operands)
    if taps > max_taps(params):
        raise NpuProgramError(f"{op.name}: {taps} operands do not fit the accumulator "
                              f"({max_taps(params)} at most)")  # fmt: skip
    return VectorSchedule(taps, min(params.dim, max_taps(params) // taps))


def _alu(builder: ProgramBuilder, name: str, dst: int, rows: int, cols: int,
         src2: int | None = None, imm: float | None = None) -> int:  # fmt: skip
    """`dst = name(dst, src2 or imm)` on `rows` x `cols` f32 values (a unary
    op reads dst alone)."""
    return builder.emit("alu", op=ALU_OPS.index(name), src=dst,
                        src2=dst if src2 is None else src2, dst=dst, rows=rows, cols=cols,
                        use_imm=int(imm is not None), elem=F32.code,
                        imm=0 if imm is None else f32_bits(imm))  # fmt: skip


def _load(builder: ProgramBuilder, piece: Piece, row: int) -> int:
    strided = {"step": piece.step} if piece.step != 1 else {}
    return builder.emit("load_strided" if strided else "load", dram_addr=piece.dram_addr,
                        stride=piece.stride, local=row + piece.first, rows=piece.rows,
                        cols=piece.cols, to_acc=1, elem=F32.code, **strided)  # fmt: skip


def emit_vector(builder: ProgramBuilder, op: VectorOp, schedule: VectorSchedule,
                more_follow: bool = False) -> range:  # fmt: skip
    """Appends the instructions of `op` (see the module docstring); returns
    their indices."""
    start = len(builder.instructions)
    first = builder.products == 0
    builder.products += 1
    height = schedule.rows
    tiles = [(row, min(height, op.channels - row), col, width)
             for row in range(0, op.channels, height) for col, width in op.col_tiles]  # fmt: skip
    for t, (row, rows, col, cols) in enumerate(tiles):
        base = (t % schedule.slots) * schedule.taps * height
        loads = [_load(builder, piece, base + i * height)
                 for i, operand in enumerate(op.rows_operands)
                 for piece in operand.pieces(row, rows, col, cols)]  # fmt: skip
        if t > 0 or not first:
            builder.flag(loads[0], "pop_next")  # the previous tile's alus, or the relay
        builder.flag(loads[-1], "push_next")
        alus = [_alu(builder, op.combine, base, rows, cols, src2=base + i * height)
                for i in range(1, len(op.operands))]  # fmt: skip
        if op.scale != 1.0:
            alus.append(_alu(builder, "mul", base, rows, cols, imm=op.scale))
        for extra, (name, _) in enumerate(op.factors, start=len(op.operands)):
            alus.append(_alu(builder, name, base, rows, cols, src2=base + extra * height))
        if op.relu:
            alus.append(_alu(builder, "relu", base, rows, cols))
        if not alus:  # one operand: a move, for the tokens
            alus.append(_alu(builder, "move", base, rows, cols))
        builder.flag(alus[0], "pop_prev")
        if t > 0:
            builder.flag(alus[0], "pop_next")  # the previous tile's store is done
        builder.flag(alus[-1], "push_next")
        if t + 1 < len(tiles):
            builder.flag(alus[-1], "push_prev")
        stores = [builder.emit("store", dram_addr=piece.dram_addr, stride=piece.stride,
                               local=base + piece.first, rows=piece.rows, cols=piece.cols,
                               from_acc=1, elem=F32.code)
                  for piece in op.out.pieces(row, rows, col, cols)]  # fmt: skip
        builder.flag(stores[0], "pop_prev")
        if t + 1 < len(tiles) or more_follow:
            builder.flag(stores[-1], "push_prev")
    return range(start, len(builder.instructions))


__all__ = ["PerRow", "VectorOp", "VectorSchedule", "emit_vector", "max_taps", "vector_schedule"]
