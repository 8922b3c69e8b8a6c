"""The NPU's instruction set: encodings round-trip, malformed binaries and
programs that break a limit or the dependency rules are rejected with a
message naming the instruction, and docs/npu-isa.md says what
`dialects/npu/machine.py` and `targets/npu/isa.py` do."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ember.dialects.npu.machine import (
    ALU_OPS,
    ELEMENT_TYPES,
    FLAGS,
    FORMATS,
    INSTRUCTION_BYTES,
    Instruction,
    NpuParams,
    NpuProgramError,
    bits_f32,
    check_instruction,
    check_program,
    f32_bits,
)
from ember.targets.npu.isa import (
    NpuBinaryError,
    decode,
    decode_program,
    encode,
    encode_program,
)

PARAMS = NpuParams()
DOC = (Path(__file__).parents[3] / "docs" / "npu-isa.md").read_text()


def load(local: int = 0, rows: int = 16, elem: int = 0, to_acc: int = 0, flags: str = "",
         **fields: int) -> Instruction:  # fmt: skip
    values = dict(dram_addr=0, stride=16, local=local, rows=rows, cols=16, to_acc=to_acc,
                  elem=elem) | fields  # fmt: skip
    return Instruction("load", values, frozenset(flags.split()))


def gemm(a: int = 0, b: int = 16, c: int = 0, flags: str = "", **fields: int) -> Instruction:
    values = dict(a=a, b=b, c=c, m=16, k=16, n=16, accumulate=0, elem=0) | fields
    return Instruction("gemm", values, frozenset(flags.split()))


def store(flags: str = "", **fields: int) -> Instruction:
    values = dict(dram_addr=4096, stride=64, local=0, rows=16, cols=16, from_acc=1, elem=3) | fields
    return Instruction("store", values, frozenset(flags.split()))


FINISH = Instruction("finish")


def _random(rng: np.random.Generator, opcode: int) -> Instruction:
    fmt = FORMATS[opcode]
    values = {}
    for spec in fmt.fields:
        low, high = ((-(1 << (spec.bits - 1)), 1 << (spec.bits - 1)) if spec.signed
                     else (0, 1 << spec.bits))  # fmt: skip
        values[spec.name] = int(rng.integers(low, high))
    flags = frozenset(f for f in FLAGS if rng.integers(2)) if fmt.module else frozenset()
    return Instruction(fmt.mnemonic, values, flags)


@pytest.mark.parametrize("opcode", sorted(FORMATS))
def test_every_encoding_round_trips(opcode: int) -> None:
    rng = np.random.default_rng(opcode)
    for _ in range(200):
        instruction = _random(rng, opcode)
        data = encode(instruction)
        assert len(data) == INSTRUCTION_BYTES and data[0] == opcode
        assert decode(data) == instruction
        assert encode(decode(data)) == data


def test_a_program_round_trips_and_checks() -> None:
    program = [load(), load(local=256, flags="push_next"),  # one token: the loads run in order
               gemm(a=0, b=256, flags="pop_prev push_next"), store(flags="pop_prev"), FINISH]  # fmt: skip
    data = encode_program(program)
    assert decode_program(data) == program
    check_program(decode_program(data), PARAMS)


def test_the_float_fields_keep_their_bits() -> None:
    config = Instruction("config_store", {"scale": f32_bits(0.0125), "zero_point": -3, "relu": 1})
    back = decode(encode(config))
    assert bits_f32(back["scale"]) == np.float32(0.0125) and back["zero_point"] == -3


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty NPU binary"),
    (encode(FINISH)[:9], r"instruction 0 \(byte 0\): truncated, 9 of 16 bytes"),
    (bytes([0x55]) + bytes(15) + encode(FINISH), "instruction 0 .*unknown opcode 0x55"),
    (bytes([0x7F, 0x10]) + bytes(14), "finish has reserved bits 12-15 set"),
    (encode(load()) + encode(FINISH)[:15] + b"\x01", "finish has bits set after its fields"),
    (encode(load()), "ends without finish"),
    (encode(FINISH) + encode(FINISH), "instruction 0 .*finish before the end"),
])  # fmt: skip
def test_malformed_binaries_are_rejected(data: bytes, message: str) -> None:
    with pytest.raises(NpuBinaryError, match=message):
        decode_program(data)


def test_values_that_do_not_fit_are_rejected() -> None:
    with pytest.raises(NpuProgramError, match=r"rows = 64 does not fit 6 bits \(0..63\)"):
        encode(load(rows=64))
    with pytest.raises(NpuProgramError, match=r"zero_point = 128 does not fit 8 bits"):
        encode(Instruction("config_store", {"scale": 0, "zero_point": 128, "relu": 0}))
    with pytest.raises(NpuProgramError, match="gemm: field b missing"):
        encode(Instruction("gemm", {"a": 0}))


@pytest.mark.parametrize(("instruction", "message"), [
    (load(rows=17), "rows = 17 is not in 1..16"),
    (load(local=16383, rows=2), r"overflows the scratchpad \(16384 lines\)"),
    (load(local=4095, rows=2), "crosses a bank boundary"),
    (load(local=2, elem=2), "not aligned to its rows of 4 lines"),
    (load(elem=3), "elem int32 in the scratchpad"),
    (load(to_acc=1, elem=0), "elem int8 with the accumulator"),
    (load(to_acc=1, local=1020, elem=3), r"overflows the accumulator \(1024 rows\)"),
    (load(dram_addr=(1 << 32) - 100), "outside DRAM"),
    (load(flags="pop_prev"), "pop_prev on a load instruction"),
    (store(flags="push_next"), "push_next on a store instruction"),
    (gemm(elem=3), "elem int32 on the matrix unit"),
    (gemm(b=4090), "B .*crosses a bank boundary"),
    (gemm(k=0), "k = 0 is not in 1..16"),
    (Instruction("alu", dict(op=6, src=0, src2=0, dst=0, rows=4, cols=16, use_imm=1, elem=2,
                             imm=1)), "shift of f32"),
    (Instruction("alu", dict(op=9, src=0, src2=0, dst=0, rows=4, cols=16, use_imm=0, elem=3,
                             imm=0)), f"op 9 is not one of 0..{len(ALU_OPS) - 1}"),
    (Instruction("finish", flags=frozenset({"push_next"})), "push_next on a finish"),
])  # fmt: skip
def test_limits_are_checked(instruction: Instruction, message: str) -> None:
    with pytest.raises(NpuProgramError, match=r"instruction 3 \(" + re.escape(
            instruction.mnemonic) + ".*" + message):  # fmt: skip
        check_instruction(instruction, PARAMS, 3)


@pytest.mark.parametrize(("program", "message"), [
    ([gemm(flags="pop_prev"), FINISH], r"instruction 0 \(gemm .*\) waits for a token .* deadlocks"),
    ([load(flags="push_next"), FINISH], "tokens left at finish: 1 on load->compute"),
    ([load(flags="push_next"), gemm(), FINISH],
     r"instruction 1 \(gemm .*\) reads SP line 0, which instruction 0 \(load .*\) uses, with no "
     "token between them: a dependency is missing"),
    ([load(to_acc=1, elem=3, flags="push_next"), gemm(flags="pop_prev push_next"),
      store(flags="pop_prev"), gemm(accumulate=1), FINISH],
     r"ACC row 0, which instruction \d \((gemm|store) .* a dependency is missing"),
    ([load(flags="pop_next"), gemm(flags="pop_prev push_prev"), FINISH], "deadlocks"),
    ([load()], "ends in finish"),
    ([FINISH, load(), FINISH], "instruction 0: finish before the end"),
])  # fmt: skip
def test_dependency_errors_are_rejected(program: list[Instruction], message: str) -> None:
    with pytest.raises(NpuProgramError, match=message):
        check_program(program, PARAMS)


def test_tokens_flow_both_ways() -> None:
    """Double buffering: compute gives each buffer back (push_prev) and the
    load that reuses it waits for that (pop_next); without the wait the load
    may overwrite a buffer a gemm still reads."""

    def program(last_load_waits: bool) -> list[Instruction]:
        return [load(local=0, flags="push_next"), load(local=256, flags="push_next"),
                gemm(a=0, flags="pop_prev push_prev"), gemm(a=256, flags="pop_prev push_prev"),
                load(local=0, flags="pop_next push_next"),
                load(local=256, flags="pop_next push_next" if last_load_waits else "push_next"),
                gemm(a=0, flags="pop_prev"), gemm(a=256, flags="pop_prev push_next"),
                store(flags="pop_prev"), FINISH]  # fmt: skip

    check_program(program(True), PARAMS)
    with pytest.raises(NpuProgramError, match=r"instruction 5 \(load .*\) writes SP line 256, "
                       r"which instruction 3 \(gemm .*\) uses"):  # fmt: skip
        check_program(program(False), PARAMS)


def _doc_table(heading: str) -> list[list[str]]:
    section = DOC.split(heading, 1)[1].split("\n#", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip().strip("`") for cell in row] for row in rows[1:]]


@pytest.mark.parametrize("opcode", sorted(FORMATS))
def test_the_doc_gives_each_encoding(opcode: int) -> None:
    fmt = FORMATS[opcode]
    heading = f"### `{fmt.mnemonic}` (0x{opcode:02X}"
    assert heading in DOC
    if fmt.module is not None:
        assert f"0x{opcode:02X}, {fmt.module} module)" in DOC
    table = _doc_table(heading) if fmt.fields else []
    assert [(name, int(bits)) for name, bits, *_ in table] == [(f.name, f.bits) for f in fmt.fields]


def test_the_doc_gives_the_parameters_and_types() -> None:
    table = {name: int(value) for name, value, _ in _doc_table("## Parameters")}
    assert table == {name: getattr(PARAMS, name) for name in table}
    assert set(table) == set(NpuParams.__dataclass_fields__)
    types = [(int(code), name, int(size)) for code, name, size, _ in _doc_table("## Element types")]
    assert types == [(t.code, t.name, t.bytes) for t in ELEMENT_TYPES]
    ops = re.search(r"\| `op` \| 4 \| (.*) \|", DOC)
    assert ops is not None
    listed = re.findall(r"(\d) (\w+)", ops.group(1))
    assert listed == [(str(i), name) for i, name in enumerate(ALU_OPS)]
