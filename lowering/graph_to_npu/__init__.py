"""`convert-graph-to-npu`: each `npu.segment` (see `partition`) to an NPU
program, its DRAM image and where its operands and results live.

`lower_segment` walks a segment's body: a MatMul or Gemm becomes one
product (`matmul.Matmul`: A's leading dims are its rows, so a
`[B, S, K] x [K, N]` MatMul is one `[B*S, K] x [K, N]` product), a bias
Add or a Relu after it part of that product, and the products run one
after the other, each with its default schedule (`matmul.default_schedule`,
printed by the report). Memory is laid out once, at compile time (DRAM is
byte-addressed, every tensor row-major and 64-byte aligned):

    [ones column][weights and biases][segment inputs][intermediates][outputs]

The weights are written into the segment's DRAM image now; a run copies
the image, writes the inputs at their addresses, runs the program and
reads the outputs back (`targets/npu/runtime.py`).

The pass form (`ember-opt -p graph-partition-npu,convert-graph-to-npu`)
puts each program next to the function as an `npu.program` and replaces
the segment by an `npu.launch` of it with the DRAM addresses of its
operands and results, so the program can be read and checked with lit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph import AddOp, ConstantOp, GemmOp, MatMulOp, ReluOp
from ember.dialects.graph.ops_tensor import constant_value_of
from ember.dialects.npu.machine import F32, Instruction, NpuParams, NpuProgramError
from ember.dialects.npu.ops import ProgramOp, instruction_op
from ember.dialects.npu.segment import LaunchOp, SegmentOp, YieldOp
from ember.lowering.graph_to_npu.matmul import (
    Matmul,
    MatmulSchedule,
    ProgramBuilder,
    RowMajor,
    default_schedule,
    dense,
    emit_products,
)

ALIGN = 64


@dataclass(frozen=True)
class Placement:
    """A tensor in DRAM: its first byte, shape and type (row-major, dense)."""

    address: int
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


@dataclass(frozen=True)
class Layer:
    """One product of a segment, for reports: the graph ops it runs, its
    schedule and its instructions' indices in the program."""

    ops: str
    product: Matmul
    schedule: MatmulSchedule
    instructions: range


@dataclass
class NpuKernel:
    """A segment compiled: its program, DRAM image and the placement of its
    operands and results."""

    name: str
    params: NpuParams
    program: list[Instruction]
    image: np.ndarray
    inputs: list[Placement]
    outputs: list[Placement]
    layers: list[Layer] = field(default_factory=list)


