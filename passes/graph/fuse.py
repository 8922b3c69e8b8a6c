"""`graph-fuse`: groups `graph` ops into `graph.fused` regions, one kernel each.

A group starts at an anchor op (the first, in program order, that no
earlier group took) and grows through the users of its members:

| anchor | kind | what joins it |
|---|---|---|
| Conv, ConvNCHWc, ConvNHWC | `conv` | elementwise ops and reductions: bias, activation, residual Add, Clip… |
| Gemm, MatMul | `matmul` | the same (attention scores: scale, mask, Softmax) |
| Attention (only Y used) | `attention` | the same |
| ReduceX, Softmax, LogSoftmax, LayerNormalization, InstanceNormalization | `reduction` | the same |
| an elementwise op | `elementwise` | the same; with a reduction it is a `reduction` group |

A second contraction never joins. Legality is explicit: a group is *closed*
when only its last op's result is used outside it, so no intermediate
value is needed outside the group and nothing is computed twice. Growing
adds the earliest user of any member that may join, one at a time, and the
group is the longest closed prefix of that sequence. So diamonds fuse: a
decomposed Softmax (ReduceMax, Sub, Exp, ReduceSum, Div) or LayerNorm, or
Gelu's two uses of its input, end up in one group. An elementwise op alone
forms no group (it is one loop nest already); any other anchor forms a
group even alone, because its lowering is several loop nests (padding,
initialisation, bias) that the group turns into one kernel.

A group has at most `max-group-ops` members (default `MAX_GROUP_OPS`,
256): growing stops there and the longest closed prefix so far is the
group, so a longer elementwise chain becomes several groups in a row. Each
group is one loop body for LLVM, whose optimisation time grows
quadratically with a body's size (a fan of 4,000 elementwise ops in one
group: 1.8 s at 2,000 ops, 5 s at 4,000, 21 s at 8,000), while what fusion
saves, a store and a load of the intermediate per element, is already all
but saved at a few hundred ops: a boundary every 256 ops costs one round
trip through memory per 256 ops of work. The cap also bounds the ops one
anchor's growing visits, so forming groups is linear in the block. Real
models' groups are far smaller (a decomposed LayerNorm or Gelu: under 20).

The region is isolated from above: values from outside are operands, and
the constants the members read (weights, axes) are cloned into the body, so
the lowering still sees them as constants. Ops of other kinds (pooling,
data movement, shape ops) are left alone.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph import (
    ArgMaxOp,
    ArgMinOp,
    AttentionOp,
    ConstantOp,
    ConvNCHWcOp,
    ConvNHWCOp,
    ConvOp,
    FusedOp,
    GemmOp,
    GraphOp,
    InstanceNormalizationOp,
    LayerNormalizationOp,
    LogSoftmaxOp,
    MatMulOp,
    SoftmaxOp,
    YieldOp,
    op_classes,
    ops_elementwise,
    ops_reduce,
)
from ember.dialects.source_names import merged_location

ELEMENTWISE: frozenset[type[GraphOp]] = frozenset(op_classes(ops_elementwise.SPECS))
REDUCTIONS: frozenset[type[GraphOp]] = (
    frozenset(op_classes(ops_reduce.SPECS)) - {ArgMaxOp, ArgMinOp}
) | {SoftmaxOp, LogSoftmaxOp, LayerNormalizationOp, InstanceNormalizationOp}
CONTRACTIONS: dict[type[GraphOp], str] = {ConvOp: "conv", ConvNCHWcOp: "conv", ConvNHWCOp: "conv",
                                          GemmOp: "matmul", MatMulOp: "matmul"}  # fmt: skip
"""Anchor op classes of the contraction kinds (with the laid-out convs of `graph-layout`)."""


def anchor_kind(op: Operation) -> str | None:
    """The group kind `op` starts, or None when it starts no group."""
    if not isinstance(op, GraphOp) or isinstance(op, ConstantOp) or not op.results:
        return None
    if any(r.uses for r in op.results[1:]):  # a group yields one value
        return None
    if isinstance(op, AttentionOp):
        return "attention"  # its lowering is several loop nests: one kernel
    op_class = type(op)
    if op_class in CONTRACTIONS:
        return CONTRACTIONS[op_class]
    if op_class in REDUCTIONS:
        return "reduction"
    if op_class in ELEMENTWISE:
        return "elementwise"
    return None


@dataclass
class Group:
    kind: str
    members: list[Operation] = field(default_factory=list)
    """In program order; the last one's result is the group's result."""

    @property
    def result(self) -> SSAValue:
        return self.members[-1].results[0]


def _may_join(user: Operation, anchor: Operation, taken: set[Operation]) -> bool:
    """Elementwise ops and reductions (never a second contraction) from the
    anchor's block that no earlier group took."""
    return (
        user not in taken
        and user.parent is anchor.parent
        and anchor_kind(user) in ("elementwise", "reduction")
    )


