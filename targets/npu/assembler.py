"""The NPU's assembler and disassembler: an `npu.program` to its binary and
back, one instruction op to one 16-byte instruction (`isa.encode`).

`assemble` verifies the program first (the machine's limits and the
dependency tokens, `dialects/npu/ops.py`), so every binary it writes runs;
`disassemble` decodes a binary (`isa.decode_program`: malformed ones are an
`NpuBinaryError` naming the instruction and byte) into a program that it
verifies the same way, and whose assembly is the same bytes.
"""

from __future__ import annotations

from xdsl.utils.exceptions import VerifyException

from ember.dialects.npu.machine import NpuParams, NpuProgramError
from ember.dialects.npu.ops import ProgramOp, instruction_op
from ember.targets.npu.isa import decode_program, encode_program


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


__all__ = ["assemble", "disassemble"]
