"""The `loop` level: loop nests over buffers, on upstream dialects.

After bufferization a model is one `func.func` whose body is a sequence of
loop nests written in xDSL's own dialects, so upstream passes (`licm`,
`scf-for-loop-unroll`, `scf-parallel-loop-tiling`, `gpu-map-parallel-loops`)
run on it unchanged:

- loops are `scf.for` (sequential) and `scf.parallel` (iterations
  independent; one dim per op as Ember emits them), with SSA `index` bounds
  (`arith.constant` where static, `memref.dim` or an argument where not);
- buffers are `memref`s, possibly with dynamic dims (`memref<?x?xf32>`);
  elements are read and written by `memref.load`/`memref.store`, views are
  `memref.subview`, `memref.view` and `memref.reinterpret_cast`;
- scalars are `arith` and `math`; functions are `func`.

A reshape is `memref.reinterpret_cast` to offset 0 and row-major strides:
an ONNX reshape may regroup dims arbitrarily (2x3 -> 3x2), which neither
`memref.collapse_shape` nor `memref.expand_shape` expresses in one op, while
a reinterpret cast of a contiguous, offset-0 buffer expresses any of them.

What upstream lacks stays here:

- `loop.weight`: a constant buffer whose data goes to the weights blob (not
  into code). `loop-pack-weights` lays the blob out and turns each into a
  `memref.view` of the weights buffer.
- The ABI buffers, explicit in the IR: `loop-pack-weights` adds the weights
  blob and `loop-plan-memory` the arena as trailing `memref<Nxi8>` arguments
  of the function, marked by the argument attributes `ember.weights` and
  `ember.arena` (`WEIGHTS_ARG`, `ARENA_ARG`). An intermediate buffer
  (`memref.alloc` after bufferization) becomes a `memref.view` of the arena
  at its byte offset. The function's inputs and outputs are its other
  memref arguments, in that order.
- `loop.kernel`: one kernel, as a region (IREE's `flow.dispatch.region`):
  the unit a target outlines, launches or offloads. Its one block is not
  isolated from above: it uses the values around it directly, so nothing
  needs threading through operands until a target outlines it
  (`loop-outline-kernels` turns the captured values into arguments). Each
  `graph.fused` group becomes one kernel at the tensor level (with the
  group's `kind`); there it has results, which its `loop.yield` terminator
  yields (as `scf.execute_region` does). After bufferization it has none:
  its results live in buffers defined before it, which it writes, and the
  terminator (then empty) is implicit. Every other top-level loop nest
  becomes a kernel of its own (`loop-form-kernels`). Attributes other than
  `kind` (a schedule, say) print after `attributes`:

      %r = loop.kernel "conv" -> (tensor<1x8x4x4xf32>) {
        ...
        loop.yield %relu : tensor<1x8x4x4xf32>
      }
      loop.kernel {
        scf.parallel ...
      }

- `loop.bf16_dot`: the sum of bfloat16 pairs into f32 lanes (the CPU's
  `vdpbf16ps`): `r[i] = acc[i] + a[2i] * b[2i] + a[2i+1] * b[2i+1]` for an
  accumulator `vector<Wxf32>` and two `vector<2Wxbf16>` (each product is
  exact in f32; the instruction flushes subnormal inputs and results to
  zero). Upstream MLIR has it as `x86vector.avx512.dot`, which xDSL lacks.
  `convert-loop-to-llvm` emits the instruction where the CPU has
  AVX512-BF16 and two `fma`s on the even and odd lanes widened to f32
  elsewhere.
- `loop.timestamp`: a reading of the CPU's cycle counter (i64), which
  `loop-instrument-kernels` puts around kernel calls when a profile is asked
  for; it has a side effect, so nothing moves it across the calls it times.
- Discardable attributes: `ember.kernel` on outlined kernel functions,
  `loop.arena_bytes`, `loop.naive_bytes` and `loop.weights_bytes` on the
  planned function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    UnitAttr,
    VectorType,
    bf16,
    f32,
    i8,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Block, BlockArgument, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
    ensure_terminator,
)
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


class _BufferOp(IRDLOperation):
    def verify_(self) -> None:
        _check_static(self, self.result_types[0])


@irdl_op_definition
class WeightOp(_BufferOp):
    """A constant buffer whose data travels in the weights blob, not in code."""

    name = "loop.weight"
    result = result_def(MemRefType)
    value = prop_def(DenseIntOrFPElementsAttr)
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
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> WeightOp:
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("loop.weight expects a dense literal")
        parser.parse_punctuation("->")
        return cls(value, parser.parse_type())


def constant_source(buffer: SSAValue) -> WeightOp | None:
    """The `loop.weight` whose values `buffer` holds, itself or through a
    `memref.subview`, or None."""
    owner = buffer.owner
    if isinstance(owner, memref.SubviewOp):
        owner = owner.source.owner
    return owner if isinstance(owner, WeightOp) else None


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    """Ends a `loop.kernel`'s region, yielding the kernel's results (none on buffers)."""

    name = "loop.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(KernelOp), Pure()))


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One kernel as a region (see the module docstring): its block runs once,
    in order, using the values around it; on tensors its results are what
    its `loop.yield` yields."""

    name = "loop.kernel"
    outs = var_result_def()
    kind = opt_prop_def(StringAttr)
    """The `graph.fused` kind the kernel came from (`conv`, `elementwise`, ...)."""
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        body: Region | Block | None = None,
        result_types: Sequence[Attribute] = (),
        kind: str | StringAttr | None = None,
    ):
        if isinstance(kind, str):
            kind = StringAttr(kind)
        if body is None:
            body = Block()
        region = body if isinstance(body, Region) else Region(body)
        super().__init__(result_types=[result_types], regions=[region], properties={"kind": kind})
        ensure_terminator(self, SingleBlockImplicitTerminator(YieldOp))

    @property
    def block(self) -> Block:
        return self.body.block

    @property
    def terminator(self) -> YieldOp:
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)
        return last

    def verify_(self) -> None:
        yielded = self.body.block.last_op
        if not isinstance(yielded, YieldOp):
            raise VerifyException("loop.kernel: the region must end in loop.yield")
        yielded_types = tuple(v.type for v in yielded.arguments)
        if yielded_types != tuple(self.result_types):
            raise VerifyException(
                f"loop.kernel: loop.yield yields ({', '.join(map(str, yielded_types))}) "
                f"but the kernel's results are ({', '.join(map(str, self.result_types))})"
            )

    def print(self, printer: Printer) -> None:
        if self.kind is not None:
            printer.print_string(" ")
            printer.print_attribute(self.kind)
        if self.outs:
            printer.print_string(" -> (")
            printer.print_list(self.outs.types, printer.print_attribute)
            printer.print_string(")")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body, print_entry_block_args=False, print_block_terminators=bool(self.outs)
        )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        kind = parser.parse_optional_str_literal()
        result_types: list[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            result_types = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        kernel = cls(parser.parse_region(), result_types, kind)
        if attributes is not None:
            kernel.attributes |= attributes.data
        return kernel


@irdl_op_definition
class Bf16DotOp(IRDLOperation):
    """`r[i] = acc[i] + a[2i] * b[2i] + a[2i+1] * b[2i+1]`: the pairs of two
    bfloat16 vectors summed into an f32 accumulator of half their length (the
    module docstring)."""

    name = "loop.bf16_dot"
    ACC: ClassVar = VarConstraint("ACC", base(VectorType))
    PAIRS: ClassVar = VarConstraint("PAIRS", base(VectorType))
    acc = operand_def(ACC)
    lhs = operand_def(PAIRS)
    rhs = operand_def(PAIRS)
    result = result_def(ACC)
    traits = traits_def(Pure())
    assembly_format = "$acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs)"

    def __init__(self, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(operands=[acc, lhs, rhs], result_types=[acc.type])

    def verify_(self) -> None:
        acc, lhs, rhs = (v.type for v in self.operands)
        assert isinstance(acc, VectorType) and isinstance(lhs, VectorType)
        if acc.element_type != f32 or acc.get_num_dims() != 1:
            raise VerifyException(
                f"{self.name}: the accumulator must be a vector of f32, got {acc}"
            )
        if lhs != rhs or lhs != VectorType(bf16, [2 * acc.get_shape()[0]]):
            raise VerifyException(
                f"{self.name}: the operands must both be vector<{2 * acc.get_shape()[0]}xbf16> "
                f"for {acc}, got {lhs} and {rhs}"
            )
        if self.result.type != acc:
            raise VerifyException(f"{self.name}: the result must be {acc}, got {self.result.type}")


@irdl_op_definition
class TimestampOp(IRDLOperation):
    """The CPU's cycle counter now (x86: the time-stamp counter, which ticks
    at a constant rate): two readings around a call time it. Not `Pure`:
    it must stay where it is, between the calls it times."""

    name = "loop.timestamp"
    time = result_def(i64)
    assembly_format = "attr-dict `:` type($time)"

    def __init__(self) -> None:
        super().__init__(result_types=[i64])


@irdl_op_definition
class TraceOp(IRDLOperation):
    """Appends one kernel call, from `begin` to `end` (`loop.timestamp`
    readings), to the run-time trace, if one is being recorded (the CPU
    runtime's `ember_trace_record`; `ember bench --trace`). `kernel` is the
    call's row in the function's `ember.profile`."""

    name = "loop.trace"
    kernel = prop_def(IntegerAttr[I64])
    begin = operand_def(i64)
    end = operand_def(i64)
    assembly_format = "$kernel `,` $begin `,` $end attr-dict"

    def __init__(self, kernel: int, begin: SSAValue, end: SSAValue) -> None:
        super().__init__(operands=[begin, end], properties={"kernel": IntegerAttr(kernel, i64)})


KERNEL_ATTR = "ember.kernel"
"""Marks a function that `loop-outline-kernels` made of a `loop.kernel`."""
PARALLEL_BODY_ATTR = "ember.parallel_body"
"""Marks a function outlined from a parallel loop (the CPU target's
`loop-parallelize`): its last two arguments are the range [begin, end) of the
loop's (linearised) iterations."""
PARALLEL_THREADS_ATTR = "ember.parallel_threads"
"""On a call to a parallel body: the number of threads to split it among
(`convert-loop-to-llvm` makes the call a launch)."""
WEIGHTS_ARG = "ember.weights"
"""Marks the function argument that is the weights blob (`memref<Nxi8>`)."""
ARENA_ARG = "ember.arena"
"""Marks the function argument that is the arena (`memref<Nxi8>`)."""
ABI_BUFFERS = (WEIGHTS_ARG, ARENA_ARG)
"""The ABI buffers, in the order they follow the inputs and outputs."""
PACKED_BUFFERS_ATTR = "ember.packed_buffers"
"""Marks a function whose inputs and outputs arrive as one array of pointers
(the model's entry function; `convert-loop-to-llvm` states its ABI)."""


def marked_argument(func: FuncOp, marker: str) -> BlockArgument | None:
    """The argument of `func` that carries the unit attribute `marker`."""
    if func.arg_attrs is None:
        return None
    for arg, attrs in zip(func.args, func.arg_attrs.data):
        if marker in attrs.data:
            return arg
    return None


def add_abi_argument(func: FuncOp, marker: str, nbytes: int | None) -> BlockArgument:
    """Appends the ABI buffer `marker` (`memref<nbytes x i8>`, `memref<?xi8>`
    for None: a size known at run time) to `func`'s arguments, after the
    inputs and outputs and before any later ABI buffer."""
    block = func.body.block
    later = [m for m in ABI_BUFFERS[ABI_BUFFERS.index(marker) + 1 :] if marked_argument(func, m)]
    position = len(block.args) - len(later)
    arg = block.insert_arg(MemRefType(i8, [DYNAMIC_INDEX if nbytes is None else nbytes]), position)
    arg.name_hint = marker.removeprefix("ember.")
    attrs = (
        list(func.arg_attrs.data)
        if func.arg_attrs
        else [DictionaryAttr({})] * (len(block.args) - 1)
    )
    attrs.insert(position, DictionaryAttr({marker: UnitAttr()}))
    func.arg_attrs = ArrayAttr(attrs)
    inputs = [a.type for a in block.args]
    func.function_type = FunctionType.from_lists(inputs, func.function_type.outputs.data)
    return arg


Loop = Dialect(
    "loop", [Bf16DotOp, KernelOp, TimestampOp, TraceOp, WeightOp, YieldOp], [ScheduleAttr]
)

__all__ = [
    "PARALLEL_BODY_ATTR",
    "PARALLEL_THREADS_ATTR",
    "ABI_BUFFERS",
    "ALIGNMENT",
    "ARENA_ARG",
    "Bf16DotOp",
    "PACKED_BUFFERS_ATTR",
    "WEIGHTS_ARG",
    "KERNEL_ATTR",
    "KernelOp",
    "Loop",
    "TimestampOp",
    "TraceOp",
    "WeightOp",
    "YieldOp",
    "add_abi_argument",
    "align",
    "aligned_zeros",
    "byte_size",
    "constant_source",
    "marked_argument",
]
