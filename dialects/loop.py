"""The `loop` dialect: imperative loop nests over buffers.

After bufferization a model is one function whose arguments are the input
and output buffers (`memref`s with static shapes, row-major, contiguous) and
whose body is a sequence of loop nests. Buffers come from three places:

- function arguments (the model's inputs, then its outputs);
- `loop.weight`: a constant tensor, to be packed into the weights blob that
  is passed to the compiled code by pointer (`offset`: its byte offset in
  that blob, set by `loop-pack-weights`);
- `loop.alloc`: an intermediate buffer, placed in one arena by the memory
  planner (`offset`: its byte offset in the arena, set by `loop-plan-memory`).

`loop.reshape` views a buffer under another shape (no copy). `loop.for`
iterates an `index` from `lower` to `upper` (exclusive) by `step`; its body
reads and writes elements with `memref.load`/`memref.store` and computes with
`arith`/`math`. The schedule lives in attributes of `loop.for` (`parallel`,
later vector width and unrolling), not in the structure of the algorithm.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from ember.dialects.schedule import ScheduleAttr

ALIGNMENT = 64
"""Byte alignment of every buffer in the arena and the weights blob (a cache line)."""


def align(offset: int) -> int:
    """`offset` rounded up to the next multiple of `ALIGNMENT`."""
    return -(-offset // ALIGNMENT) * ALIGNMENT


def aligned_zeros(nbytes: int) -> np.ndarray:
    """`nbytes` zero bytes whose address is a multiple of `ALIGNMENT`: the
    arena's and the weights blob's offsets are aligned relative to their base,
    so the base must be too (NumPy guarantees 16 bytes; a 64-byte vector load
    straddling cache lines made Inception-v2 1.6x slower)."""
    raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + nbytes]


def byte_size(memref_type: Attribute) -> int:
    """Bytes of a static, contiguous buffer of this type (`index` is 8 bytes)."""
    assert isinstance(memref_type, MemRefType)
    element = memref_type.element_type
    element_bits = 64 if isinstance(element, IndexType) else element.bitwidth  # type: ignore[attr-defined]
    return math.prod(memref_type.get_shape()) * max(1, (element_bits + 7) // 8)


def _check_static(op: IRDLOperation, memref_type: Attribute) -> None:
    if not isinstance(memref_type, MemRefType) or any(d < 0 for d in memref_type.get_shape()):
        raise VerifyException(f"{op.name}: result must be a static memref, got {memref_type}")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `loop.for` body (implicit in the printed form)."""

    name = "loop.yield"
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict"


@irdl_op_definition
class ForOp(IRDLOperation):
    """`loop.for %i = 0 to 64 step 1 { ... }`: a counted loop over an index."""

    name = "loop.for"
    lower = prop_def(IntegerAttr)
    upper = prop_def(IntegerAttr)
    step = prop_def(IntegerAttr)
    parallel = opt_prop_def(UnitAttr)
    body = region_def("single_block")

    def __init__(
        self,
        lower: int,
        upper: int,
        step: int = 1,
        *,
        parallel: bool = False,
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block([YieldOp()], arg_types=[IndexType()]))
        properties: dict[str, Attribute] = {
            "lower": IntegerAttr(lower, i64),
            "upper": IntegerAttr(upper, i64),
            "step": IntegerAttr(step, i64),
        }
        if parallel:
            properties["parallel"] = UnitAttr()
        super().__init__(properties=properties, regions=[body])

    @property
    def induction_variable(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def bounds(self) -> tuple[int, int, int]:
        return (self.lower.value.data, self.upper.value.data, self.step.value.data)

    def verify_(self) -> None:
        lower, upper, step = self.bounds
        if step < 1:
            raise VerifyException(f"loop.for: step must be positive, got {step}")
        if lower > upper:
            raise VerifyException(f"loop.for: lower bound {lower} exceeds upper bound {upper}")
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise VerifyException("loop.for: the body takes one index argument")
        if not isinstance(block.last_op, YieldOp):
            raise VerifyException("loop.for: the body must end in loop.yield")

    def print(self, printer: Printer) -> None:
        lower, upper, step = self.bounds
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_variable)
        printer.print_string(f" = {lower} to {upper} step {step}")
        if self.parallel is not None:
            printer.print_string(" parallel")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False,
                             print_block_terminators=False)  # fmt: skip
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        argument = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lower = parser.parse_integer()
        parser.parse_keyword("to")
        upper = parser.parse_integer()
        parser.parse_keyword("step")
        step = parser.parse_integer()
        parallel = parser.parse_optional_keyword("parallel") is not None
        body = parser.parse_region((argument.resolve(IndexType()),))
        if not isinstance(body.block.last_op, YieldOp):
            body.block.add_op(YieldOp())
        op = cls(lower, upper, step, parallel=parallel, body=body)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op


class _BufferOp(IRDLOperation):
    def verify_(self) -> None:
        _check_static(self, self.result_types[0])


@irdl_op_definition
class AllocOp(_BufferOp):
    """An intermediate buffer; `offset` is its place in the arena once planned."""

    name = "loop.alloc"
    result = result_def(MemRefType)
    offset = opt_prop_def(IntegerAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])


@irdl_op_definition
class WeightOp(_BufferOp):
    """A constant buffer whose data travels in the weights blob, not in code."""

    name = "loop.weight"
    result = result_def(MemRefType)
    value = prop_def(DenseIntOrFPElementsAttr)
    offset = opt_prop_def(IntegerAttr)
    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"value": value})

    def verify_(self) -> None:
        super().verify_()
        value_shape = tuple(self.value.get_type().get_shape())
        result_type = self.result.type
        assert isinstance(result_type, MemRefType)
        if value_shape != tuple(result_type.get_shape()) or (
            self.value.get_type().get_element_type() != result_type.element_type
        ):
            raise VerifyException("loop.weight: the value and the buffer must have one type")

    def print(self, printer: Printer) -> None:
        from ember.dialects.graph.ops_tensor import print_dense

        printer.print_string(" ")
        print_dense(printer, self.value)
        if self.offset is not None:
            printer.print_string(f" at {self.offset.value.data}")
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> WeightOp:
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("loop.weight expects a dense literal")
        offset = parser.parse_integer() if parser.parse_optional_keyword("at") else None
        parser.parse_punctuation("->")
        op = cls(value, parser.parse_type())
        if offset is not None:
            op.offset = IntegerAttr(offset, i64)
        return op


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """The same contiguous buffer seen under another shape (no copy)."""

    name = "loop.reshape"
    source = operand_def(MemRefType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def verify_(self) -> None:
        _check_static(self, self.source.type)
        _check_static(self, self.result.type)
        if byte_size(self.source.type) != byte_size(self.result.type):
            raise VerifyException("loop.reshape: the two shapes must hold the same bytes")


Loop = Dialect("loop", [ForOp, YieldOp, AllocOp, WeightOp, ReshapeOp], [ScheduleAttr])

__all__ = ["AllocOp", "ForOp", "Loop", "ReshapeOp", "WeightOp", "YieldOp", "byte_size"]
