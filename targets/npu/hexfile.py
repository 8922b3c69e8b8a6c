"""NPU binaries as text: one 16-byte instruction per line, its bytes in
memory order as 32 hex digits (the layout of Verilog's `$readmemh` with
16-byte words), so a program can be diffed, read back and checked in lit.

    // npu.program "npu0"
    1000000000100c00000002030000...

A line starting with `//` names the program that follows (a file may hold
several); blank lines are ignored. `ember-opt -t npu-hex` writes this for
every `npu.program` of a module, and `ember-opt FILE.npuhex` (or a raw
binary, `FILE.npu`) reads programs back, disassembled.
"""

from __future__ import annotations

import re

from ember.dialects.npu.machine import INSTRUCTION_BYTES
from ember.targets.npu.isa import NpuBinaryError

_HEADER = re.compile(r'//\s*npu\.program\s+"([^"]*)"\s*$')
_WORD = re.compile(f"[0-9a-fA-F]{{{2 * INSTRUCTION_BYTES}}}")


def to_hex(programs: list[tuple[str, bytes]]) -> str:
    lines = []
    for name, data in programs:
        lines.append(f'// npu.program "{name}"')
        lines += [data[i:i + INSTRUCTION_BYTES].hex()
                  for i in range(0, len(data), INSTRUCTION_BYTES)]  # fmt: skip
    return "\n".join(lines) + "\n"


def from_hex(text: str) -> list[tuple[str, bytes]]:
    """The programs of a hex file, by name; an NpuBinaryError naming the
    line of anything that is not a header or a 32-digit word."""
    programs: list[tuple[str, bytearray]] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        header = _HEADER.fullmatch(line)
        if header:
            programs.append((header.group(1), bytearray()))
        elif _WORD.fullmatch(line):
            if not programs:
                programs.append(("program", bytearray()))
            programs[-1][1].extend(bytes.fromhex(line))
        else:
            raise NpuBinaryError(f"line {number}: not an instruction ({2 * INSTRUCTION_BYTES} "
                                 f"hex digits) or a '// npu.program \"NAME\"' line: {line[:40]}")  # fmt: skip
    return [(name, bytes(data)) for name, data in programs]


__all__ = ["from_hex", "to_hex"]