MAX_GROUP_OPS = 256
"""Default most members of one group (see the module docstring)."""


def grow(
    anchor: Operation,
    taken: set[Operation],
    position: dict[Operation, int],
    max_ops: int = MAX_GROUP_OPS,
) -> list[Operation]:
    """The largest group found by adding, one at a time, the earliest user of a
    member that may join, keeping the longest closed prefix of at most
    `max_ops` members.

    Linear in the ops visited: the users that may join wait in a heap by
    position, and closedness is a count kept up to date, not a rescan. Each
    added op comes after every earlier member (it uses a member, and the
    heap yields the earliest), so the newest member is the last one and the
    prefix is closed when every use of an older member's result is inside
    the prefix. A user that may never join (another group's op, a pooling
    op) makes every longer prefix open for good, so growing stops there.
    """
    members: list[Operation] = []
    inside: set[Operation] = set()
    waiting: list[tuple[int, Operation]] = []
    queued: set[Operation] = set()
    outside_uses = 0
    """Uses of the members' results by ops that are not members."""
    blocked = False
    best = 1
    member: Operation | None = anchor
    while member is not None:
        outside_uses -= sum(1 for operand in member.operands if operand.owner in inside)
        members.append(member)
        inside.add(member)
        own_uses = 0
        for use in member.results[0].uses:
            own_uses += 1
            user = use.operation
            if user in queued:
                continue
            if _may_join(user, anchor, taken):
                queued.add(user)
                heapq.heappush(waiting, (position[user], user))
            else:
                blocked = True
        outside_uses += own_uses
        if outside_uses == own_uses:  # only the newest member's result leaves
            best = len(members)
        full = blocked or len(members) >= max_ops
        member = heapq.heappop(waiting)[1] if waiting and not full else None
    return members[:best]


def form_groups(block: Block, max_ops: int = MAX_GROUP_OPS) -> list[Group]:
    """The fusion groups of one block, in program order (see the module docstring)."""
    position = {op: index for index, op in enumerate(block.ops)}
    groups: list[Group] = []
    taken: set[Operation] = set()
    for op in block.ops:
        kind = anchor_kind(op)
        if kind is None or op in taken:
            continue
        members = grow(op, taken, position, max_ops)
        if kind == "elementwise" and any(anchor_kind(m) == "reduction" for m in members):
            kind = "reduction"
        if len(members) > 1 or kind != "elementwise":
            groups.append(Group(kind, members))
            taken.update(members)
    return groups


def outline_group(group: Group) -> FusedOp:
    """Replaces the group's ops by one `graph.fused` at the last member's place."""
    members = set(group.members)
    inputs: dict[SSAValue, None] = {}  # dicts: ordered sets
    constants: dict[ConstantOp, None] = {}
    for member in group.members:
        for operand in member.operands:
            owner = operand.owner
            if isinstance(owner, ConstantOp):
                constants[owner] = None
            elif owner not in members:
                inputs[operand] = None
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
    fused = FusedOp(group.kind, list(inputs), [group.result.type], Region(block))
    fused.location = merged_location(member.location for member in group.members)
    last = group.members[-1]
    Rewriter.insert_op(fused, InsertPoint.before(last))
    fused.results[0].name_hint = group.result.name_hint
    group.result.replace_all_uses_with(fused.results[0])
    for member in reversed(group.members):
        Rewriter.erase_op(member)
    for constant in constants:  # now cloned into the body
        if not constant.results[0].uses:
            Rewriter.erase_op(constant)
    return fused


def fuse_function(func: FuncOp, max_ops: int = MAX_GROUP_OPS) -> list[FusedOp]:
    return [outline_group(group) for group in form_groups(func.body.block, max_ops)]


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Groups conv/matmul/reduction anchors with their elementwise epilogues, and
    elementwise chains, into `graph.fused` regions (see the module docstring)."""

    name = "graph-fuse"

    max_group_ops: int = MAX_GROUP_OPS
    """The most ops one group may have (see the module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_group_ops < 1:
            raise DiagnosticException(
                f"graph-fuse: option max-group-ops must be positive, got {self.max_group_ops}"
            )
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and not func.is_declaration:
                fuse_function(func, self.max_group_ops)


__all__ = [
    "CONTRACTIONS",
    "MAX_GROUP_OPS",
    "FusePass",
    "Group",
    "anchor_kind",
    "form_groups",
    "grow",
]
