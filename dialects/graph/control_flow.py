"""ONNX control flow as region ops: `graph.if`, `graph.loop` and `graph.scan`.

    %r = graph.if %c : (tensor<i1>) -> (tensor<2xf32>) {
      graph.yield %a : tensor<2xf32>
    } else {
      graph.yield %b : tensor<2xf32>
    }

    %final, %stacked = graph.loop (%m, %c, %v0) {loop_segments = array<i64: 1, 1, 1>} : (...) -> (...) {
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<2xf32>):
      ...
      graph.yield %cond_out, %v_out, %slice : tensor<i1>, tensor<2xf32>, tensor<2xf32>
    }

    %state, %ys = graph.scan (%init, %xs) {num_scan_inputs = 1 : i64} : (...) -> (...) {
    ^bb0(%s: tensor<2xf32>, %x: tensor<2xf32>):
      ...
      graph.yield %s_out, %y : tensor<2xf32>, tensor<2xf32>
    }

Each region is one block ending in `graph.yield`. The regions are not
isolated from above: a value of an enclosing region (an ONNX subgraph's
outer-scope reference) is used directly, as an ordinary SSA use.

- `graph.if`: `then_branch` and `else_branch` take no arguments and yield
  the op's results. A dim on which the branches disagree is unknown (`?`) in
  the result type.
- `graph.loop` (ONNX Loop): operands are the optional trip count `M`
  (`tensor<i64>`), the optional condition (`tensor<i1>`) and the initial
  carried values; `loop_segments` says which of the first two are present
  (`[has_M, has_cond, carried]`). The body's arguments are the iteration
  number (`tensor<i64>`), the condition and the carried values; it yields
  the next condition, the carried values and one slice per scan output. The
  loop ends when the trip count is reached or the body's condition is false,
  whether or not the op has a condition operand (the body's first condition
  is then true): ONNX's text says that body condition is ignored without a
  condition operand, but onnxruntime, the oracle, stops on it. The
  results are the final carried values, then the scan outputs (the slices of
  every iteration stacked along a new leading axis, whose length is unknown
  unless the iteration count is a known constant).
- `graph.scan` (ONNX Scan, opset 9 and later): operands are the initial
  states, then `num_scan_inputs` scan inputs; the attributes
  `scan_input_axes`, `scan_input_directions`, `scan_output_axes` and
  `scan_output_directions` keep ONNX's meaning. The body's arguments are the
  states and one slice of each scan input; it yields the next states and one
  slice per scan output. The results are the final states and the scan
  outputs.

The verifiers check the regions' shapes (argument and yield counts, element
types and ranks); `infer_*_result_types` give the result types from the
operands and the bodies (used by the importer and `graph-infer-shapes`).
`graph-unroll-control-flow` (in `graph-simplify`) inlines an `If` with a
constant condition and unrolls a Scan or Loop with a static iteration count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from ember.dialects.graph.ops_elementwise import IdentityOp
from ember.dialects.graph.types import DYNAMIC, tensor_type

BOOL_SCALAR = TensorType(i1, [])
INDEX_SCALAR = TensorType(i64, [])


# ------------------------------------------------------------------ types
class RankMismatch(VerifyException):
    """Values that one result stands for have different ranks (ONNX lets an
    If's branches differ so): no static type covers them."""


def join_types(op_name: str, what: str, types: Sequence[Attribute]) -> TensorType:
    """The type that covers every type of `types`: same element type and
    rank, a dim that differs between them unknown."""
    first = types[0]
    if not all(isinstance(t, TensorType) for t in types):
        raise VerifyException(f"{op_name}: {what} must be ranked tensors")
    tensors: list[TensorType] = list(types)  # type: ignore[arg-type]
    for other in tensors[1:]:
        if other.element_type != tensors[0].element_type:
            raise VerifyException(
                f"{op_name}: {what} disagree in element type "
                f"({tensors[0].element_type} and {other.element_type})"
            )
        if len(other.get_shape()) != len(tensors[0].get_shape()):
            raise RankMismatch(f"{op_name}: {what} disagree in rank ({first} and {other})")
    shapes = [t.get_shape() for t in tensors]
    dims = [d[0] if all(x == d[0] for x in d) else DYNAMIC for d in zip(*shapes)]
    if dims == list(shapes[0]):
        return tensors[0]  # keeps a symbolic encoding the types share
    return tensor_type(tensors[0].element_type, dims)


def _covers(general: Attribute, specific: Attribute) -> bool:
    """Whether `general` admits every value of `specific` (dims equal, or
    unknown in `general`)."""
    if not isinstance(general, TensorType) or not isinstance(specific, TensorType):
        return False
    if general.element_type != specific.element_type:
        return False
    a, b = general.get_shape(), specific.get_shape()
    return len(a) == len(b) and all(x == DYNAMIC or x == y for x, y in zip(a, b))


def _yield_of(op: Operation, region: Region, what: str) -> Operation:
    from ember.dialects.graph.fused import YieldOp

    if len(region.blocks) != 1:
        raise VerifyException(f"{op.name}: the {what} must be one block")
    last = region.block.last_op
    if not isinstance(last, YieldOp):
        raise VerifyException(f"{op.name}: the {what} must end in graph.yield")
    return last


def yielded_types(region: Region) -> list[Attribute]:
    last = region.block.last_op
    assert last is not None
    return [v.type for v in last.operands]


def _check_results(op: Operation, expected: Sequence[Attribute]) -> None:
    if len(expected) != len(op.results):
        raise VerifyException(
            f"{op.name}: the body gives {len(expected)} results, the op has {len(op.results)}"
        )
    for index, (declared, inferred) in enumerate(zip(op.result_types, expected)):
        if not _covers(declared, inferred) and not _covers(inferred, declared):
            raise VerifyException(
                f"{op.name}: result #{index} has type {declared}, but the body gives {inferred}"
            )


def stacked_type(slice_type: Attribute, count: int, axis: int = 0) -> TensorType:
    """The type of `count` slices of `slice_type` stacked along `axis`."""
    assert isinstance(slice_type, TensorType)
    dims = list(slice_type.get_shape())
    dims.insert(axis, count)
    return tensor_type(slice_type.element_type, dims)


def sliced_type(value_type: Attribute, axis: int) -> TensorType:
    """The type of one slice of `value_type` along `axis` (the axis removed)."""
    assert isinstance(value_type, TensorType)
    dims = list(value_type.get_shape())
    del dims[axis]
    return tensor_type(value_type.element_type, dims)


def normalized_axis(axis: int, rank: int, op_name: str) -> int:
    if not -rank <= axis < rank:
        raise VerifyException(f"{op_name}: axis {axis} is out of range for rank {rank}")
    return axis % rank


# ------------------------------------------------------------------- If
@irdl_op_definition
class IfOp(IRDLOperation):
    """ONNX If: runs `then_branch` when the condition is true, else
    `else_branch` (see the module docstring)."""

    name = "graph.if"

    cond = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    then_branch = region_def("single_block")
    else_branch = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect())

    assembly_format = (
        "$cond `:` `(` type($cond) `)` `->` `(` type($outputs) `)` $then_branch "
        "`else` $else_branch attr-dict"
    )

    def __init__(self, cond: SSAValue, result_types: Sequence[Attribute],
                 then_branch: Region, else_branch: Region):  # fmt: skip
        super().__init__(
            operands=[cond], result_types=[result_types], regions=[then_branch, else_branch]
        )

    def infer_result_types(self) -> list[TensorType]:
        then_types, else_types = yielded_types(self.then_branch), yielded_types(self.else_branch)
        if len(then_types) != len(else_types):
            raise VerifyException(
                f"{self.name}: the branches yield {len(then_types)} and {len(else_types)} values"
            )
        return [join_types(self.name, f"the branches' values #{i}", [a, b])
                for i, (a, b) in enumerate(zip(then_types, else_types))]  # fmt: skip

    def verify_(self) -> None:
        cond_type = self.cond.type
        if not isinstance(cond_type, TensorType) or cond_type.element_type != i1:
            raise VerifyException(f"{self.name}: the condition must be a tensor of i1")
        if cond_type.get_shape() not in ((), (1,)):
            raise VerifyException(f"{self.name}: the condition must hold one element")
        for region, what in ((self.then_branch, "then branch"), (self.else_branch, "else branch")):
            _yield_of(self, region, what)
            if region.block.args:
                raise VerifyException(f"{self.name}: the {what} takes no arguments")
        _check_results(self, self.infer_result_types())


