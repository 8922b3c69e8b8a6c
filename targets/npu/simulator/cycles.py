"""The NPU's cycle model: when each instruction starts and ends, and what
that makes of the program (`CycleReport`).

The modules run concurrently; each starts its next instruction once it is
free and the tokens the instruction pops have arrived (a token arrives when
the instruction that pushes it ends). Per instruction (docs/npu-isa.md,
"Timing"):

- `load`, `load_strided`, `store`: the module's DMA engine issues the bytes at
  `dma_bytes_per_cycle` (busy ceil(bytes / bandwidth) cycles, then free
  for the next request) and the data is there `dma_latency` cycles after
  the last of them, so back-to-back transfers stream at the bandwidth;
- `gemm`, weight-stationary: the array takes B's k rows (into the second
  set of weight registers, while the previous gemm computes) and streams
  A's m rows, so the next gemm may enter max(m, k) cycles later, when this
  one has read its scratchpad operands (its `push_prev` token, which frees
  them for a load, arrives then); its results are in the accumulator
  2 * dim - 2 cycles after that (the diagonal through the array), when its
  other tokens arrive. A full tile every dim cycles is the array's peak;
- `alu`: waits for the gemms before it to finish (it reads what they
  wrote), then one row per cycle plus `ALU_LATENCY`;
- `config_store`, `finish`: one cycle.

The program's cycles are the last instruction's end; the matrix unit's
utilisation is the multiply-accumulates done over cycles x dim^2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ember.dialects.npu.machine import (
    ELEMENT_TYPES,
    FLAGS,
    LOADS,
    MODULES,
    Instruction,
    NpuParams,
    check_program,
    queues_of,
)

ALU_LATENCY = 4
"""Cycles from the vector unit reading a row to writing its result."""


@dataclass
class CycleReport:
    """Where a program's cycles go."""

    cycles: int
    busy: dict[str, int]
    """Cycles each module spent running instructions."""
    macs: int
    bytes_loaded: int
    bytes_stored: int
    dim: int
    ends: list[int] = field(default_factory=list)
    """Per instruction, the cycle it ends."""

    @property
    def utilization(self) -> float:
        """The matrix unit's share of its peak over the whole program."""
        return self.macs / (self.cycles * self.dim * self.dim) if self.cycles else 0.0


def dma_bytes(inst: Instruction) -> int:
    """The bytes a load or store moves."""
    return inst["rows"] * inst["cols"] * ELEMENT_TYPES[inst["elem"]].bytes


def cycle_model(program: Sequence[Instruction], params: NpuParams | None = None,
                order: Sequence[int] | None = None) -> CycleReport:  # fmt: skip
    """The cycles of a program, checked first as `run_program` does (unless
    `order` is the order `check_program` gave for it)."""
    params = params or NpuParams()
    instructions = list(program)
    if order is None:
        order = check_program(instructions, params)
    free = dict.fromkeys(MODULES, 0)
    busy = dict.fromkeys(MODULES, 0)
    tokens: dict[str, list[int]] = {}
    gemms_done = 0  # when every gemm issued so far has its results in ACC
    ends = [0] * len(instructions)
    macs = loaded = stored = 0
    for index in order:
        inst = instructions[index]
        module = inst.format.module
        assert module is not None
        queues = queues_of(module)
        start = free[module]
        for flag in FLAGS:
            if flag in inst.flags and queues[flag][1] == "pop":
                start = max(start, tokens[queues[flag][0]].pop(0))
        name = inst.mnemonic
        if name in (*LOADS, "store"):
            size = dma_bytes(inst)
            duration = math.ceil(size / params.dma_bytes_per_cycle)
            next_free = start + duration
            end = next_free + params.dma_latency
            if name in LOADS:
                loaded += size
            else:
                stored += size
        elif name == "gemm":
            occupancy = max(inst["m"], inst["k"])
            next_free = start + occupancy
            end = next_free + 2 * params.dim - 2
            gemms_done = max(gemms_done, end)
            macs += inst["m"] * inst["k"] * inst["n"]
            duration = occupancy
        elif name == "alu":
            start = max(start, gemms_done)
            duration = inst["rows"] + ALU_LATENCY
            end = next_free = start + duration
        else:
            duration = 1
            end = next_free = start + 1
        free[module] = next_free
        busy[module] += duration
        ends[index] = end
        for flag in FLAGS:
            if flag in inst.flags and queues[flag][1] == "push":
                # a gemm frees its scratchpad operands once it has read them
                at = next_free if name == "gemm" and flag == "push_prev" else end
                tokens.setdefault(queues[flag][0], []).append(at)
    cycles = max([*ends, *free.values()]) + 1  # finish
    return CycleReport(cycles, busy, macs, loaded, stored, params.dim, ends)


__all__ = ["ALU_LATENCY", "CycleReport", "cycle_model", "dma_bytes"]
