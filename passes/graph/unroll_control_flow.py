"""`graph-unroll-control-flow`: removes control flow that is static.

- A `graph.if` whose condition is a `graph.constant` is replaced by the
  branch it takes, inlined in front of it.
- A `graph.scan` whose sequence length is static is unrolled: each
  iteration is a copy of the body, reading one slice of each scan input
  (`graph.gather` at the iteration's index along the input's axis, from the
  end for direction 1) and the states the previous copy yielded; each scan
  output is its slices unsqueezed and concatenated along its axis (in
  reverse order for direction 1).
- A `graph.loop` whose trip count is a constant and whose condition is
  absent, or a constant true that the body passes on unchanged, is unrolled
  the same way: each copy reads the iteration number as a constant, and the
  scan outputs stack the copies' slices along a new leading axis.

Loops of more than `MAX_UNROLL_ITERATIONS` iterations, and of none where
they have scan outputs, are left alone, as is control flow that depends on
values known only at run time: the CPU pipeline refuses what remains with a
diagnostic naming the op. The pass runs inside `graph-simplify`, so a
condition or trip count that constant folding computes (from shapes, say)
is seen. Result types are re-inferred after a rewrite (`graph-infer-shapes`):
a branch's or an unrolled body's types may be more precise than the op's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ember.dialects.graph import ConcatOp, GatherOp, IfOp, LoopOp, ScanOp, UnsqueezeOp
from ember.dialects.graph.control_flow import sliced_type, stacked_type, static_trip_count
from ember.dialects.graph.ops_tensor import constant_value_of
from ember.dialects.graph.spec import AttrKind
from ember.dialects.graph.types import DYNAMIC, attribute_from_value
from ember.dialects.source_names import describe_names, source_names
from ember.passes.graph.builders import insert_constant, insert_op

MAX_UNROLL_ITERATIONS = 256
"""The most iterations a Scan or Loop is unrolled to: each copies the body,
so a longer loop would swell the graph (and compile time, which grows with
the op count) for what a real loop does in a few ops."""


def _inline(rewriter: PatternRewriter, anchor: Operation, block: Block,
            args: Sequence[SSAValue]) -> list[SSAValue]:  # fmt: skip
    """Copies `block`'s ops (its arguments bound to `args`) in front of
    `anchor`; returns the values its `graph.yield` passes on."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, args))
    terminator = block.last_op
    assert terminator is not None
    for op in block.ops:
        if op is terminator:
            break
        rewriter.insert(op.clone(mapping), InsertPoint.before(anchor))
    return [mapping.get(v, v) for v in terminator.operands]


def _axis_props(axis: int) -> dict:
    return {"axis": attribute_from_value(AttrKind.INT, axis)}


def _slice(rewriter: PatternRewriter, anchor: Operation, value: SSAValue, index: int,
           axis: int) -> SSAValue:  # fmt: skip
    """Element `index` of `value` along `axis` (the axis removed)."""
    position = insert_constant(rewriter, anchor, np.array(index, np.int64))
    return insert_op(rewriter, anchor, GatherOp, [value, position],
                     sliced_type(value.type, axis), _axis_props(axis))  # fmt: skip


def _stack(rewriter: PatternRewriter, anchor: Operation, slices: list[SSAValue],
           axis: int) -> SSAValue:  # fmt: skip
    """`slices` stacked along a new `axis`."""
    axes = insert_constant(rewriter, anchor, np.array([axis], np.int64))
    expanded = [insert_op(rewriter, anchor, UnsqueezeOp, [s, axes],
                          stacked_type(s.type, 1, axis)) for s in slices]  # fmt: skip
    if len(expanded) == 1:
        return expanded[0]
    return insert_op(rewriter, anchor, ConcatOp, [expanded],
                     stacked_type(slices[0].type, len(slices), axis), _axis_props(axis))  # fmt: skip


class InlineConstantIf(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IfOp, rewriter: PatternRewriter) -> None:
        cond = constant_value_of(op.cond)
        if cond is None or cond.size != 1:
            return
        branch = op.then_branch if bool(cond.reshape(-1)[0]) else op.else_branch
        rewriter.replace(op, [], _inline(rewriter, op, branch.block, []))


class UnrollStaticScan(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScanOp, rewriter: PatternRewriter) -> None:
        length = op.sequence_length()
        if length == DYNAMIC or not 0 < length <= MAX_UNROLL_ITERATIONS:
            return
        states = list(op.inputs[: op.num_states])
        scan_inputs = op.inputs[op.num_states :]
        slices: list[list[SSAValue]] = [[] for _ in range(op.num_scan_outputs)]
        for step in range(length):
            args = [_slice(rewriter, op, x, length - 1 - step if d else step, a)
                    for x, a, d in zip(scan_inputs, op.input_axes(), op.input_directions())]  # fmt: skip
            outputs = _inline(rewriter, op, op.body.block, [*states, *args])
            states = outputs[: op.num_states]
            for scan, value in zip(slices, outputs[op.num_states :]):
                scan.append(value)
        stacked = [_stack(rewriter, op, s[::-1] if d else s, a)
                   for s, a, d in zip(slices, op.output_axes(), op.output_directions())]  # fmt: skip
        rewriter.replace(op, [], [*states, *stacked])


