"""The `ember_linalg` dialect: what Ember's tensor level needs and neither
xDSL's `linalg` nor its `tensor` dialect has.

Ember's tensor level is made of upstream ops: compute is `linalg`
(`linalg.generic` with `linalg.yield`, and the named `linalg.matmul`,
`linalg.conv_2d_nchw_fchw` and `linalg.fill` where their semantics are
exactly Ember's), data movement is `tensor` (`tensor.empty`, `tensor.pad`,
`tensor.extract_slice`, `tensor.insert_slice`, `tensor.concat`,
`tensor.reshape`). Constants stay `graph.constant`. This dialect holds the
rest, two ops that address a tensor by index values read at run time:

- `ember_linalg.gather`: reads (ONNX Gather, GatherElements, GatherND; an
  embedding lookup), with Ember's out-of-range rule (wrap negatives, clamp
  the rest). On tensors it has a result; on buffers (after
  `convert-tensor-to-loop`) it writes into its `outs` memref instead, as
  `linalg` ops do.
- `ember_linalg.scatter`: writes (ONNX ScatterElements, ScatterND), each
  update combined with the element it lands on by the op's region; on
  buffers it updates its target in place.

Both say where they read or write with affine maps: `index_maps` from a
point of the op's space to the position of its index values in `indices`,
and `data_map`, whose symbols are those values, from the point to the
element addressed (`along_axis`, `per_element` and `by_tuples` build the
maps of the ONNX ops).

The name follows IREE's `iree_linalg_ext`: a project prefix, so it shadows no
upstream dialect now or later (xDSL's `linalg` and `tensor` must keep
parsing in `ember-opt`, and a bare `linalg_ext` may one day be someone
else's).

`generalize`, `indexing_maps` and `iterator_kinds` read upstream structured
ops the same way for bufferization and the tensor-level reference
interpreter. (A fused group is not marked on its ops: it is a `loop.kernel`
region, see `dialects/loop.py`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    IntegerType,
    MemRefType,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_result_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind
from xdsl.utils.exceptions import VerifyException


def _shape(value: SSAValue) -> tuple[int, ...]:
    value_type = value.type
    assert isinstance(value_type, ShapedType)
    return tuple(value_type.get_shape())


def _element(value: SSAValue) -> Attribute:
    value_type = value.type
    assert isinstance(value_type, ShapedType)
    return value_type.get_element_type()


# ------------------------------------------------- addressing by index values

Maps = tuple[Sequence[AffineMap], AffineMap]
"""A gather's or scatter's (index_maps, data_map)."""


def addressed_axes(data_map: AffineMap) -> dict[int, int]:
    """{symbol: the axis of the addressed tensor it gives}: each symbol of a
    gather's or scatter's `data_map` is one whole result (checked by the
    verifiers), the index loaded through that symbol's index map."""
    return {expr.position: axis for axis, expr in enumerate(data_map.results)
            if isinstance(expr, AffineSymExpr)}  # fmt: skip


def _mentions_symbol(expr: AffineExpr) -> bool:
    if isinstance(expr, AffineSymExpr):
        return True
    if isinstance(expr, AffineBinaryOpExpr):
        return _mentions_symbol(expr.lhs) or _mentions_symbol(expr.rhs)
    return False


def _within(expr: AffineExpr, space: Sequence[int], extent: int) -> bool:
    """Whether a dim or constant result stays inside `extent` over `space`
    (other expressions, and dynamic sizes, are not checked)."""
    if isinstance(expr, AffineDimExpr):
        size = space[expr.position]
        return size == DYNAMIC_INDEX or extent == DYNAMIC_INDEX or size <= extent
    if isinstance(expr, AffineConstantExpr):
        return extent == DYNAMIC_INDEX or 0 <= expr.value < extent
    return True


