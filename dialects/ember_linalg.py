"""The `ember_linalg` dialect: what Ember's tensor level needs and neither
xDSL's `linalg` nor its `tensor` dialect has.

Ember's tensor level is made of upstream ops: compute is `linalg`
(`linalg.generic` with `linalg.yield`, and the named `linalg.matmul`,
`linalg.conv_2d_nchw_fchw` and `linalg.fill` where their semantics are
exactly Ember's), data movement is `tensor` (`tensor.empty`, `tensor.pad`,
`tensor.extract_slice`, `tensor.insert_slice`, `tensor.concat`,
`tensor.reshape`). Constants stay `graph.constant`. This dialect holds the
rest, today one op:

- `ember_linalg.gather`: an embedding lookup whose indices are read at run
  time, with Ember's out-of-range rule (wrap negatives, clamp the rest). On
  tensors it has a result; on buffers (after `convert-tensor-to-loop`) it
  writes into its `outs` memref instead, as `linalg` ops do.

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

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from xdsl.dialects.builtin import IntegerAttr, IntegerType, MemRefType, ShapedType, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_result_def,
    prop_def,
    traits_def,
)
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind
from xdsl.utils.exceptions import VerifyException


def _shape(value: SSAValue) -> tuple[int, ...]:
    value_type = value.type
    assert isinstance(value_type, ShapedType)
    return tuple(value_type.get_shape())


class _GatherEffects(MemoryEffect):
    """None on tensors (the op is pure there); on buffers it reads `data` and
    `indices` and writes `outs`."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        if isinstance(op, GatherOp) and op.out is not None:
            return frozenset((EffectInstance(MemoryEffectKind.READ),
                              EffectInstance(MemoryEffectKind.WRITE)))  # fmt: skip
        return frozenset()


@irdl_op_definition
class GatherOp(IRDLOperation):
    """result[p, i, q] = data[p, indices[i], q] along `axis`, with indices read at
    run time (an embedding lookup). A negative index counts from the end; an
    index still out of range is clamped to the axis, so generated code never
    reads outside `data`. (MLIR would spell this as a `linalg.generic` whose
    body does `tensor.extract`; one op keeps the clamping rule in one place.)

    On tensors: `%r = ember_linalg.gather %data[%indices] {axis = 0 : i64} :
    tensor<..>, tensor<..> -> tensor<..>`. On buffers the result is a
    destination: `ember_linalg.gather %data[%indices] outs(%r : memref<..>)
    {axis = 0 : i64} : memref<..>, memref<..>`."""

    name = "ember_linalg.gather"
    data = operand_def(TensorType | MemRefType)
    indices = operand_def(TensorType | MemRefType)
    out = opt_operand_def(MemRefType)
    result = opt_result_def(TensorType)
    axis = prop_def(IntegerAttr)
    traits = traits_def(_GatherEffects())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$data `[` $indices `]` (`outs` `(` $out^ `:` type($out) `)`)? attr-dict `:` "
        "type($data) `,` type($indices) (`->` type($result)^)?"
    )

    @classmethod
    def build(
        cls: type[GatherOp],
        *,
        operands: Sequence[SSAValue | Sequence[SSAValue] | None] = (),
        result_types: Sequence[Attribute | Sequence[Attribute] | None] = (),
        properties: Mapping[str, Attribute | None] = {},
        attributes: Mapping[str, Attribute | None] = {},
        successors: Sequence[object] = (),
        regions: Sequence[Region | None] = (),
    ) -> GatherOp:
        """As `IRDLOperation.build`; (data, indices) without a destination
        builds the tensor form."""
        if len(operands) == 2:
            operands = [*operands, None]
        return super().build(operands=operands, result_types=result_types,  # type: ignore[misc]
                             properties=properties, attributes=attributes, regions=regions)  # fmt: skip

    @staticmethod
    def on_buffers(data: SSAValue, indices: SSAValue, out: SSAValue, axis: IntegerAttr) -> GatherOp:
        """The buffer form: reads `data` and `indices`, writes `out`."""
        return GatherOp.build(operands=[data, indices, out], result_types=[None],
                              properties={"axis": axis})  # fmt: skip

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
        data, indices, out = _shape(self.data), _shape(self.indices), _shape(self.destination)
        axis = self.axis.value.data
        if not 0 <= axis < len(data):
            raise VerifyException(
                f"ember_linalg.gather: axis {axis} is out of range for rank {len(data)}"
            )
        if not isinstance(self.indices.type.element_type, IntegerType):  # type: ignore[attr-defined]
            raise VerifyException("ember_linalg.gather: indices must be integers")
        expected = (*data[:axis], *indices, *data[axis + 1 :])
        if out != expected:
            raise VerifyException(f"ember_linalg.gather: result shape {out} should be {expected}")
        if self.destination.type.element_type != self.data.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException("ember_linalg.gather: result and data element types differ")


EmberLinalg = Dialect("ember_linalg", [GatherOp], [])


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


__all__ = ["EmberLinalg", "GatherOp", "generalize", "indexing_maps", "iterator_kinds"]
