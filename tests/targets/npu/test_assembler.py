"""The NPU assembler and disassembler: an `npu.program` to its binary and
back gives the same program and the same bytes; a binary or a program that
is not valid is an error naming the instruction."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from ember.context import make_context
from ember.dialects.npu.machine import Instruction, NpuParams, NpuProgramError
from ember.dialects.npu.ops import ProgramOp, instruction_op
from ember.targets.npu.assembler import assemble, disassemble
from ember.targets.npu.isa import NpuBinaryError, encode

ROUNDTRIP = Path(__file__).parents[2] / "filecheck" / "dialects" / "npu" / "roundtrip.mlir"


def _programs() -> list[ProgramOp]:
    module = Parser(make_context(), ROUNDTRIP.read_text()).parse_module()
    assert isinstance(module, ModuleOp)
    return [op for op in module.ops if isinstance(op, ProgramOp)]


@pytest.mark.parametrize("index", [0, 1])
def test_assembly_round_trips(index: int) -> None:
    program = _programs()[index]
    binary = assemble(program)
    assert len(binary) == 16 * len(list(program.body.block.ops))
    back = disassemble(binary, program.sym_name.data, program.params)
    assert str(back) == str(program)
    assert assemble(back) == binary


def test_the_parameters_decide_what_verifies() -> None:
    """The 8 x 8 machine's program is too big for nothing; a 16-row alu is
    too big for it."""
    alu = Instruction("alu", dict(op=0, src=0, src2=16, dst=0, rows=16, cols=16, use_imm=0,
                                  elem=3, imm=0))  # fmt: skip
    binary = assemble(ProgramOp("p", [instruction_op(alu), instruction_op(Instruction("finish"))]))
    with pytest.raises(
        NpuProgramError, match=r"instruction 0 \(alu .*\): rows = 16 is not in 1..8"
    ):
        disassemble(binary, params=NpuParams(dim=8))


def test_invalid_programs_are_not_assembled() -> None:
    load = Instruction("load", dict(dram_addr=0, stride=16, local=0, rows=16, cols=16, to_acc=0,
                                    elem=0), frozenset({"push_next"}))  # fmt: skip
    program = ProgramOp("p", [instruction_op(load), instruction_op(Instruction("finish"))])
    with pytest.raises(NpuProgramError, match="tokens left at finish: 1 on load->compute"):
        assemble(program)


def test_malformed_binaries_are_not_disassembled() -> None:
    load = encode(Instruction("load", dict(dram_addr=0, stride=16, local=0, rows=16, cols=16,
                                           to_acc=0, elem=0)))  # fmt: skip
    with pytest.raises(NpuBinaryError, match=r"instruction 1 \(byte 16\): unknown opcode 0x00"):
        disassemble(load + bytes(16))


def test_the_doc_example_verifies_and_round_trips() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "npu-isa.md").read_text()
    example = doc.split("```mlir\n", 1)[1].split("```", 1)[0]
    (program,) = Parser(make_context(), example).parse_module().ops
    assert isinstance(program, ProgramOp)
    assert str(disassemble(assemble(program), "tile")) == str(program)