class _Addressed(IRDLOperation):
    """What `ember_linalg.gather` and `ember_linalg.scatter` share: a space of
    points (the gather's result, the scatter's updates), `index_maps` that
    say where in `indices` each point's index values are (one map per value),
    and `data_map`, whose symbols are those values, that says which element
    of the addressed tensor the point reads or writes. A symbol is one whole
    result of `data_map`: it gives one axis, and is made non-negative
    (negative counts from the end, as ONNX's) before it is used."""

    index_maps = prop_def(ArrayAttr[AffineMapAttr])
    data_map = prop_def(AffineMapAttr)

    def maps(self) -> tuple[list[AffineMap], AffineMap]:
        return [m.data for m in self.index_maps.data], self.data_map.data

    def verify_addressing(self, space: SSAValue, indices: SSAValue, addressed: SSAValue) -> None:
        name = self.name
        space_shape, index_shape, shape = _shape(space), _shape(indices), _shape(addressed)
        index_maps, data_map = self.maps()
        if not isinstance(_element(indices), IntegerType):
            raise VerifyException(f"{name}: indices must be integers")
        if not index_maps:
            raise VerifyException(f"{name}: index_maps must hold at least one map")
        for amap in index_maps:
            if (
                amap.num_dims != len(space_shape)
                or amap.num_symbols
                or (len(amap.results) != len(index_shape))
            ):
                raise VerifyException(
                    f"{name}: index map {amap} must take the {len(space_shape)} dims of "
                    f"{space_shape} and give the {len(index_shape)} of the indices"
                )
            if not all(_within(e, space_shape, x) for e, x in zip(amap.results, index_shape)):
                raise VerifyException(f"{name}: index map {amap} reads outside {index_shape}")
        if (data_map.num_dims, data_map.num_symbols, len(data_map.results)) != (
            len(space_shape),
            len(index_maps),
            len(shape),
        ):
            raise VerifyException(
                f"{name}: data_map {data_map} must take {len(space_shape)} dims and "
                f"{len(index_maps)} symbols and give the {len(shape)} axes of {shape}"
            )
        axes = addressed_axes(data_map)
        lone = [e for e in data_map.results if not isinstance(e, AffineSymExpr)]
        if (
            sorted(axes) != list(range(len(index_maps)))
            or any(map(_mentions_symbol, lone))
            or (len(axes) != len(data_map.results) - len(lone))
        ):
            raise VerifyException(
                f"{name}: each symbol of data_map {data_map} must be one whole result, once"
            )
        if not all(_within(e, space_shape, x) for e, x in zip(data_map.results, shape)):
            raise VerifyException(f"{name}: data_map {data_map} reaches outside {shape}")


class _AddressedEffects(MemoryEffect):
    """None on tensors (the ops are pure there); on buffers they read and write."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        if isinstance(op, GatherOp | ScatterOp) and op.result is None:
            return frozenset((EffectInstance(MemoryEffectKind.READ),
                              EffectInstance(MemoryEffectKind.WRITE)))  # fmt: skip
        return frozenset()


def along_axis(rank: int, axis: int, index_rank: int) -> Maps:
    """The maps of a gather along `axis` (ONNX Gather, np.take): the result's
    dims axis..axis+index_rank-1 index `indices`, whose value is the axis."""
    result_rank = rank - 1 + index_rank
    dims = [AffineExpr.dimension(d) for d in range(result_rank)]
    index_map = AffineMap(result_rank, 0, tuple(dims[axis : axis + index_rank]))
    data = (*dims[:axis], AffineExpr.symbol(0), *dims[axis + index_rank :])
    return [index_map], AffineMap(result_rank, 1, data)


def per_element(rank: int, axis: int) -> Maps:
    """The maps of ONNX GatherElements/ScatterElements: every point has an
    index, at the same position in `indices`, which replaces its `axis`."""
    dims = [AffineExpr.dimension(d) for d in range(rank)]
    data = tuple(AffineExpr.symbol(0) if d == axis else e for d, e in enumerate(dims))
    return [AffineMap(rank, 0, tuple(dims))], AffineMap(rank, 1, data)


def by_tuples(space_rank: int, depth: int, batch: int, data_rank: int) -> Maps:
    """The maps of ONNX GatherND/ScatterND: `indices` holds tuples of `depth`
    values along its last axis, one per point of its other axes; a tuple
    addresses the axes batch..batch+depth-1 of the data, the space's first
    `batch` dims its batch axes, and the dims after the tuple's point the
    data's remaining axes."""
    dims = [AffineExpr.dimension(d) for d in range(space_rank)]
    points = space_rank - (data_rank - batch - depth)  # dims that pick a tuple
    index_maps = [AffineMap(space_rank, 0, (*dims[:points], AffineExpr.constant(j)))
                  for j in range(depth)]  # fmt: skip
    data = (*dims[:batch], *(AffineExpr.symbol(j) for j in range(depth)), *dims[points:])
    return index_maps, AffineMap(space_rank, depth, data)


