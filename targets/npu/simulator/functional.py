"""The NPU's functional simulator: runs a program on NumPy memories, exactly.

    dram = np.zeros(1 << 16, np.uint8)   # the program's DRAM image
    run_program(program, dram)           # instructions, or a binary

The program is checked first (`check_program`: limits, tokens, missing
dependencies), then its instructions run one at a time in an order the
modules could run them in (`run_order`); since every pair of instructions
that touch the same scratchpad line or accumulator row is ordered by
tokens, any such order gives the same result. The memories:

- DRAM: the caller's `uint8` array (an access outside it is an error: the
  image is usually smaller than the machine's address space);
- the scratchpad: `scratchpad_bytes` bytes, line L at byte L * dim;
- the accumulator: `accumulator_rows` rows of `dim` 32-bit words, read as
  int32 or f32 as the instruction says.

Semantics (docs/npu-isa.md): a load zero-fills the rest of each row; int8
matrix products accumulate in int32 and wrap, bf16 (the upper half of an
f32) and f32 ones in f32, as NumPy's f32 matmul does (so floats agree with
a reference within rounding, int8 bit for bit); a store from the
accumulator to int8 reads int32 values and requantises them:
clamp(round_half_even(f32(x) * scale) + zero_point, -128, 127), ReLU first
when configured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ember.dialects.npu.machine import (
    ALU_OPS,
    BF16,
    ELEMENT_TYPES,
    F32,
    INT8,
    INT32,
    Instruction,
    NpuParams,
    NpuProgramError,
    bits_f32,
    check_program,
)
from ember.targets.npu.isa import decode_program

_DTYPES = {INT8.code: np.int8, BF16.code: np.uint16, F32.code: np.float32, INT32.code: np.int32}


@dataclass
class _Requant:
    scale: float = 1.0
    zero_point: int = 0
    relu: bool = False


class Machine:
    """The NPU's memories and the effect of each instruction on them."""

    def __init__(self, params: NpuParams, dram: np.ndarray):
        if dram.dtype != np.uint8 or dram.ndim != 1:
            raise NpuProgramError("the DRAM image must be a 1-D uint8 array")
        self.params = params
        self.dram = dram
        self.scratchpad = np.zeros(params.scratchpad_bytes, np.uint8)
        self.accumulator = np.zeros((params.accumulator_rows, params.dim), np.uint32)
        self.requant = _Requant()

    # ------------------------------------------------------------ memories
    def _dram_rows(self, inst: Instruction, index: int) -> list[slice]:
        size = ELEMENT_TYPES[inst["elem"]].bytes * inst["cols"]
        rows = [slice(inst["dram_addr"] + r * inst["stride"],
                      inst["dram_addr"] + r * inst["stride"] + size) for r in range(inst["rows"])]  # fmt: skip
        if rows[-1].stop > len(self.dram):
            raise NpuProgramError(f"instruction {index} ({inst.describe()}): DRAM bytes up to "
                                  f"{rows[-1].stop - 1} are outside the {len(self.dram)}-byte "
                                  "DRAM image")  # fmt: skip
        return rows

    def _sp_rows(self, line: int, rows: int, elem: int) -> np.ndarray:
        """A view of `rows` SP rows of `elem` from `line`: [rows, dim]."""
        width = self.params.dim * ELEMENT_TYPES[elem].bytes
        start = line * self.params.dim
        return self.scratchpad[start : start + rows * width].view(_DTYPES[elem]).reshape(rows, -1)

    def _acc_rows(self, row: int, rows: int, elem: int) -> np.ndarray:
        view = self.accumulator[row : row + rows]
        return view.view(np.float32 if elem == F32.code else np.int32)

    # -------------------------------------------------------- instructions
    def execute(self, inst: Instruction, index: int) -> None:
        getattr(self, f"_{inst.mnemonic}")(inst, index)

    def _load(self, inst: Instruction, index: int) -> None:
        elem, cols = inst["elem"], inst["cols"]
        target = (self._acc_rows(inst["local"], inst["rows"], elem) if inst["to_acc"]
                  else self._sp_rows(inst["local"], inst["rows"], elem))  # fmt: skip
        target[...] = 0
        for r, part in enumerate(self._dram_rows(inst, index)):
            target[r, :cols] = self.dram[part].view(_DTYPES[elem])

    def _load_strided(self, inst: Instruction, index: int) -> None:
        """As `load`, row r's element c from dram_addr + r * stride + c * step
        elements."""
        elem, cols, step = inst["elem"], inst["cols"], inst["step"]
        size = ELEMENT_TYPES[elem].bytes
        target = (self._acc_rows(inst["local"], inst["rows"], elem) if inst["to_acc"]
                  else self._sp_rows(inst["local"], inst["rows"], elem))  # fmt: skip
        target[...] = 0
        offsets = (np.arange(cols)[:, None] * step * size + np.arange(size)).reshape(-1)
        for r in range(inst["rows"]):
            start = inst["dram_addr"] + r * inst["stride"]
            if start + offsets[-1] >= len(self.dram):
                raise NpuProgramError(f"instruction {index} ({inst.describe()}): DRAM bytes up "
                                      f"to {start + offsets[-1]} are outside the "
                                      f"{len(self.dram)}-byte DRAM image")  # fmt: skip
            target[r, :cols] = self.dram[start + offsets].view(_DTYPES[elem])

    def _store(self, inst: Instruction, index: int) -> None:
        elem, cols, rows = inst["elem"], inst["cols"], inst["rows"]
        if not inst["from_acc"]:
            source = self._sp_rows(inst["local"], rows, elem)[:, :cols]
        elif elem == INT8.code:
            source = self._requantised(self._acc_rows(inst["local"], rows, INT32.code)[:, :cols])
        else:
            source = self._acc_rows(inst["local"], rows, elem)[:, :cols]
        for r, part in enumerate(self._dram_rows(inst, index)):
            self.dram[part] = np.ascontiguousarray(source[r]).view(np.uint8)

    def _requantised(self, values: np.ndarray) -> np.ndarray:
        config = self.requant
        if config.relu:
            values = np.maximum(values, 0)
        scaled = np.rint(values.astype(np.float32) * np.float32(config.scale))
        return np.clip(scaled + config.zero_point, -128, 127).astype(np.int8)

    def _config_store(self, inst: Instruction, index: int) -> None:
        self.requant = _Requant(bits_f32(inst["scale"]), inst["zero_point"], bool(inst["relu"]))

    def _operand(self, line: int, rows: int, cols: int, elem: int) -> np.ndarray:
        values = self._sp_rows(line, rows, elem)[:, :cols]
        if elem == INT8.code:
            return values.astype(np.int64)
        if elem == BF16.code:
            return (values.astype(np.uint32) << 16).view(np.float32)
        return values

    def _gemm(self, inst: Instruction, index: int) -> None:
        m, k, n, elem = inst["m"], inst["k"], inst["n"], inst["elem"]
        a = self._operand(inst["a"], m, k, elem)
        b = self._operand(inst["b"], k, n, elem)
        integer = elem == INT8.code
        c = self._acc_rows(inst["c"], m, INT32.code if integer else F32.code)
        product = a @ b
        if inst["accumulate"]:
            product = product + c[:, :n]
        c[:, :n] = (product & 0xFFFFFFFF).astype(np.uint32).view(np.int32) if integer \
            else product.astype(np.float32)  # fmt: skip

    def _alu(self, inst: Instruction, index: int) -> None:
        rows, cols, elem = inst["rows"], inst["cols"], inst["elem"]
        x = self._acc_rows(inst["src"], rows, elem)[:, :cols].copy()
        if inst["use_imm"]:
            immediate = bits_f32(inst["imm"]) if elem == F32.code else \
                np.uint32(inst["imm"]).view(np.int32)  # fmt: skip
            y = np.full_like(x, immediate)
        else:
            y = self._acc_rows(inst["src2"], rows, elem)[:, :cols].copy()
        op = ALU_OPS[inst["op"]]
        with np.errstate(over="ignore"):
            result = {
                "add": lambda: x + y,
                "sub": lambda: x - y,
                "mul": lambda: x * y,
                "max": lambda: np.maximum(x, y),
                "min": lambda: np.minimum(x, y),
                "relu": lambda: np.maximum(x, 0).astype(x.dtype),
                "shift": lambda: _shift(x, y),
                "move": lambda: x,
            }[op]()
        self._acc_rows(inst["dst"], rows, elem)[:, :cols] = result

    def _finish(self, inst: Instruction, index: int) -> None:
        pass


def _shift(x: np.ndarray, amounts: np.ndarray) -> np.ndarray:
    """Arithmetic shift right rounding half up (a shift by 0 or less keeps x)."""
    s = np.clip(amounts.astype(np.int64), 0, 31)
    wide = x.astype(np.int64)
    rounded = (wide + np.where(s > 0, np.int64(1) << np.maximum(s - 1, 0), 0)) >> s
    return rounded.astype(np.int32)


def run_program(program: Sequence[Instruction] | bytes, dram: np.ndarray,
                params: NpuParams | None = None) -> Machine:  # fmt: skip
    """Runs `program` (instructions, or a binary) on `dram` in place and
    returns the machine (its scratchpad and accumulator as they end)."""
    params = params or NpuParams()
    instructions = decode_program(program) if isinstance(program, bytes) else list(program)
    order = check_program(instructions, params)
    machine = Machine(params, dram)
    for index in order:
        machine.execute(instructions[index], index)
    return machine


__all__ = ["Machine", "run_program"]