# ------------------------------------------------------------ loop ops
class BodyOp(IRDLOperation):
    """What `graph.loop` and `graph.scan` share: operands, results, one body,
    properties in the attribute dictionary."""

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body"


@irdl_op_definition
class LoopOp(BodyOp):
    """ONNX Loop (see the module docstring)."""

    name = "graph.loop"

    loop_segments = prop_def(DenseArrayBase)

    def __init__(self, max_trip_count: SSAValue | None, cond: SSAValue | None,
                 carried: Sequence[SSAValue], result_types: Sequence[Attribute],
                 body: Region):  # fmt: skip
        given = [v for v in (max_trip_count, cond) if v is not None]
        segments = [int(max_trip_count is not None), int(cond is not None), len(carried)]
        super().__init__(
            operands=[[*given, *carried]],
            result_types=[result_types],
            properties={"loop_segments": DenseArrayBase.from_list(i64, segments)},
            regions=[body],
        )

    @property
    def segments(self) -> tuple[int, int, int]:
        has_m, has_cond, carried = self.loop_segments.get_values()  # type: ignore[misc]
        return int(has_m), int(has_cond), int(carried)

    @property
    def max_trip_count(self) -> SSAValue | None:
        return self.inputs[0] if self.segments[0] else None

    @property
    def condition(self) -> SSAValue | None:
        has_m, has_cond, _ = self.segments
        return self.inputs[has_m] if has_cond else None

    @property
    def carried(self) -> list[SSAValue]:
        has_m, has_cond, _ = self.segments
        return list(self.inputs[has_m + has_cond :])

    @property
    def num_scan_outputs(self) -> int:
        return len(self.outputs) - len(self.carried)

    def infer_result_types(self, iterations: int | None = None) -> list[TensorType]:
        """Final carried values (the initial and yielded types joined), then
        the scan outputs (`iterations` slices stacked; unknown when None)."""
        yielded = yielded_types(self.body)[1:]
        carried = self.carried
        results = [join_types(self.name, f"carried value #{i}", [v.type, yielded[i]])
                   for i, v in enumerate(carried)]  # fmt: skip
        count = DYNAMIC if iterations is None else iterations
        results += [stacked_type(t, count) for t in yielded[len(carried) :]]
        return results

    def verify_(self) -> None:
        has_m, has_cond, carried = self.segments
        if (
            has_m not in (0, 1)
            or has_cond not in (0, 1)
            or has_m + has_cond + carried != len(self.inputs)
        ):
            raise VerifyException(f"{self.name}: loop_segments do not match the operands")
        for value, what, expected in ((self.max_trip_count, "trip count", i64),
                                      (self.condition, "condition", i1)):  # fmt: skip
            if value is not None and not _is_scalar_of(value.type, expected):
                raise VerifyException(f"{self.name}: the {what} must be a one-element {expected}")
        terminator = _yield_of(self, self.body, "body")
        args = self.body.block.args
        if len(args) != 2 + carried:
            raise VerifyException(
                f"{self.name}: the body takes the iteration number, the condition and "
                f"{carried} carried values, it has {len(args)} arguments"
            )
        if not _is_scalar_of(args[0].type, i64) or not _is_scalar_of(args[1].type, i1):
            raise VerifyException(
                f"{self.name}: the body's first arguments are the iteration number "
                "(tensor<i64>) and the condition (tensor<i1>)"
            )
        if len(terminator.operands) < 1 + carried:
            raise VerifyException(
                f"{self.name}: the body yields the condition and {carried} carried values"
            )
        if not _is_scalar_of(terminator.operands[0].type, i1):
            raise VerifyException(f"{self.name}: the body's first yield is the condition")
        for index, (arg, init) in enumerate(zip(args[2:], self.carried)):
            join_types(self.name, f"carried value #{index}", [arg.type, init.type])
        expected = self.infer_result_types()
        for index, (declared, inferred) in enumerate(zip(self.result_types, expected)):
            if index >= carried and isinstance(declared, TensorType):
                # the stacked length depends on the iteration count
                inferred = stacked_type(sliced_type(inferred, 0), declared.get_shape()[0])
                expected[index] = inferred
        _check_results(self, expected)


