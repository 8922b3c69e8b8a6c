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
  time, with Ember's out-of-range rule (wrap negatives, clamp the rest).

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

from xdsl.dialects.builtin import IntegerAttr, IntegerType, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Dialect, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


def _shape(value: SSAValue) -> tuple[int, ...]:
    value_type = value.type
    assert isinstance(value_type, TensorType)
    return tuple(value_type.get_shape())


@irdl_op_definition
class GatherOp(IRDLOperation):
    """result[p, i, q] = data[p, indices[i], q] along `axis`, with indices read at
    run time (an embedding lookup). A negative index counts from the end; an
    index still out of range is clamped to the axis, so generated code never
    reads outside `data`. (MLIR would spell this as a `linalg.generic` whose
    body does `tensor.extract`; one op keeps the clamping rule in one place.)"""

    name = "ember_linalg.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$data `[` $indices `]` attr-dict `:` type($data) `,` type($indices) `->` type($result)"
    )

    def verify_(self) -> None:
        data, indices, out = _shape(self.data), _shape(self.indices), _shape(self.result)
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
        if self.result.type.element_type != self.data.type.element_type:  # type: ignore[attr-defined]
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