def _addressing_properties(maps: Maps) -> dict[str, Attribute]:
    index_maps, data_map = maps
    return {"index_maps": ArrayAttr([AffineMapAttr(m) for m in index_maps]),
            "data_map": AffineMapAttr(data_map)}  # fmt: skip


@irdl_op_definition
class GatherOp(_Addressed):
    """result[p] = data[data_map(p)[indices[index_maps(p)]]]: reads with
    indices read at run time (ONNX Gather, GatherElements, GatherND; an
    embedding lookup). A negative index counts from the end; an index still
    out of range is clamped to its axis, so generated code never reads
    outside `data`. (MLIR would spell this as a `linalg.generic` whose body
    does `tensor.extract`; one op keeps the clamping rule in one place.)

    On tensors: `%r = ember_linalg.gather %data[%indices] {data_map = ...,
    index_maps = [...]} : tensor<..>, tensor<..> -> tensor<..>`. On buffers
    the result is a destination: `ember_linalg.gather %data[%indices]
    outs(%r : memref<..>) {...} : memref<..>, memref<..>`."""

    name = "ember_linalg.gather"
    data = operand_def(TensorType | MemRefType)
    indices = operand_def(TensorType | MemRefType)
    out = opt_operand_def(MemRefType)
    result = opt_result_def(TensorType)
    traits = traits_def(_AddressedEffects())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$data `[` $indices `]` (`outs` `(` $out^ `:` type($out) `)`)? attr-dict `:` "
        "type($data) `,` type($indices) (`->` type($result)^)?"
    )

    @staticmethod
    def on_tensors(
        data: SSAValue, indices: SSAValue, result_type: Attribute,
        maps: Maps,
    ) -> GatherOp:  # fmt: skip
        return GatherOp.build(operands=[data, indices, None], result_types=[result_type],
                              properties=_addressing_properties(maps))  # fmt: skip

    @staticmethod
    def on_buffers(
        data: SSAValue,
        indices: SSAValue,
        out: SSAValue,
        maps: Maps,
    ) -> GatherOp:
        """The buffer form: reads `data` and `indices`, writes `out`."""
        return GatherOp.build(operands=[data, indices, out], result_types=[None],
                              properties=_addressing_properties(maps))  # fmt: skip

    @property
    def destination(self) -> SSAValue:
        """What the gather produces: its result on tensors, its `outs` buffer on buffers."""
        produced = self.result if self.out is None else self.out
        assert produced is not None
        return produced

    def verify_(self) -> None:
        on_buffers = isinstance(self.data.type, MemRefType)
        kinds = {type(v.type) for v in (self.data, self.indices)}
        if (
            len(kinds) != 1
            or (self.out is not None) != on_buffers
            or (self.result is None) != on_buffers
        ):
            raise VerifyException(
                "ember_linalg.gather: data and indices must both be tensors (with a result) or "
                "both memrefs (with an outs buffer and no result)"
            )
        self.verify_addressing(self.destination, self.indices, self.data)
        if _element(self.destination) != _element(self.data):
            raise VerifyException("ember_linalg.gather: result and data element types differ")