class UnrollStaticLoop(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoopOp, rewriter: PatternRewriter) -> None:
        count = static_trip_count(op, constant_value_of)
        if count is None or count > MAX_UNROLL_ITERATIONS:
            return
        if count == 0 and op.num_scan_outputs:
            return  # empty scan outputs: rare, and their shapes may be unknown
        carried = list(op.carried)
        slices: list[list[SSAValue]] = [[] for _ in range(op.num_scan_outputs)]
        cond = insert_constant(rewriter, op, np.array(True))
        for step in range(count):
            number = insert_constant(rewriter, op, np.array(step, np.int64))
            outputs = _inline(rewriter, op, op.body.block, [number, cond, *carried])
            carried = outputs[1 : 1 + len(carried)]
            for scan, value in zip(slices, outputs[1 + len(carried) :]):
                scan.append(value)
        stacked = [_stack(rewriter, op, s, 0) for s in slices]
        rewriter.replace(op, [], [*carried, *stacked])


def why_not_unrolled(op: IfOp | LoopOp | ScanOp) -> str:
    """What keeps `op` from being inlined or unrolled, in the words of a
    diagnostic (`graph.loop with a run-time trip count`)."""
    if isinstance(op, IfOp):
        return f"{op.name} with a run-time condition"
    if isinstance(op, ScanOp):
        length = op.sequence_length()
        if length == DYNAMIC:
            return f"{op.name} over a run-time sequence length"
        if length == 0:
            return f"{op.name} over an empty sequence"
        return (
            f"{op.name} of {length} iterations (more than {MAX_UNROLL_ITERATIONS} are not unrolled)"
        )
    if op.max_trip_count is None:
        return f"{op.name} with no trip count"
    trips = constant_value_of(op.max_trip_count)
    if trips is None:
        return f"{op.name} with a run-time trip count"
    count = static_trip_count(op, constant_value_of)
    if count is None:
        return f"{op.name} with a run-time condition"
    if count == 0:
        return f"{op.name} of no iterations with scan outputs"
    return f"{op.name} of {count} iterations (more than {MAX_UNROLL_ITERATIONS} are not unrolled)"


def resolve_static_control_flow(module: ModuleOp, max_rounds: int = 8) -> None:
    """Folds constants and unrolls, in rounds, until no control flow is left
    or a round changes nothing: for a target that must know the entry
    function's result shapes before its pipeline runs, where they depend on
    control flow that only folding shows to be static."""
    from ember.passes.graph.fold_constants import FoldConstantsPass
    from ember.passes.graph.infer_shapes import InferShapesPass

    context = Context()
    InferShapesPass().apply(context, module)

    def count() -> int:
        return sum(1 for op in module.walk() if isinstance(op, IfOp | LoopOp | ScanOp))

    for _ in range(max_rounds):
        before = count()
        if before == 0:
            return
        FoldConstantsPass().apply(context, module)
        UnrollControlFlowPass().apply(context, module)
        if count() == before:
            return


def remaining_control_flow(root: Operation) -> str | None:
    """The first `graph.if`/`graph.loop`/`graph.scan` under `root`, described
    with what keeps it and its source node (`graph.loop with a run-time trip
    count (node y)`), or None where there is none."""
    for op in root.walk():
        if isinstance(op, IfOp | LoopOp | ScanOp):
            names = source_names(op)
            return why_not_unrolled(op) + (f" (node {describe_names(names)})" if names else "")
    return None


CONTROL_FLOW_PATTERNS: tuple[type[RewritePattern], ...] = (
    InlineConstantIf,
    UnrollStaticScan,
    UnrollStaticLoop,
)


@dataclass(frozen=True)
class UnrollControlFlowPass(ModulePass):
    """Inlines constant-condition Ifs and unrolls static Scans and Loops (see
    the module docstring)."""

    name = "graph-unroll-control-flow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ember.passes.graph.infer_shapes import infer_function_shapes

        patterns = GreedyRewritePatternApplier([p() for p in CONTROL_FLOW_PATTERNS])
        if PatternRewriteWalker(patterns).rewrite_module(op):
            for func in op.walk():
                if isinstance(func, FuncOp) and not func.is_declaration:
                    infer_function_shapes(func)


__all__ = [
    "MAX_UNROLL_ITERATIONS",
    "UnrollControlFlowPass",
    "remaining_control_flow",
    "resolve_static_control_flow",
    "why_not_unrolled",
]