def _is_scalar_of(value_type: Attribute, element: IntegerType) -> bool:
    return (
        isinstance(value_type, TensorType)
        and value_type.element_type == element
        and value_type.get_shape() in ((), (1,))
    )


# ----------------------------------------------------------------- Scan
@irdl_op_definition
class ScanOp(BodyOp):
    """ONNX Scan, opset 9 and later (see the module docstring)."""

    name = "graph.scan"

    num_scan_inputs = prop_def(IntegerAttr[I64])
    scan_input_axes = opt_prop_def(DenseArrayBase)
    scan_input_directions = opt_prop_def(DenseArrayBase)
    scan_output_axes = opt_prop_def(DenseArrayBase)
    scan_output_directions = opt_prop_def(DenseArrayBase)

    def __init__(self, inputs: Sequence[SSAValue], num_scan_inputs: int,
                 result_types: Sequence[Attribute], body: Region,
                 axes: dict[str, Sequence[int]] | None = None):  # fmt: skip
        properties: dict[str, Attribute] = {"num_scan_inputs": IntegerAttr(num_scan_inputs, i64)}
        for name, values in (axes or {}).items():
            properties[name] = DenseArrayBase.from_list(i64, list(values))
        super().__init__(
            operands=[inputs], result_types=[result_types], properties=properties, regions=[body]
        )

    @property
    def num_states(self) -> int:
        return len(self.inputs) - self.num_scan_inputs.value.data

    @property
    def num_scan_outputs(self) -> int:
        return len(self.outputs) - self.num_states

    def _list(self, name: str, count: int) -> list[int]:
        attr = self.properties.get(name)
        if attr is None:
            return [0] * count
        assert isinstance(attr, DenseArrayBase)
        values = [int(v) for v in attr.get_values()]
        if len(values) != count:
            raise VerifyException(f"{self.name}: {name} must have {count} entries")
        return values

    def input_axes(self) -> list[int]:
        """The scan axis of each scan input, normalised to be non-negative."""
        scans = self.inputs[self.num_states :]
        axes = self._list("scan_input_axes", len(scans))
        return [normalized_axis(a, _rank(v.type), self.name) for a, v in zip(axes, scans)]

    def input_directions(self) -> list[int]:
        return self._list("scan_input_directions", self.num_scan_inputs.value.data)

    def output_axes(self) -> list[int]:
        """The axis of each scan output, normalised (the output's rank is the
        slice's plus one)."""
        slices = yielded_types(self.body)[self.num_states :]
        axes = self._list("scan_output_axes", len(slices))
        return [normalized_axis(a, _rank(t) + 1, self.name) for a, t in zip(axes, slices)]

    def output_directions(self) -> list[int]:
        return self._list("scan_output_directions", self.num_scan_outputs)

    def sequence_length(self) -> int:
        """The static number of iterations (DYNAMIC when unknown)."""
        scans = self.inputs[self.num_states :]
        lengths = {_dims(v.type)[axis] for v, axis in zip(scans, self.input_axes())}
        known = lengths - {DYNAMIC}
        if len(known) > 1:
            raise VerifyException(
                f"{self.name}: the scan inputs have different lengths {sorted(known)}"
            )
        return known.pop() if known else DYNAMIC

    def body_argument_types(self) -> list[TensorType]:
        """The states' types, then one slice of each scan input."""
        states = [v.type for v in self.inputs[: self.num_states]]
        scans = self.inputs[self.num_states :]
        slices = [sliced_type(v.type, a) for v, a in zip(scans, self.input_axes())]
        return [*states, *slices]  # type: ignore[list-item]

    def infer_result_types(self) -> list[TensorType]:
        yielded = yielded_types(self.body)
        states = self.num_states
        results = [join_types(self.name, f"state #{i}", [self.inputs[i].type, yielded[i]])
                   for i in range(states)]  # fmt: skip
        length = self.sequence_length()
        results += [stacked_type(t, length, a)
                    for t, a in zip(yielded[states:], self.output_axes())]  # fmt: skip
        return results

    def verify_(self) -> None:
        count = self.num_scan_inputs.value.data
        if not 0 < count <= len(self.inputs):
            raise VerifyException(
                f"{self.name}: num_scan_inputs is {count}, the op has {len(self.inputs)} inputs"
            )
        terminator = _yield_of(self, self.body, "body")
        args = self.body.block.args
        expected_args = self.body_argument_types()
        if len(args) != len(expected_args):
            raise VerifyException(
                f"{self.name}: the body takes {len(expected_args)} arguments "
                f"(states, then scan slices), it has {len(args)}"
            )
        for index, (arg, expected) in enumerate(zip(args, expected_args)):
            join_types(self.name, f"body argument #{index}", [arg.type, expected])
        if len(terminator.operands) < self.num_states:
            raise VerifyException(f"{self.name}: the body yields {self.num_states} states first")
        for name, directions in (("scan_input_directions", self.input_directions()),
                                 ("scan_output_directions", self.output_directions())):  # fmt: skip
            if any(d not in (0, 1) for d in directions):
                raise VerifyException(f"{self.name}: {name} must be 0 (forward) or 1 (reverse)")
        _check_results(self, self.infer_result_types())


