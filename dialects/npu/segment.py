"""`npu.segment`: the part of a model that runs on the NPU, and
`npu.launch`: one such part compiled, a call of its program.

    %y = npu.segment "npu0" (%x) : (tensor<1x784xf32>) -> tensor<1x10xf32> {
    ^bb0(%x0: tensor<1x784xf32>):
      %w = graph.constant ...
      %h = graph.gemm %x0, %w, %b ...
      %r = graph.relu %h ...
      npu.yield %r : tensor<1x10xf32>
    }

`graph-partition-npu` forms segments: each is a run of graph ops the NPU
lowering takes (their weights cloned in), isolated from above like
`graph.fused` (operands are the block's arguments, in order; what it
yields its results); everything outside stays on the host (the CPU path).
`convert-graph-to-npu` lowers each segment's body to an `npu.program` of
the same name next to the function and the segment to

    %y = npu.launch @npu0 (%x) {inputs = [4096], outputs = [8192]} : ...

where `inputs` and `outputs` are the DRAM byte addresses the program reads
its operands from and writes its results to (row-major, dense).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, ArrayAttr, IntegerAttr, StringAttr, SymbolRefAttr, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from ember.dialects.graph.fused import verify_isolated_body


@irdl_op_definition
class SegmentOp(IRDLOperation):
    """Graph ops that run on the NPU (see the module docstring)."""

    name = "npu.segment"

    inputs = var_operand_def()
    outputs = var_result_def()
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())

    assembly_format = (
        "$sym_name ` ` `(` $inputs `)` `:` functional-type($inputs, $outputs) $body attr-dict"
    )

    def __init__(self, name: str, inputs: Sequence[SSAValue],
                 result_types: Sequence[Attribute], body: Region):  # fmt: skip
        super().__init__(operands=[inputs], result_types=[result_types],
                         properties={"sym_name": StringAttr(name)}, regions=[body])  # fmt: skip

    @property
    def block(self) -> Block:
        return self.body.block

    def verify_(self) -> None:
        verify_isolated_body(self, YieldOp)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The results of an `npu.segment` body."""

    name = "npu.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), HasParent(SegmentOp), Pure())

    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """A compiled segment: runs program `@callee` on its operands (written to
    DRAM at `inputs`) and gives its results (read from `outputs`)."""

    name = "npu.launch"

    args = var_operand_def()
    res = var_result_def()
    callee = prop_def(SymbolRefAttr)
    inputs = prop_def(ArrayAttr[IntegerAttr[I64]])
    outputs = prop_def(ArrayAttr[IntegerAttr[I64]])

    assembly_format = "$callee ` ` `(` $args `)` attr-dict `:` functional-type($args, $res)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute],
                 inputs: Sequence[int], outputs: Sequence[int]):  # fmt: skip
        addresses = [ArrayAttr([IntegerAttr(a, i64) for a in group]) for group in (inputs, outputs)]
        super().__init__(operands=[args], result_types=[result_types],
                         properties={"callee": SymbolRefAttr(callee), "inputs": addresses[0],
                                     "outputs": addresses[1]})  # fmt: skip

    def verify_(self) -> None:
        if len(self.inputs) != len(self.args) or len(self.outputs) != len(self.res):
            raise VerifyException("npu.launch: one DRAM address per operand and per result")


__all__ = ["LaunchOp", "SegmentOp", "YieldOp"]
