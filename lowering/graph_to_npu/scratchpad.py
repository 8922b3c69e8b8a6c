"""The scratchpad allocator: places a program's SP operands (tiles of the
load buffers, the resident ones column) in the scratchpad.

Every operand is a run of lines that must lie in one bank and start at a
multiple of its rows' size (docs/npu-isa.md, "Memories and addresses").
Operands are placed largest first, each into the bank with the most room
left (so the buffers a gemm reads at once tend to spread over the banks),
at that bank's next aligned line. Placement is static: the program's
buffers live for the whole program, as a DMA double buffer does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ember.dialects.npu.machine import NpuParams, NpuProgramError


@dataclass(frozen=True)
class Operand:
    """`lines` SP lines starting at a multiple of `align`, in one bank."""

    name: str
    lines: int
    align: int = 1


def allocate(operands: Sequence[Operand], params: NpuParams) -> dict[str, int]:
    """The first line of each operand, by name; an NpuProgramError when they
    do not fit (naming the operand and what is left)."""
    next_free = [bank * params.bank_lines for bank in range(params.scratchpad_banks)]
    ends = [(bank + 1) * params.bank_lines for bank in range(params.scratchpad_banks)]
    placed: dict[str, int] = {}
    for operand in sorted(operands, key=lambda o: -o.lines):
        if operand.lines > params.bank_lines:
            raise NpuProgramError(f"scratchpad: {operand.name} needs {operand.lines} lines, more "
                                  f"than a bank holds ({params.bank_lines})")  # fmt: skip
        best = None
        for bank in range(params.scratchpad_banks):
            start = -(-next_free[bank] // operand.align) * operand.align
            room = ends[bank] - start
            if room >= operand.lines and (best is None or room > best[1]):
                best = (bank, room, start)
        if best is None:
            left = sum(e - f for e, f in zip(ends, next_free))
            raise NpuProgramError(f"scratchpad: no bank has {operand.lines} lines left for "
                                  f"{operand.name} ({left} lines free in all)")  # fmt: skip
        bank, _, start = best
        placed[operand.name] = start
        next_free[bank] = start + operand.lines
    return placed


__all__ = ["Operand", "allocate"]