@irdl_op_definition
class ScatterOp(_Addressed):
    """For each point p of `updates`, in order: target[t] = combine(updates[p],
    target[t]) at t = data_map(p)[indices[index_maps(p)]] (ONNX
    ScatterElements, ScatterND). `combine` is the region: its block takes
    (update, current) and yields the new element (`linalg.yield %update`
    replaces). A negative index counts from the end; a point whose index is
    still out of range writes nothing, so generated code never writes
    outside the target. Points are applied one after the other, so repeated
    targets accumulate (ONNX leaves repeats undefined without a reduction).

    On tensors the result is the updated copy of `target`: `%r =
    ember_linalg.scatter %updates[%indices] into %target {...} :
    tensor<..>, tensor<..>, tensor<..> -> tensor<..> ({...})`. On buffers the
    target memref is updated in place and there is no result."""

    name = "ember_linalg.scatter"
    updates = operand_def(TensorType | MemRefType)
    indices = operand_def(TensorType | MemRefType)
    target = operand_def(TensorType | MemRefType)
    result = opt_result_def(TensorType)
    combine = region_def("single_block")
    traits = traits_def(_AddressedEffects())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$updates `[` $indices `]` `into` $target attr-dict `:` type($updates) `,` "
        "type($indices) `,` type($target) (`->` type($result)^)? $combine"
    )

    @staticmethod
    def build_scatter(
        updates: SSAValue, indices: SSAValue, target: SSAValue,
        maps: Maps, combine: Region,
    ) -> ScatterOp:  # fmt: skip
        """The tensor form (its result typed as `target`) for a tensor target,
        the in-place buffer form for a memref."""
        result = target.type if isinstance(target.type, TensorType) else None
        return ScatterOp.build(operands=[updates, indices, target], result_types=[result],
                               properties=_addressing_properties(maps), regions=[combine])  # fmt: skip

    def verify_(self) -> None:
        on_buffers = isinstance(self.target.type, MemRefType)
        kinds = {type(v.type) for v in (self.updates, self.indices, self.target)}
        if len(kinds) != 1 or (self.result is None) != on_buffers:
            raise VerifyException(
                "ember_linalg.scatter: updates, indices and target must all be tensors (with "
                "a result) or all memrefs (updated in place, no result)"
            )
        if self.result is not None and self.result.type != self.target.type:
            raise VerifyException("ember_linalg.scatter: the result must have the target's type")
        self.verify_addressing(self.updates, self.indices, self.target)
        element = _element(self.target)
        if _element(self.updates) != element:
            raise VerifyException("ember_linalg.scatter: updates and target element types differ")
        block = self.combine.block
        if [a.type for a in block.args] != [element, element]:
            raise VerifyException(
                f"ember_linalg.scatter: the combine block must take (update, current) of {element}"
            )
        last = block.last_op
        if not isinstance(last, linalg.YieldOp) or [v.type for v in last.arguments] != [element]:
            raise VerifyException(
                f"ember_linalg.scatter: the combine block must end in linalg.yield of one {element}"
            )


EmberLinalg = Dialect("ember_linalg", [GatherOp, ScatterOp], [])


# ------------------------------------------- reading upstream structured ops


def iterator_kinds(op: LinalgStructuredOperation) -> list[IteratorType]:
    return [kind.data for kind in op.get_iterator_types()]


def indexing_maps(op: LinalgStructuredOperation) -> list[AffineMap]:
    return [amap.data for amap in op.get_indexing_maps()]


def generalize(op: NamedOperation) -> linalg.GenericOp:
    """The `linalg.generic` a named op stands for, as xDSL's
    `linalg-generalize-named-ops` builds it, but as a new detached op: its
    readers (bufferization, the reference interpreter) leave the IR alone.
    Erase it after use, to drop the uses of its operands."""
    return linalg.GenericOp(
        op.inputs, op.outputs, op.body.clone(), op.get_indexing_maps(),
        op.get_iterator_types(), op.result_types,
    )  # fmt: skip


__all__ = [
    "EmberLinalg",
    "GatherOp",
    "Maps",
    "ScatterOp",
    "addressed_axes",
    "along_axis",
    "by_tuples",
    "generalize",
    "indexing_maps",
    "iterator_kinds",
    "per_element",
]