class _Dram:
    """A bump allocator over the DRAM image, with the bytes known now."""

    def __init__(self) -> None:
        self.chunks: list[tuple[int, bytes]] = []
        self.top = 0

    def place(
        self, shape: tuple[int, ...], dtype: np.dtype, data: np.ndarray | None = None
    ) -> Placement:
        placement = Placement(self.top, shape, np.dtype(dtype))
        if data is not None:
            self.chunks.append((self.top, np.ascontiguousarray(data, dtype=dtype).tobytes()))
        self.top += -(-max(placement.nbytes, 1) // ALIGN) * ALIGN
        return placement

    def image(self) -> np.ndarray:
        image = np.zeros(self.top, np.uint8)
        for address, data in self.chunks:
            image[address : address + len(data)] = np.frombuffer(data, np.uint8)
        return image


def _label(op: Operation) -> str:
    hint = op.results[0].name_hint if op.results else None
    return f"{op.name} %{hint}" if hint else op.name


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def lower_segment(segment: SegmentOp, params: NpuParams | None = None) -> NpuKernel:
    """The segment's program and memory (see the module docstring)."""
    params = params or NpuParams()
    dram = _Dram()
    ones = dram.place((params.dim,), np.dtype(np.float32), np.ones(params.dim, np.float32))
    places: dict[SSAValue, Placement] = {}
    products: list[Matmul] = []
    labels: list[list[str]] = []
    producer: dict[SSAValue, int] = {}  # a product's current result -> its index

    def constant(value: SSAValue) -> Placement:
        if value not in places:
            array = constant_value_of(value)
            assert array is not None
            places[value] = dram.place(array.shape, array.dtype, array)
        return places[value]

    def place(value: SSAValue) -> Placement:
        return constant(value) if isinstance(value.owner, ConstantOp) else places[value]

    ops = [op for op in segment.block.ops if not isinstance(op, ConstantOp | YieldOp)]
    for op in ops:  # the weights first, then the activations
        for operand in op.operands:
            if isinstance(operand.owner, ConstantOp):
                constant(operand)
    for arg in segment.block.args:
        places[arg] = dram.place(_shape(arg), np.dtype(np.float32))
    for op in ops:
        if isinstance(op, MatMulOp | GemmOp):
            a, b = op.operands[0], op.operands[1]
            m, k = int(np.prod(_shape(a)[:-1])), _shape(a)[-1]
            n = _shape(b)[1]
            out = dram.place(_shape(op.results[0]), np.dtype(np.float32))
            bias = None
            if isinstance(op, GemmOp) and op.operand_group("C"):
                bias = constant(op.operand_group("C")[0]).address
            products.append(dense(_label(op), m, k, n, place(a).address, place(b).address,
                                  out.address, bias))  # fmt: skip
            labels.append([_label(op)])
            places[op.results[0]] = out
            producer[op.results[0]] = len(products) - 1
        elif isinstance(op, AddOp | ReluOp):
            tail = next(v for v in op.operands if v in producer)
            index = producer.pop(tail)
            if isinstance(op, AddOp):
                row = next(v for v in op.operands if v is not tail)
                n = products[index].n
                change = {"bias": RowMajor(constant(row).address, 4 * n, 4)}
            else:
                change = {"relu": True}
            products[index] = dataclasses.replace(products[index], **change)  # type: ignore[arg-type]
            labels[index].append(_label(op))
            places[op.results[0]] = places[tail]
            producer[op.results[0]] = index
        else:
            raise NpuProgramError(f"npu.segment @{segment.sym_name.data}: {op.name} is not an "
                                  "op the NPU lowering takes")  # fmt: skip
    schedules = [default_schedule(p, params) for p in products]
    builder = ProgramBuilder(params, {F32.code: ones.address})
    ranges = emit_products(builder, products, schedules)
    terminator = segment.block.last_op
    assert isinstance(terminator, YieldOp)
    layers = [Layer(", ".join(names), product, schedule, indices)
              for names, product, schedule, indices in zip(labels, products, schedules, ranges)]  # fmt: skip
    return NpuKernel(segment.sym_name.data, params, builder.finish(), dram.image(),
                     [places[a] for a in segment.block.args],
                     [places[v] for v in terminator.values], layers)  # fmt: skip


@dataclass(frozen=True)
class ConvertGraphToNpuPass(ModulePass):
    """Each `npu.segment` to an `npu.program` of its name (next to the
    function) and an `npu.launch` of it."""

    name = "convert-graph-to-npu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for segment in [s for s in op.walk() if isinstance(s, SegmentOp)]:
            try:
                kernel = lower_segment(segment)
            except NpuProgramError as error:
                raise DiagnosticException(f"convert-graph-to-npu: {error}") from None
            op.body.block.add_op(ProgramOp(kernel.name, [instruction_op(i) for i in kernel.program],
                                           kernel.params))  # fmt: skip
            launch = LaunchOp(kernel.name, list(segment.inputs), list(segment.result_types),
                              [p.address for p in kernel.inputs],
                              [p.address for p in kernel.outputs])  # fmt: skip
            assert segment.parent is not None
            segment.parent.insert_op_before(launch, segment)
            for old, new in zip(segment.results, launch.results, strict=True):
                old.replace_all_uses_with(new)
            segment.parent.erase_op(segment)


__all__ = ["ConvertGraphToNpuPass", "Layer", "NpuKernel", "Placement", "lower_segment"]
