"""Graph-to-tensor lowering of the ops that address data by index values read
at run time, other than Gather (`data_movement.py`): GatherElements and
GatherND become `ember_linalg.gather`, ScatterElements and ScatterND
`ember_linalg.scatter` (and MaxUnpool a scatter by its flat indices),
each with the affine maps of its ONNX addressing
(`ember_linalg.per_element`, `by_tuples`). A scatter's `reduction` is the
body of its combine region; index values out of range are the ops' rule
(a gather clamps, a scatter skips the point), never a read or write outside
the data."""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Region, SSAValue

from ember.dialects import ember_linalg
from ember.dialects.graph import (
    GatherElementsOp,
    GatherNDOp,
    GraphOp,
    MaxUnpoolOp,
    ScatterElementsOp,
    ScatterNDOp,
)
from ember.dialects.graph.ops_nn import unpooled_shape
from ember.lowering.graph_to_tensor.common import (
    Body,
    Emitter,
    FamilyPattern,
    _elem,
    _normalize_axis,
    _shape,
)


def _lower_gather_elements(e: Emitter, op: GraphOp) -> list[SSAValue]:
    data, indices = op.operand_group("data")[0], op.operand_group("indices")[0]
    rank = len(_shape(data))
    maps = ember_linalg.per_element(rank, _normalize_axis(op.attr("axis"), rank))
    return [e.value(ember_linalg.GatherOp.on_tensors(data, indices, op.result_types[0], maps))]


def _lower_gather_nd(e: Emitter, op: GraphOp) -> list[SSAValue]:
    data, indices = op.operand_group("data")[0], op.operand_group("indices")[0]
    depth = _shape(indices)[-1]
    assert isinstance(depth, int), "shape inference makes the tuple depth a constant"
    maps = ember_linalg.by_tuples(len(_shape(op.results[0])), depth, op.attr("batch_dims"),
                                  len(_shape(data)))  # fmt: skip
    return [e.value(ember_linalg.GatherOp.on_tensors(data, indices, op.result_types[0], maps))]


_COMBINE: dict[str, Callable[[Body, SSAValue, SSAValue], SSAValue]] = {
    "none": lambda b, update, current: update,
    "add": Body.add,
    "mul": Body.mul,
    "max": Body.max,  # NaN-propagating, as np.maximum (ONNX's reference)
    "min": Body.min,
}
"""Scatter reductions (`SCATTER_REDUCTIONS`) as combine bodies."""


def _combine(op: GraphOp) -> Region:
    return _combine_region(op.attr("reduction"), _elem(op.results[0]), op)


def _combine_region(reduction: str, t: Attribute, op: GraphOp) -> Region:
    """A scatter's combine region for `reduction` on elements of type `t`."""
    block = Block(arg_types=[t, t])
    update, current = block.args
    combined = _COMBINE[reduction](Body(block, op), update, current)
    block.add_op(linalg.YieldOp(combined))
    return Region(block)


def _scatter(e: Emitter, op: GraphOp, maps: ember_linalg.Maps) -> list[SSAValue]:
    data, indices = op.operand_group("data")[0], op.operand_group("indices")[0]
    updates = op.operand_group("updates")[0]
    return [e.value(ember_linalg.ScatterOp.build_scatter(updates, indices, data, maps,
                                                         _combine(op)))]  # fmt: skip


def _lower_scatter_elements(e: Emitter, op: GraphOp) -> list[SSAValue]:
    rank = len(_shape(op.results[0]))
    return _scatter(e, op, ember_linalg.per_element(rank, _normalize_axis(op.attr("axis"), rank)))


def _lower_scatter_nd(e: Emitter, op: GraphOp) -> list[SSAValue]:
    indices, updates = op.operand_group("indices")[0], op.operand_group("updates")[0]
    depth = _shape(indices)[-1]
    assert isinstance(depth, int), "shape inference makes the tuple depth a constant"
    maps = ember_linalg.by_tuples(len(_shape(updates)), depth, 0, len(_shape(op.results[0])))
    return _scatter(e, op, maps)


def _lower_max_unpool(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A scatter of X, flattened, into zeros of the default output's size
    (`unpooled_shape`), at the flat indices I; reshaped, then zero-padded at
    the end of each axis up to output_shape."""
    x, indices = op.operand_group("X")[0], op.operand_group("I")[0]
    shape, t = _shape(op.results[0]), _elem(x)
    default = unpooled_shape(_shape(x), op.attr("kernel_shape"), op.attr("strides"),
                             op.attr("pads"))  # fmt: skip
    count = math.prod(_shape(x))
    flat = [e.reshape(v, [count]) for v in (x, indices)]
    zeros = e.fill(0, [math.prod(default)], t)
    maps = ember_linalg.per_element(1, 0)
    scattered = e.value(ember_linalg.ScatterOp.build_scatter(*flat, zeros, maps,
                                                             _combine_region("none", t, op)))  # fmt: skip
    unpooled = e.reshape(scattered, default)
    return [e.pad(unpooled, [0] * len(shape), [s - d for s, d in zip(shape, default)], 0)]


class IndexedPattern(FamilyPattern):
    """GatherElements, GatherND, ScatterElements, ScatterND, MaxUnpool."""

    lowerings = {
        GatherElementsOp: _lower_gather_elements,
        GatherNDOp: _lower_gather_nd,
        ScatterElementsOp: _lower_scatter_elements,
        ScatterNDOp: _lower_scatter_nd,
        MaxUnpoolOp: _lower_max_unpool,
    }
    symbolic = frozenset(lowerings) - {MaxUnpoolOp}
    unread = {MaxUnpoolOp: lambda op: frozenset({"output_shape"})}
