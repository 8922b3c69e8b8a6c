"""`ember-opt prog.npu` prints a program as it disassembles it: the same
text as printing the IR of `disassemble`, starting before the rest of the
binary is read, with the same work for every instruction however long the
program (a 400,000-instruction program once took minutes, building and
verifying every op before printing the first)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from io import StringIO
from itertools import islice
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from xdsl.dialects.builtin import ModuleOp

from ember.dialects.npu.machine import BY_MNEMONIC, FORMATS, Instruction, NpuProgramError
from ember.dialects.npu.ops import instruction_op, instruction_text
from ember.printing import make_printer
from ember.targets.npu.assembler import disassemble, disassembly_lines
from ember.targets.npu.isa import NpuBinaryError, encode, encode_program
from tests.support.npu_programs import FINISH, instruction, load, tiled_matmul


def _matmul_binary(output_tiles: int) -> bytes:
    """A valid program of 13 instructions per output tile (4 k-tiles of 3,
    a store), plus a few at the end."""
    return encode_program(tiled_matmul(16 * output_tiles, 64, 16, 0, 1 << 20, 1 << 21))


def _printed(module: ModuleOp) -> str:
    stream = StringIO()
    make_printer(stream).print_op(module)
    return stream.getvalue()


def test_the_lines_are_what_the_printer_prints_for_the_ir() -> None:
    binaries = [("first", _matmul_binary(3)), ("second", encode_program([FINISH]))]
    module = ModuleOp([disassemble(data, name) for name, data in binaries])
    assert "\n".join(disassembly_lines(binaries)) == _printed(module)


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=lambda f: f.mnemonic)
def test_each_instruction_prints_as_its_op(fmt: Any) -> None:
    """Every format, its fields at their extremes (negative for a signed
    one) and every flag its module may carry."""
    values = {f.name: -(1 << (f.bits - 1)) if f.signed else (1 << f.bits) - 1 for f in fmt.fields}
    flags = frozenset({"pop_prev", "push_next"}) if fmt.module == "compute" else frozenset()
    inst = Instruction(fmt.mnemonic, values, flags)
    assert (
        instruction_text(inst) == _printed(ModuleOp([instruction_op(inst)])).splitlines()[1].strip()
    )


def test_lines_come_before_the_rest_of_the_binary_is_read() -> None:
    """A million instructions, the 1,000th malformed: the first lines come
    without an error, so nothing past them was decoded."""
    good = encode(load(0, 0, 16, 16, 0, 16))
    binary = good * 999 + bytes(16) + good * (1_000_000 - 1_001) + encode(FINISH)
    lines = list(islice(disassembly_lines([("big", binary)]), 10))
    assert lines[:2] == ["builtin.module {", '  npu.program "big" {']
    assert lines[2] == f"    {instruction_text(load(0, 0, 16, 16, 0, 16))}"
    with pytest.raises(NpuBinaryError, match=r"instruction 999 \(byte 15984\): unknown opcode"):
        list(disassembly_lines([("big", binary)]))


def _calls(work: Callable[[], object]) -> int:
    """Python and C function calls (generator steps included) `work` makes."""
    counts: Counter[str] = Counter()

    def count(frame: FrameType, event: str, arg: Any) -> None:
        counts[event] += 1

    sys.setprofile(count)
    try:
        work()
    finally:
        sys.setprofile(None)
    return counts["call"] + counts["c_call"]


@pytest.mark.slow
def test_the_work_per_instruction_does_not_grow_with_the_program() -> None:
    small, large = _matmul_binary(150), _matmul_binary(1_500)
    assert len(large) // 16 > 19_000
    per_small = _calls(lambda: list(disassembly_lines([("p", small)]))) / (len(small) // 16)
    per_large = _calls(lambda: list(disassembly_lines([("p", large)]))) / (len(large) // 16)
    assert per_large == pytest.approx(per_small, rel=0.02)


@pytest.mark.slow
def test_verifying_the_ir_of_a_program_is_linear_too() -> None:
    """The IR path (`-p`, `-t npu-hex`) builds the ops and verifies them:
    an instruction's verifier once looked up its own index in the block."""
    small, large = _matmul_binary(20), _matmul_binary(200)
    per_small = _calls(lambda: disassemble(small)) / (len(small) // 16)
    per_large = _calls(lambda: disassemble(large)) / (len(large) // 16)
    assert per_large == pytest.approx(per_small, rel=0.05)


def test_a_program_that_breaks_the_rules_ends_the_lines_with_an_error() -> None:
    too_big = instruction("gemm", a=0, b=256, c=0, m=17, k=16, n=16, accumulate=0, elem=0)
    with pytest.raises(NpuProgramError, match=r"npu.program @p: instruction 0 \(gemm .*m = 17"):
        list(disassembly_lines([("p", encode_program([too_big, FINISH]))]))
    unpopped = load(0, 0, 16, 16, 0, 16, flags="push_next")
    with pytest.raises(NpuProgramError, match="npu.program @p: tokens left at finish"):
        list(disassembly_lines([("p", encode_program([unpopped, FINISH]))]))
    assert BY_MNEMONIC["finish"].fields == ()


def test_ember_opt_stops_when_its_reader_does(tmp_path: Path) -> None:
    """`ember-opt big.npu | head -3`: the reader has its lines and ember-opt
    ends quietly. The binary's 200,000th instruction is malformed: reaching
    it would be an error, and a pipe holds some 400 lines."""
    good = encode(load(0, 0, 16, 16, 0, 16))
    path = tmp_path / "big.npu"
    path.write_bytes(good * 200_000 + bytes(16) + good * 799_998 + encode(FINISH))
    process = subprocess.Popen([sys.executable, "-m", "ember.opt", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    head = [process.stdout.readline() for _ in range(3)]
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 0, err
    assert err == ""
    assert head[1] == b'  npu.program "big" {\n'
    assert head[2].startswith(b"    npu.load {dram_addr = 0 : i64")


def test_ember_opt_writes_no_output_file_for_a_bad_binary(tmp_path: Path) -> None:
    path = tmp_path / "bad.npu"
    path.write_bytes(encode(load(0, 0, 16, 16, 0, 16)) * 1_000)
    result = subprocess.run([sys.executable, "-m", "ember.opt", str(path), "-o",
                             str(tmp_path / "out.mlir")], capture_output=True, timeout=60)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.decode().strip() == (
        f"{path}: error: the binary ends without finish (after 1000 instructions)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.npu"]