def _dims(value_type: Attribute) -> tuple[int, ...]:
    assert isinstance(value_type, TensorType)
    return tuple(value_type.get_shape())


def _rank(value_type: Attribute) -> int:
    return len(_dims(value_type))


CONTROL_FLOW_OPS = (IfOp, LoopOp, ScanOp)

__all__ = [
    "BOOL_SCALAR",
    "CONTROL_FLOW_OPS",
    "INDEX_SCALAR",
    "IfOp",
    "LoopOp",
    "ScanOp",
    "join_types",
    "sliced_type",
    "MAX_BODY_TYPE_ROUNDS",
    "RankMismatch",
    "initial_arguments",
    "static_trip_count",
    "widened_arguments",
    "stacked_type",
]


MAX_BODY_TYPE_ROUNDS = 4
"""How often a Loop or Scan body's carried arguments are widened (a carried
value whose dims change between iterations gets unknown dims) before the
importer or `graph-infer-shapes` gives up on their types settling."""


def carried_slots(op: LoopOp | ScanOp) -> tuple[int, int, int]:
    """Where the carried values are: the index of the first carried body
    argument, of the first yielded carried value, and their count."""
    if isinstance(op, LoopOp):
        return 2, 1, len(op.carried)
    return 0, 0, op.num_states


