"""`graph.fused`: a group of `graph` ops that becomes one kernel.

    %y = graph.fused "conv" (%x, %w, %b) : (...) -> tensor<1x8x6x6xf32> {
    ^bb0(%x0: ..., %w0: ..., %b0: ...):
      %c = graph.conv %x0, %w0, %b0 ...
      %r = graph.relu %c ...
      graph.yield %r : tensor<1x8x6x6xf32>
    }

The region is isolated from above: every value it reads comes in as an
operand (block arguments in operand order), and what it yields are the
op's results. `kind` names the fusion pattern that formed the group
(`conv`, `matmul`, `elementwise`, `reduction`), for reports and tests.
`graph-fuse` builds these ops; `convert-graph-to-tensor` lowers the body in
place and tags every op it produced with the group's number, so the loop
level can fuse the group's loop nests and outline them as one kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException

from ember.dialects.graph.control_flow import IfOp, LoopOp, ScanOp


@irdl_op_definition
class FusedOp(IRDLOperation):
    """A group of graph ops, run as one kernel (see the module docstring)."""

    name = "graph.fused"

    inputs = var_operand_def()
    outputs = var_result_def()
    kind = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())

    assembly_format = (
        "$kind ` ` `(` $inputs `)` `:` functional-type($inputs, $outputs) $body attr-dict"
    )

    def __init__(
        self,
        kind: str,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[inputs],
            result_types=[result_types],
            properties={"kind": StringAttr(kind)},
            regions=[body],
        )

    @property
    def block(self) -> Block:
        return self.body.block

    def verify_(self) -> None:
        verify_isolated_body(self, YieldOp)


def verify_isolated_body(op: Operation, terminator_class: type[Operation]) -> None:
    """A region op isolated from above (`graph.fused`, `npu.segment`): its
    block's arguments have its operands' types, in order, and the block ends
    in `terminator_class`, whose operands have the op's result types."""
    block = op.regions[0].block
    if [a.type for a in block.args] != [v.type for v in op.operands]:
        raise VerifyException(
            f"{op.name}: the block arguments must have the operands' types, in order"
        )
    terminator = block.last_op
    if not isinstance(terminator, terminator_class):
        raise VerifyException(f"{op.name}: the body must end in {terminator_class.name}")
    if [v.type for v in terminator.operands] != [r.type for r in op.results]:
        raise VerifyException(f"{op.name}: {terminator_class.name} must yield the results' types")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The values a region of `graph.fused`, `graph.if`, `graph.loop` or
    `graph.scan` passes on."""

    name = "graph.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), HasParent(FusedOp, IfOp, LoopOp, ScanOp), Pure())

    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


__all__ = ["FusedOp", "YieldOp", "verify_isolated_body"]
