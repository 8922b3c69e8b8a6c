"""The NPU's binary encoding (docs/npu-isa.md, "Instructions"): every
instruction 16 bytes, little-endian, its fields packed from bit 16 in the
order `FORMATS` gives them.

`encode`/`decode` turn an `Instruction` into and from its bytes,
`encode_program` and `decode_program` a whole binary (ending in `finish`);
a malformed binary (truncated, an unknown opcode, reserved or trailing bits
set, no `finish`) is an `NpuBinaryError` naming the instruction and its
byte offset, and a value that does not fit its field an `NpuProgramError`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ember.dialects.npu.machine import (
    BY_MNEMONIC,
    FIELDS_START,
    FLAGS,
    FORMATS,
    INSTRUCTION_BYTES,
    Instruction,
    NpuProgramError,
)
from ember.errors import EmberError


class NpuBinaryError(EmberError):
    """A binary that is not a well-formed NPU program."""


def encode(instruction: Instruction) -> bytes:
    """The instruction's 16 bytes; a field value that does not fit its width,
    a missing or unknown field or flag is an NpuProgramError."""
    fmt = BY_MNEMONIC.get(instruction.mnemonic)
    if fmt is None:
        raise NpuProgramError(f"unknown NPU instruction '{instruction.mnemonic}'")
    unknown = set(instruction.fields) - {f.name for f in fmt.fields}
    bad_flags = set(instruction.flags) - set(FLAGS)
    if unknown or bad_flags:
        names = ", ".join(sorted(unknown | bad_flags))
        raise NpuProgramError(f"{instruction.mnemonic}: no field or flag {names}")
    word = fmt.opcode
    for position, flag in enumerate(FLAGS):
        word |= int(flag in instruction.flags) << (8 + position)
    shift = FIELDS_START
    for spec in fmt.fields:
        if spec.name not in instruction.fields:
            raise NpuProgramError(f"{instruction.mnemonic}: field {spec.name} missing")
        value = instruction.fields[spec.name]
        low, high = (-(1 << (spec.bits - 1)), (1 << (spec.bits - 1)) - 1) if spec.signed \
            else (0, (1 << spec.bits) - 1)  # fmt: skip
        if not low <= value <= high:
            raise NpuProgramError(f"{instruction.mnemonic}: {spec.name} = {value} does not fit "
                                  f"{spec.bits} bits ({low}..{high})")  # fmt: skip
        word |= (value & ((1 << spec.bits) - 1)) << shift
        shift += spec.bits
    return word.to_bytes(INSTRUCTION_BYTES, "little")


def decode(data: bytes, offset: int = 0) -> Instruction:
    """The instruction in `data` (16 bytes; `offset` for messages)."""
    where = f"instruction {offset // INSTRUCTION_BYTES} (byte {offset})"
    if len(data) != INSTRUCTION_BYTES:
        raise NpuBinaryError(f"{where}: truncated, {len(data)} of {INSTRUCTION_BYTES} bytes")
    word = int.from_bytes(data, "little")
    fmt = FORMATS.get(word & 0xFF)
    if fmt is None:
        raise NpuBinaryError(f"{where}: unknown opcode 0x{word & 0xFF:02x}")
    if (word >> 12) & 0xF:
        raise NpuBinaryError(f"{where}: {fmt.mnemonic} has reserved bits 12-15 set")
    flags = frozenset(f for position, f in enumerate(FLAGS) if word >> (8 + position) & 1)
    values, shift = {}, FIELDS_START
    for spec in fmt.fields:
        value = (word >> shift) & ((1 << spec.bits) - 1)
        if spec.signed and value >> (spec.bits - 1):
            value -= 1 << spec.bits
        values[spec.name] = value
        shift += spec.bits
    if word >> shift:
        raise NpuBinaryError(f"{where}: {fmt.mnemonic} has bits set after its fields (bit "
                             f"{shift} on)")  # fmt: skip
    return Instruction(fmt.mnemonic, values, flags)


def encode_program(program: Sequence[Instruction]) -> bytes:
    return b"".join(encode(instruction) for instruction in program)


def decode_program(data: bytes) -> list[Instruction]:
    """The instructions of a binary, which must end in `finish` (and hold
    nothing after it)."""
    return list(decode_stream(data))


def decode_stream(data: bytes) -> Iterator[Instruction]:
    """`decode_program`'s instructions one at a time, each decoded when it is
    asked for (a disassembly prints the first before it decodes the rest); a
    malformed instruction is an error when the stream reaches it."""
    if not data:
        raise NpuBinaryError("empty NPU binary (a program ends in finish)")
    last = ""
    for offset in range(0, len(data), INSTRUCTION_BYTES):
        instruction = decode(data[offset : offset + INSTRUCTION_BYTES], offset)
        if instruction.mnemonic == "finish" and offset + INSTRUCTION_BYTES < len(data):
            raise NpuBinaryError(f"instruction {offset // INSTRUCTION_BYTES} (byte {offset}): "
                                 "finish before the end of the binary")  # fmt: skip
        last = instruction.mnemonic
        yield instruction
    if last != "finish":
        raise NpuBinaryError(f"the binary ends without finish (after "
                             f"{len(data) // INSTRUCTION_BYTES} instructions)")  # fmt: skip


__all__ = [
    "NpuBinaryError",
    "decode",
    "decode_program",
    "decode_stream",
    "encode",
    "encode_program",
]
