"""The NPU's assembler and disassembler: an `npu.program` to its binary and
back, one instruction op to one 16-byte instruction (`isa.encode`).

`assemble` verifies the program first (the machine's limits and the
dependency tokens, `dialects/npu/ops.py`), so every binary it writes runs;
`disassemble` decodes a binary (`isa.decode_program`: malformed ones are an
`NpuBinaryError` naming the instruction and byte) into a program that it
verifies the same way, and whose assembly is the same bytes.

`disassembly_lines` is the disassembly as text, for `ember-opt prog.npu`:
line by line as it decodes, with no op built (`instruction_text`), so a
program of 400,000 instructions starts printing at once and ends in
seconds; it checks each instruction's limits as it goes and the program's
dependency tokens (no deadlock, none left over) once it has read them all,
and stops at the first error. The memory hazards between modules (two
instructions touching the same line with no token between them), which
cost twice as much to find, are checked where the program is read as IR
(`disassemble`, `ember-opt -p ...`, `-t npu-hex`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.utils.exceptions import VerifyException

from ember.dialects.npu.machine import (
    Instruction,
    NpuParams,
    NpuProgramError,
    check_instruction,
    run_order,
)
from ember.dialects.npu.ops import ProgramOp, instruction_op, instruction_text
from ember.targets.npu.isa import decode_program, decode_stream, encode_program


def _verified(program: ProgramOp) -> ProgramOp:
    try:
        program.verify()
    except VerifyException as error:
        raise NpuProgramError(str(error)) from None
    return program


def assemble(program: ProgramOp) -> bytes:
    """The binary of a verified `npu.program`."""
    return encode_program(_verified(program).instructions())


def disassemble(data: bytes, name: str = "program", params: NpuParams | None = None) -> ProgramOp:
    """The `npu.program` of a binary, verified against `params` (the defaults
    where not given)."""
    ops = [instruction_op(instruction) for instruction in decode_program(data)]
    return _verified(ProgramOp(name, ops, params))


def disassembly_lines(programs: Iterable[tuple[str, bytes]]) -> Iterator[str]:
    """The text `ember-opt` prints for a module of these binaries (each
    `(name, bytes)`, for the default machine), one line at a time: the same
    text as printing the module of `disassemble`'s programs. An error (a
    malformed binary, an instruction past the machine's limits, tokens that
    do not match, but not a memory hazard) ends the lines with an
    `NpuBinaryError` or an `NpuProgramError` naming the program and the
    instruction."""
    params = NpuParams()
    yield "builtin.module {"
    for name, data in programs:
        yield f'  npu.program "{name}" {{'
        program: list[Instruction] = []
        for index, instruction in enumerate(decode_stream(data)):
            try:
                check_instruction(instruction, params, index)
            except NpuProgramError as error:
                raise NpuProgramError(f"npu.program @{name}: {error}") from None
            program.append(instruction)
            yield f"    {instruction_text(instruction)}"
        try:
            run_order(program, hazards=False)
        except NpuProgramError as error:
            raise NpuProgramError(f"npu.program @{name}: {error}") from None
        yield "  }"
    yield "}"


__all__ = ["assemble", "disassemble", "disassembly_lines"]
