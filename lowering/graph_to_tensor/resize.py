"""Graph-to-tensor lowering of Resize: one step per resized axis, in axis
order, each applying that axis's sampling tables (`ops_resize.axis_samples`)
as constants.

- Nearest (every output position takes one input): an `ember_linalg.gather`
  along the axis by a constant index vector.
- Linear and cubic (and nearest with exclude_outside): a gather by the
  constant `[out, taps]` index table, giving `[..., out, taps, ...]`, then one
  reduction generic over the taps weighting each by the constant
  `[out, taps]` weights.
- Crop-and-resize positions outside the input: a select generic putting the
  extrapolation value there.

The tables are small (output length × taps) and the other dims may be
symbolic. The roi and scales must be constants, and so must sizes unless
the result type gives them (`keep_aspect_ratio_policy` stretch)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from ember.dialects import ember_linalg
from ember.dialects.graph import GraphOp, ResizeOp, constant_value_of
from ember.dialects.graph.dims import symbolic_type
from ember.dialects.graph.ops_resize import (
    AxisSamples,
    ResizeTargets,
    Sampling,
    resize_plan,
    resize_targets,
)
from ember.dialects.graph.types import is_float
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Emitter,
    FamilyPattern,
    NeedsConstants,
    _dim,
    _dims_map,
    _elem,
    _identity,
    _map,
    _shape,
)


def _sampling(op: GraphOp) -> Sampling:
    return Sampling.of({a.name: op.attr(a.name) for a in op.SPEC.attributes})


def _operand_value(op: GraphOp, name: str) -> np.ndarray | None:
    group = op.operand_group(name)
    return constant_value_of(group[0]) if group else None


def _targets(op: GraphOp) -> ResizeTargets:
    x = op.operand_group("X")[0]
    shape = _shape(x)
    crop = op.attr("coordinate_transformation_mode") == "tf_crop_and_resize"
    sizes = _operand_value(op, "sizes")
    if sizes is None and op.operand_group("sizes"):  # computed: the result type has them
        axes = op.attr("axes") or range(len(shape))
        sizes = np.array([_shape(op.results[0])[a] for a in axes], dtype=object)
    return resize_targets(shape, op.attr("axes"), _operand_value(op, "roi") if crop else None,
                          _operand_value(op, "scales"), sizes,
                          op.attr("keep_aspect_ratio_policy"))  # fmt: skip


def _plan(op: GraphOp) -> list[AxisSamples]:
    return resize_plan(_shape(op.operand_group("X")[0]), _targets(op), _sampling(op))


def _check_resize(op: GraphOp) -> str | None:
    crop = op.attr("coordinate_transformation_mode") == "tf_crop_and_resize"
    for name in ("scales", *(("roi",) if crop else ())):
        if op.operand_group(name) and _operand_value(op, name) is None:
            return NeedsConstants(f"{name} must be a constant")
    stretch = op.attr("keep_aspect_ratio_policy") == "stretch"
    if op.operand_group("sizes") and _operand_value(op, "sizes") is None and not stretch:
        return NeedsConstants("sizes must be a constant with a keep_aspect_ratio_policy")
    if not is_float(_elem(op.results[0])) and any(s.picks() is None for s in _plan(op)):
        return "weighted resampling of integer data"
    return None


def _resample(e: Emitter, x: SSAValue, samples: AxisSamples, extrapolation: float) -> SSAValue:
    shape, t, axis = _shape(x), _elem(x), samples.axis
    rank = len(shape)
    out, taps = samples.indices.shape
    out_shape = [out if i == axis else d for i, d in enumerate(shape)]
    picks = samples.picks()
    if picks is not None:
        y = e.value(ember_linalg.GatherOp.on_tensors(
            x, e.constant(picks.astype(np.int64)), symbolic_type(t, out_shape),
            ember_linalg.along_axis(rank, axis, 1)))  # fmt: skip
    else:
        taken_shape = [*shape[:axis], out, taps, *shape[axis + 1 :]]
        taken = e.value(ember_linalg.GatherOp.on_tensors(
            x, e.constant(samples.indices.astype(np.int64)), symbolic_type(t, taken_shape),
            ember_linalg.along_axis(rank, axis, 2)))  # fmt: skip
        weights = e.constant(samples.weights.astype(np.float32))
        tap = _dim(rank)  # the reduction dim, last in the iteration space
        taken_map = _map(rank + 1, [*map(_dim, range(axis + 1)), tap,
                                    *map(_dim, range(axis + 1, rank))])  # fmt: skip
        y = e.generic(
            [taken, weights], [e.fill(0.0, out_shape, t)],
            [taken_map, _map(rank + 1, [_dim(axis), tap]), _dims_map(rank + 1, range(rank))],
            [PARALLEL] * rank + [REDUCTION],
            lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))],
        )[0]  # fmt: skip
    if samples.outside is None:
        return y
    outside = e.constant(samples.outside)
    return e.parallel(
        [y, outside], out_shape, t,
        lambda b, a: b.select(a[1], b.const(extrapolation, t), a[0]),
        maps=[_identity(rank), _dims_map(rank, [axis])],
    )  # fmt: skip


def _lower_resize(e: Emitter, op: GraphOp) -> list[SSAValue]:
    value = op.operand_group("X")[0]
    for samples in _plan(op):
        value = _resample(e, value, samples, op.attr("extrapolation_value"))
    return [value]


def _unread(op: GraphOp) -> frozenset[str]:
    return frozenset({"roi", "scales", "sizes"})


class ResizePattern(FamilyPattern):
    """Resize."""

    lowerings = {ResizeOp: _lower_resize}
    checks = {ResizeOp: _check_resize}
    symbolic = frozenset(lowerings)
    unread = {ResizeOp: _unread}
