"""The `npu` dialect: one op per NPU instruction, in an `npu.program`.

    npu.program "tile" {
      npu.load {dram_addr = 0 : i64, stride = 16 : i64, local = 0 : i64, rows = 16 : i64,
                cols = 16 : i64, to_acc = 0 : i64, elem = 0 : i64, push_next}
      npu.gemm {a = 0 : i64, ..., pop_prev, push_next}
      npu.store {..., pop_prev}
      npu.finish
    }

Each instruction op is its `Format` row (`machine.FORMATS`): one i64
property per field, in encoding order, and a unit property per dependency
flag it carries; `instruction()` gives it as a `machine.Instruction` and
`instruction_op` builds one back, so the assembler and the disassembler
translate one to one. The op classes are completed from the table by
`npu_instruction`, as the graph dialect's are from their `OpSpec`s.

Verifiers enforce the machine's limits: each instruction those of the
`NpuParams` its program declares (its properties override the defaults:
`npu.program "p" attributes {dim = 8 : i64}`), each value within its field's width,
and the program its dependency tokens (`machine.check_program`: no pop
without a push to feed it, no token left at `npu.finish`, which ends the
program).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, ClassVar, TypeVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Block, Dialect, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from ember.dialects.npu.machine import (
    BY_MNEMONIC,
    FLAGS,
    Format,
    Instruction,
    NpuParams,
    NpuProgramError,
    check_instruction,
    check_program,
)
from ember.dialects.npu.schedule import NpuScheduleAttr
from ember.dialects.npu.segment import LaunchOp, SegmentOp, YieldOp


class NpuInstructionOp(IRDLOperation):
    """An NPU instruction (the classes below are completed from `FORMATS`)."""

    FORMAT: ClassVar[Format]

    def instruction(self) -> Instruction:
        values = {f.name: self._value(f.name) for f in self.FORMAT.fields}
        flags = frozenset(flag for flag in FLAGS if flag in self.properties)
        return Instruction(self.FORMAT.mnemonic, values, flags)

    def _value(self, name: str) -> int:
        attr = self.properties[name]
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    def verify_(self) -> None:
        program = self.parent_op()
        params = program.params if isinstance(program, ProgramOp) else NpuParams()
        instruction = self.instruction()
        try:
            check_instruction(instruction, params)
        except NpuProgramError:
            # The index only for the message: finding it walks the block, and
            # doing that for every op made verifying a program quadratic.
            index = (program.body.block.get_operation_index(self)
                     if isinstance(program, ProgramOp) else 0)  # fmt: skip
            try:
                check_instruction(instruction, params, index)
            except NpuProgramError as error:
                raise VerifyException(f"{self.name}: {error}") from None


OpT = TypeVar("OpT", bound=NpuInstructionOp)


def npu_instruction(mnemonic: str) -> Callable[[type[OpT]], type[OpT]]:
    """Class decorator: completes the class into the op of `FORMATS`' row
    `mnemonic` (its fields and flags as properties)."""
    fmt = BY_MNEMONIC[mnemonic]

    def complete(cls: type[OpT]) -> type[OpT]:
        namespace: dict[str, Any] = {
            "name": f"npu.{mnemonic}",
            "FORMAT": fmt,
            "__annotations__": {"FORMAT": ClassVar[Format]},
            "assembly_format": "attr-dict",
            "irdl_options": (ParsePropInAttrDict(),),
        }
        for spec in fmt.fields:
            namespace[f"field_{spec.name}"] = prop_def(IntegerAttr[I64], prop_name=spec.name)
        if fmt.module is not None:
            for flag in FLAGS:
                namespace[flag] = opt_prop_def(UnitAttr, prop_name=flag)
        else:
            namespace["traits"] = traits_def(IsTerminator())
        own = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
        return irdl_op_definition(type(cls)(cls.__name__, cls.__bases__, namespace | own))

    return complete


@npu_instruction("load")
class LoadOp(NpuInstructionOp):
    """DMA: rows of DRAM into the scratchpad or the accumulator."""


@npu_instruction("load_strided")
class LoadStridedOp(NpuInstructionOp):
    """DMA: rows of every `step`-th DRAM element into the scratchpad or the accumulator."""


@npu_instruction("store")
class StoreOp(NpuInstructionOp):
    """DMA: rows of the scratchpad or the accumulator into DRAM."""


@npu_instruction("config_store")
class ConfigStoreOp(NpuInstructionOp):
    """The requantisation of later stores from the accumulator to int8."""


@npu_instruction("gemm")
class GemmOp(NpuInstructionOp):
    """C (+)= A B on the matrix unit (A, B in the scratchpad, C in the accumulator)."""


@npu_instruction("alu")
class AluOp(NpuInstructionOp):
    """The vector unit on accumulator rows."""


@npu_instruction("finish")
class FinishOp(NpuInstructionOp):
    """Ends the program."""


INSTRUCTION_OPS: dict[str, type[NpuInstructionOp]] = {
    op.FORMAT.mnemonic: op
    for op in (LoadOp, LoadStridedOp, StoreOp, ConfigStoreOp, GemmOp, AluOp, FinishOp)
}


def instruction_op(instruction: Instruction) -> NpuInstructionOp:
    """The op of `instruction`."""
    properties: dict[str, Any] = {name: IntegerAttr(value, i64)
                                  for name, value in instruction.fields.items()}  # fmt: skip
    properties |= {flag: UnitAttr() for flag in FLAGS if flag in instruction.flags}
    return INSTRUCTION_OPS[instruction.mnemonic].create(properties=properties)


def instruction_text(instruction: Instruction) -> str:
    """The text xDSL prints for `instruction_op(instruction)` (its
    `attr-dict` format: each field as `name = value : i64` in encoding
    order, then its flags), written without building the op: a disassembly
    prints hundreds of thousands of instructions, and an xDSL op with its
    attributes costs tens of microseconds to build and print."""
    fmt = instruction.format
    items = [f"{f.name} = {instruction.fields[f.name]} : i64" for f in fmt.fields]
    items += [flag for flag in FLAGS if flag in instruction.flags]
    return f"npu.{fmt.mnemonic} {{{', '.join(items)}}}" if items else f"npu.{fmt.mnemonic}"


_PARAMS = tuple(f.name for f in fields(NpuParams))


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """An NPU program: its instructions in order, ending in `npu.finish`;
    the machine's parameters, where they differ from the defaults, as
    properties."""

    name = "npu.program"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    dim = opt_prop_def(IntegerAttr[I64])
    scratchpad_bytes = opt_prop_def(IntegerAttr[I64])
    scratchpad_banks = opt_prop_def(IntegerAttr[I64])
    accumulator_bytes = opt_prop_def(IntegerAttr[I64])
    dram_bytes = opt_prop_def(IntegerAttr[I64])
    dma_bytes_per_cycle = opt_prop_def(IntegerAttr[I64])
    dma_latency = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(NoTerminator(), SymbolOpInterface())
    assembly_format = "$sym_name attr-dict-with-keyword $body"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, name: str, instructions: Sequence[Operation] = (),
                 params: NpuParams | None = None):  # fmt: skip
        properties: dict[str, Any] = {"sym_name": StringAttr(name)}
        defaults = NpuParams()
        for param in _PARAMS:
            value = getattr(params or defaults, param)
            if value != getattr(defaults, param):
                properties[param] = IntegerAttr(value, i64)
        super().__init__(properties=properties, regions=[Region(Block(instructions))])

    @property
    def params(self) -> NpuParams:
        given = {p: self.properties[p] for p in _PARAMS if p in self.properties}
        return NpuParams(**{p: a.value.data for p, a in given.items()})  # type: ignore[attr-defined]

    def instructions(self) -> list[Instruction]:
        ops = list(self.body.block.ops)
        stray = [op for op in ops if not isinstance(op, NpuInstructionOp)]
        if stray:
            raise VerifyException(f"npu.program: {stray[0].name} is not an NPU instruction")
        return [op.instruction() for op in ops]  # type: ignore[union-attr]

    def verify_(self) -> None:
        try:
            check_program(self.instructions(), self.params)
        except NpuProgramError as error:
            raise VerifyException(f"npu.program @{self.sym_name.data}: {error}") from None


Npu = Dialect("npu", [ProgramOp, *INSTRUCTION_OPS.values(), SegmentOp, YieldOp, LaunchOp],
              [NpuScheduleAttr])  # fmt: skip

__all__ = ["INSTRUCTION_OPS", "AluOp", "ConfigStoreOp", "FinishOp", "GemmOp", "LoadOp", "LoadStridedOp", "Npu",
           "NpuInstructionOp", "ProgramOp", "StoreOp", "instruction_op", "instruction_text", "npu_instruction"]  # fmt: skip
