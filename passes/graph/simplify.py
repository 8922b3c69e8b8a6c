"""`graph-simplify`: the graph clean-up passes, repeated until nothing changes.

One round runs `graph-fold-constants`, `graph-unroll-control-flow`
(constant-condition Ifs inlined, static Scans and Loops unrolled), `graph-canonicalize`,
`graph-fold-batchnorm`, `cse` and `dce` (a `cse` that gives the op it
keeps the source names of the ops it drops: `ember.dialects.source_names`). Each can expose work for another
(folding a Shape chain makes a Reshape canonicalisable; folding a
BatchNorm leaves constants to fold), so rounds repeat until the module's
fingerprint — every non-constant op with its properties, and the number of
constants — stops changing, at most `max-rounds` times. `skip` names passes
to leave out (for ablations: `graph-simplify{skip=graph-fold-batchnorm}`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
    CSEDriver,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ember.dialects.graph import ConstantOp
from ember.dialects.source_names import merged_location
from ember.passes.graph.canonicalize import CanonicalizePass
from ember.passes.graph.fold_batchnorm import FoldBatchNormPass
from ember.passes.graph.fold_constants import FoldConstantsPass
from ember.passes.graph.unroll_control_flow import UnrollControlFlowPass


def fingerprint(module: ModuleOp) -> tuple[object, ...]:
    """A cheap summary that changes whenever a clean-up pass rewrites something
    (weights are not compared byte by byte: folding always changes an op too)."""
    ops: list[object] = []
    constants = 0
    for op in module.walk():
        if isinstance(op, ConstantOp):
            constants += 1
        else:
            ops.append((op.name, len(op.operands), tuple(sorted(map(str, op.properties.items())))))
    return constants, tuple(ops)


class _NamedCSEDriver(CSEDriver):
    def _replace_and_delete(self, op: Operation, existing: Operation) -> None:
        if op.location != existing.location:
            existing.location = merged_location([existing.location, op.location])
        super()._replace_and_delete(op, existing)


class NamedCommonSubexpressionElimination(CommonSubexpressionElimination):
    """xDSL's `cse`, merging the source names of the ops it makes one."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _NamedCSEDriver().simplify(op)


def simplify_passes() -> list[ModulePass]:
    return [FoldConstantsPass(), UnrollControlFlowPass(), CanonicalizePass(), FoldBatchNormPass(),
            NamedCommonSubexpressionElimination(), DeadCodeElimination()]  # fmt: skip


@dataclass(frozen=True)
class SimplifyPass(ModulePass):
    """Runs the graph clean-up passes to a fixed point (see the module docstring)."""

    name = "graph-simplify"

    max_rounds: int = 8
    skip: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        passes = [p for p in simplify_passes() if p.name not in self.skip]
        before = fingerprint(op)
        for _ in range(self.max_rounds):
            for simplify in passes:
                simplify.apply(ctx, op)
            after = fingerprint(op)
            if after == before:
                return
            before = after


__all__ = ["SimplifyPass", "fingerprint", "simplify_passes"]
