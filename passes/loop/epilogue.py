"""Epilogues in registers: the elementwise ops after a micro-kernel
contraction that `loop-generate` applies to the block's accumulators before
it stores them.

Inside a `loop.kernel`, a convolution or matmul is usually followed by a
bias add, an activation and sometimes a residual add, each a
`linalg.generic` on buffers reading what the one before wrote. Run as loops
of their own, each writes the whole output and the next reads it back. When
the contraction runs as micro-kernels that store every output element's
final value (`generate.writes_whole_output`), the chain of generics right
after it is its **epilogue** when each generic

- is elementwise over the contraction's output space: every iterator
  parallel, one output written through the identity map, the buffer the
  previous step wrote (the contraction's output first) read through the
  identity map;
- reads its other inputs through maps that pick dims (a bias per channel, a
  residual of the same shape, a rank-0 constant), any one that depends on
  the output's innermost dim through its last index only, from memory where
  that index is contiguous (`vector_readable`), so the block reads it as
  vectors; the others are scalars broadcast to a vector;
- has a body of the lane-by-lane float ops in `VECTOR_OPS` and scalar
  constants (no `linalg.index`, no value from outside);
- takes a buffer that nothing reads after it (an intermediate
  `memref.alloc`, not an argument of the function), and writes a buffer that
  neither the contraction nor any step of the chain reads: a block may be
  computed twice (the overlapping last block) and must find its inputs
  unchanged.

The epilogue then runs on each accumulator vector before the store, op by
op as its bodies say, and the block stores the last generic's value into
the last generic's output. The generics are erased, and with them the
intermediate buffers: each output element is written once. Each element
goes through the same float ops in the same order as the separate loops
took, so results are bit for bit those of the unfused code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import FloatAttr, MemRefType, VectorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from ember.dialects.ember_linalg import indexing_maps
from ember.dialects.loop_nests import LoopNestBuilder
from ember.dialects.schedule import PARALLEL, iteration_space
from ember.passes.loop.fuse import buffer_root

EPILOGUE_ATTR = "loop.epilogue"
"""On a contraction on buffers: how many generics after it are its epilogue
(an `i64`; `loop-fuse-epilogues` sets it, `loop-generate` obeys it)."""

VECTOR_OPS: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.NegfOp,
    arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp,
)  # fmt: skip
"""Float ops an epilogue body may hold: each computes lane by lane on
vectors exactly what it computes on scalars, and `convert-loop-to-llvm`
lowers it on vectors (one LLVM instruction or intrinsic on the vector).
Not `arith.cmpf` (and so not Clip's compare and select): xDSL's verifier
takes only a scalar `i1` as its result."""

Load = Callable[[LoopNestBuilder, SSAValue, Sequence[SSAValue]], SSAValue]
"""Reads a scalar of a buffer at the given indices."""
LoadVector = Callable[[LoopNestBuilder, SSAValue, Sequence[SSAValue], VectorType], SSAValue]
"""Reads a vector of a buffer from the given indices on along its last dim."""


@dataclass(frozen=True)
class Epilogue:
    """The generics a contraction applies to its accumulators, in order, the
    buffer each reads from the step before (the contraction's output first:
    the buffers nothing writes any more once the epilogue is applied), and
    the contraction dim of each position of its output."""

    generics: tuple[linalg.GenericOp, ...]
    intermediates: tuple[SSAValue, ...]
    dims: tuple[int, ...]

    @property
    def output(self) -> SSAValue:
        """Where the block stores: the last generic's output buffer."""
        return self.generics[-1].outputs[0]


def find_epilogue(
    op: Operation, vector_readable: Callable[[SSAValue], bool], limit: int | None = None
) -> Epilogue | None:
    """The longest chain of generics after `op` (at most `limit`) that is its
    epilogue (see the module docstring), or None when the first does not fit.
    The caller has checked that `op`'s micro-kernels write its whole output."""
    space = iteration_space(op)
    output_map = space.output_maps[0]
    if not all(isinstance(e, AffineDimExpr) for e in output_map.results):
        return None
    dims = tuple(e.position for e in output_map.results)  # type: ignore[union-attr]
    operands = op.operands
    read = {buffer_root(v) for v in operands[: len(operands) - 1]}
    buffer = operands[-1]
    generics: list[linalg.GenericOp] = []
    intermediates: list[SSAValue] = []
    candidate = _next_compute(op)
    while isinstance(candidate, linalg.GenericOp) and (limit is None or len(generics) < limit):
        if not _fits(candidate, buffer, len(dims), vector_readable, read):
            break
        generics.append(candidate)
        intermediates.append(buffer)
        read |= {buffer_root(v) for v in candidate.inputs}
        buffer = candidate.outputs[0]
        candidate = _next_compute(candidate)
    if not generics or buffer_root(generics[-1].outputs[0]) in read:
        return None
    return Epilogue(tuple(generics), tuple(intermediates), dims)


def _next_compute(op: Operation) -> Operation | None:
    """The op after `op`, past the `memref.alloc`s of buffers that
    bufferization places just before the op writing them."""
    following = op.next_op
    while isinstance(following, memref.AllocOp):
        following = following.next_op
    return following


def _fits(
    generic: linalg.GenericOp,
    buffer: SSAValue,
    rank: int,
    vector_readable: Callable[[SSAValue], bool],
    read: set[SSAValue],
) -> bool:
    """Whether `generic` can be the next step of an epilogue whose previous
    step wrote `buffer` (see the module docstring)."""
    if len(generic.outputs) != 1 or buffer not in generic.inputs:
        return False
    if not isinstance(buffer.owner, memref.AllocOp) or not _last_read_by(buffer, generic):
        return False
    output = generic.outputs[0]
    buffer_type, output_type = buffer.type, output.type
    if not isinstance(output_type, MemRefType) or not isinstance(buffer_type, MemRefType):
        return False
    if output_type.get_shape() != buffer_type.get_shape():
        return False
    element = buffer_type.element_type
    if output_type.element_type != element or not vector_readable(output):
        return False
    if buffer_root(output) in read | {buffer_root(v) for v in generic.inputs}:
        return False
    if any(kind != PARALLEL for kind in iteration_space(generic).iterators):
        return False
    identity = AffineMap.identity(rank)
    maps = indexing_maps(generic)
    if maps[-1] != identity:
        return False
    for value, amap in zip(generic.inputs, maps):
        if value is buffer:
            if amap != identity:
                return False
        elif not _readable_input(value, amap, rank, vector_readable):
            return False
    return _vector_body(generic, element)


def _last_read_by(buffer: SSAValue, generic: linalg.GenericOp) -> bool:
    """Whether every use of `buffer` is `generic` or an op before it in its
    block: nothing reads what the contraction would no longer write."""
    block = generic.parent_block()
    for use in buffer.uses:
        user = use.operation
        if user is generic:
            continue
        if user.parent_block() is not block or not user.is_before_in_block(generic):
            return False
    return True


def _readable_input(
    value: SSAValue, amap: AffineMap, rank: int, vector_readable: Callable[[SSAValue], bool]
) -> bool:
    """Whether a block can read the input as vectors along the output's
    innermost dim (position `rank - 1`) or as a scalar it broadcasts."""
    value_type = value.type
    if not isinstance(value_type, MemRefType):
        return False
    if not all(isinstance(e, AffineDimExpr) for e in amap.results):
        return False
    innermost = AffineDimExpr(rank - 1)
    if innermost not in amap.results:
        return True
    return amap.results[-1] == innermost and vector_readable(value)


def _vector_body(generic: linalg.GenericOp, element: object) -> bool:
    """Whether the body is `VECTOR_OPS` and scalar float constants on
    `element`, yielding one value, all its operands its own."""
    block = generic.body.block
    if block.args[-1].uses:  # reads what the output held
        return False
    for body_op in block.ops:
        if isinstance(body_op, linalg.YieldOp):
            continue
        if isinstance(body_op, arith.ConstantOp):
            if not isinstance(body_op.value, FloatAttr) or body_op.result.type != element:
                return False
            continue
        if not isinstance(body_op, VECTOR_OPS):
            return False
        if any(r.type != element for r in body_op.results):
            return False
        for operand in body_op.operands:
            if operand.owner is not block and operand.owner.parent_block() is not block:  # type: ignore[union-attr]
                return False
    return True


def step_arguments(generic: linalg.GenericOp, written: SSAValue, value: SSAValue,
                   read: Callable[[SSAValue, AffineMap], SSAValue]) -> dict[SSAValue, SSAValue]:  # fmt: skip
    """The values of an epilogue step's body arguments: the one of the input
    the step before wrote (`written`) is that step's `value`; each other
    input the body uses is `read(operand, its indexing map)`."""
    block = generic.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    for arg, operand, amap in zip(block.args, generic.inputs, indexing_maps(generic)):
        if operand is written:
            mapping[arg] = value
        elif arg.uses:
            mapping[arg] = read(operand, amap)
    return mapping


class EpilogueBlock:
    """Applies an epilogue to the accumulators of one block: `apply` gives
    the value to store for one accumulator at a cell (the contraction dims'
    indices); inputs that several cells read at the same place (a bias along
    a row) are read once per block."""

    def __init__(self, epilogue: Epilogue, vector_type: VectorType, load: Load,
                 load_vector: LoadVector):  # fmt: skip
        self.epilogue, self.vector_type = epilogue, vector_type
        self.load, self.load_vector = load, load_vector
        self.reads: dict[tuple[SSAValue, tuple[SSAValue, ...]], SSAValue] = {}
        self.constants: dict[Operation, SSAValue] = {}
        self.lane_types: dict[Attribute, VectorType] = {}

    def apply(self, builder: LoopNestBuilder, ivs: Sequence[SSAValue],
              accumulator: SSAValue) -> SSAValue:  # fmt: skip
        value = accumulator
        positions = [ivs[d] for d in self.epilogue.dims]
        for generic, written in zip(self.epilogue.generics, self.epilogue.intermediates):
            value = self._step(builder, generic, written, positions, value)
        return value

    def indices(self, ivs: Sequence[SSAValue]) -> list[SSAValue]:
        """Where the block stores in the epilogue's output."""
        return [ivs[d] for d in self.epilogue.dims]

    def _step(self, builder: LoopNestBuilder, generic: linalg.GenericOp, written: SSAValue,
              positions: Sequence[SSAValue], value: SSAValue) -> SSAValue:  # fmt: skip
        block = generic.body.block
        mapping = step_arguments(generic, written, value,
                                 lambda operand, amap: self._read(builder, operand, amap, positions))  # fmt: skip
        for body_op in block.ops:
            if isinstance(body_op, linalg.YieldOp):
                return mapping[body_op.arguments[0]]
            if isinstance(body_op, arith.ConstantOp):
                mapping[body_op.result] = self._splat(builder, body_op)
                continue
            lanes = type(body_op).create(
                operands=[mapping[o] for o in body_op.operands],
                result_types=[self._lanes(r.type) for r in body_op.results],
                properties=dict(body_op.properties),
                attributes=dict(body_op.attributes),
            )
            builder.insert(lanes)
            mapping[body_op.results[0]] = lanes.results[0]
        raise AssertionError("a generic's body ends with linalg.yield")

    def _lanes(self, element: Attribute) -> VectorType:
        """The vector type of `element`s as wide as the accumulators (made
        once per block: a type's construction verifies it)."""
        if element not in self.lane_types:
            self.lane_types[element] = VectorType(element, self.vector_type.get_shape())
        return self.lane_types[element]

    def _read(self, builder: LoopNestBuilder, operand: SSAValue, amap: AffineMap,
              positions: Sequence[SSAValue]) -> SSAValue:  # fmt: skip
        indices = tuple(positions[e.position] for e in amap.results)  # type: ignore[union-attr]
        key = (operand, indices)
        if key not in self.reads:
            if AffineDimExpr(len(positions) - 1) in amap.results:
                self.reads[key] = self.load_vector(builder, operand, indices, self.vector_type)
            else:
                scalar = self.load(builder, operand, indices)
                broadcast = vector.BroadcastOp(scalar, self.vector_type)
                self.reads[key] = builder.insert(broadcast).results[0]
        return self.reads[key]

    def _splat(self, builder: LoopNestBuilder, constant: arith.ConstantOp) -> SSAValue:
        if constant not in self.constants:
            scalar = builder.insert(constant.clone()).results[0]
            splat = vector.BroadcastOp(scalar, self.vector_type)
            self.constants[constant] = builder.insert(splat).results[0]
        return self.constants[constant]


__all__ = ["EPILOGUE_ATTR", "VECTOR_OPS", "Epilogue", "EpilogueBlock", "find_epilogue",
           "step_arguments"]  # fmt: skip
