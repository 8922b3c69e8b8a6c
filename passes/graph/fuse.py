"""`graph-fuse`: groups `graph` ops into `graph.fused` regions, one kernel each.

A group starts at an anchor op and grows along a chain of consumers:

| anchor | kind | what joins it |
|---|---|---|
| Conv, ConvNCHWc, ConvNHWC | `conv` | elementwise epilogue: bias, activation, residual Add, Clip… |
| Gemm, MatMul | `matmul` | the same |
| ReduceX, Softmax, LogSoftmax, LayerNormalization, InstanceNormalization | `reduction` | elementwise epilogue |
| an elementwise op | `elementwise` | more elementwise ops; then a reduction of the chain's result, and its epilogue |

Legality is explicit: a consumer joins only when it is the *only* user of the
group's current result (so no intermediate value is needed outside the
group and nothing is computed twice), when it is elementwise (or, after an
elementwise chain, a reduction reading the chain's result as its data), and
when its result has the shape of the value it consumes, so the group's
loop nests share their outer loops. An elementwise op alone forms no group
(it is one loop nest already); any other anchor forms a group even alone,
because its lowering is several loop nests (padding, initialisation,
bias) that the group turns into one kernel.

The region is isolated from above: values from outside are operands, and
the constants the members read (weights, axes) are cloned into the body, so
the lowering still sees them as constants. Ops of other kinds (pooling,
data movement, shape ops) are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import dce

from ember.dialects.graph import ConstantOp, FusedOp, GraphOp, YieldOp, ops_elementwise, ops_reduce

ELEMENTWISE: frozenset[str] = frozenset(spec.onnx_type for spec in ops_elementwise.SPECS)
REDUCTIONS: frozenset[str] = frozenset(
    {spec.onnx_type for spec in ops_reduce.SPECS} - {"ArgMax", "ArgMin"}
) | {"Softmax", "LogSoftmax", "LayerNormalization", "InstanceNormalization"}
CONTRACTIONS: dict[str, str] = {"Conv": "conv", "ConvNCHWc": "conv", "ConvNHWC": "conv",
                                "Gemm": "matmul", "MatMul": "matmul"}  # fmt: skip
"""Anchor op types of the contraction kinds (with the laid-out convs of `graph-layout`)."""


def anchor_kind(op: Operation) -> str | None:
    """The group kind `op` starts, or None when it starts no group."""
    if not isinstance(op, GraphOp) or isinstance(op, ConstantOp) or len(op.results) != 1:
        return None
    onnx_type = op.SPEC.onnx_type
    if onnx_type in CONTRACTIONS:
        return CONTRACTIONS[onnx_type]
    if onnx_type in REDUCTIONS:
        return "reduction"
    if onnx_type in ELEMENTWISE:
        return "elementwise"
    return None


@dataclass
class Group:
    kind: str
    members: list[Operation] = field(default_factory=list)

    @property
    def result(self) -> SSAValue:
        return self.members[-1].results[0]


def _sole_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _joins(group: Group, user: Operation, taken: set[Operation]) -> bool:
    """Whether `user`, the sole user of the group's result, may join it."""
    if user in taken or user.parent is not group.members[0].parent:
        return False
    kind = anchor_kind(user)
    if kind == "elementwise":
        return user.results[0].type == group.result.type
    # A reduction may close an elementwise chain, when it reduces the chain's result.
    return (
        kind == "reduction"
        and group.kind == "elementwise"
        and isinstance(user, GraphOp)
        and user.operands[0] is group.result
    )


def form_groups(block: Block) -> list[Group]:
    """The fusion groups of one block, in program order (see the module docstring)."""
    groups: list[Group] = []
    taken: set[Operation] = set()
    for op in block.ops:
        kind = anchor_kind(op)
        if kind is None or op in taken:
            continue
        group = Group(kind, [op])
        while (user := _sole_user(group.result)) is not None and _joins(group, user, taken):
            group.members.append(user)
            if anchor_kind(user) == "reduction":
                group.kind = "reduction"
        if len(group.members) > 1 or kind != "elementwise":
            groups.append(group)
            taken.update(group.members)
    return groups


def outline_group(group: Group) -> FusedOp:
    """Replaces the group's ops by one `graph.fused` at the last member's place."""
    members = set(group.members)
    inputs: list[SSAValue] = []
    constants: list[ConstantOp] = []
    for member in group.members:
        for operand in member.operands:
            owner = operand.owner
            if isinstance(owner, ConstantOp):
                if owner not in constants:
                    constants.append(owner)
            elif owner not in members and operand not in inputs:
                inputs.append(operand)
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for value, arg in zip(inputs, block.args):
        arg.name_hint = value.name_hint
        mapping[value] = arg
    for op in [*constants, *group.members]:
        clone = op.clone(value_mapper=mapping)
        block.add_op(clone)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
    block.add_op(YieldOp(mapping[group.result]))
    fused = FusedOp(group.kind, inputs, [group.result.type], Region(block))
    last = group.members[-1]
    Rewriter.insert_op(fused, InsertPoint.before(last))
    fused.results[0].name_hint = group.result.name_hint
    group.result.replace_all_uses_with(fused.results[0])
    for member in reversed(group.members):
        Rewriter.erase_op(member)
    return fused


def fuse_function(func: FuncOp) -> list[FusedOp]:
    return [outline_group(group) for group in form_groups(func.body.block)]


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Groups conv/matmul/reduction anchors with their elementwise epilogues, and
    elementwise chains, into `graph.fused` regions (see the module docstring)."""

    name = "graph-fuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and not func.is_declaration:
                fuse_function(func)
        dce(op)  # the constants now cloned into the groups


__all__ = ["CONTRACTIONS", "FusePass", "Group", "anchor_kind", "form_groups"]