def widened_arguments(op: LoopOp | ScanOp, arg_types: Sequence[Attribute]) -> list[Attribute]:
    """`arg_types` (the body's argument types) with each carried argument
    widened to also cover the type the body yields for it."""
    first_arg, first_yield, count = carried_slots(op)
    yielded = yielded_types(op.body)
    if len(yielded) < first_yield + count:
        raise VerifyException(
            f"{op.name}: the body yields {len(yielded)} values, fewer than the "
            f"{first_yield + count} it must (the condition and carried values)"
        )
    widened = list(arg_types)
    for i in range(count):
        widened[first_arg + i] = join_types(
            op.name, f"carried value #{i}", [arg_types[first_arg + i], yielded[first_yield + i]]
        )
    return widened


def initial_arguments(op: LoopOp | ScanOp) -> list[Attribute]:
    """The body's argument types for the first iteration."""
    if isinstance(op, LoopOp):
        return [INDEX_SCALAR, BOOL_SCALAR, *(v.type for v in op.carried)]
    return list(op.body_argument_types())


ValueOf = Callable[[SSAValue], np.ndarray | None]
"""The compile-time value of an SSA value, or None."""


def static_trip_count(op: LoopOp, value_of: ValueOf) -> int | None:
    """The number of iterations of `op` when it is known at compile time: its
    trip count is a known constant, the condition is absent or a constant
    true, and the body passes the condition on unchanged (yields its
    condition argument, through Identity ops or not, or a constant true)."""
    if op.max_trip_count is None:
        return None
    trips = value_of(op.max_trip_count)
    if trips is None:
        return None
    if op.condition is not None:
        initial = value_of(op.condition)
        if initial is None:
            return None
        if not bool(initial.reshape(-1)[0]):
            return 0
    yielded = op.body.block.last_op.operands[0]  # type: ignore[union-attr]
    while isinstance(yielded.owner, IdentityOp):  # exporters pass the condition on so
        yielded = yielded.owner.operands[0]
    if yielded is not op.body.block.args[1]:
        value = value_of(yielded)
        if value is None or not bool(value.reshape(-1)[0]):
            return None
    return max(int(trips.reshape(-1)[0]), 0)
