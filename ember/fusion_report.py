"""The fusion report (`ember compile --fusion-report`): what the graph
optimiser did to one model, counted.

- graph ops: operators (constants not counted) as imported, and after the
  level-1 clean-up (folding, canonicalisation, BatchNorm folding, CSE, DCE);
- fusion groups by kind after `graph-fuse`, and the ops they hold; then
  one line per group, naming it by the model's nodes it fused
  (`ember.dialects.source_names`) and its output's shape;
- kernels: the kernel calls of the compiled entry function without fusion
  (`-O1`) and with it (`-O2`): each call is one pass over memory.

The pipeline is run to the loop level only (no LLVM), on copies of the module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Operation

from ember.dialects.graph import ConstantOp, FusedOp, GraphOp
from ember.dialects.graph.types import shape_of
from ember.dialects.loop import KERNEL_ATTR
from ember.dialects.source_names import source_names
from ember.options import Options
from ember.passes.graph.optimize import DEFAULT_LAYOUT, graph_passes
from ember.targets.cpu.pipeline import cpu_passes


def count_graph_ops(op: Operation) -> int:
    """Graph ops (constants not counted) in `op`, nested ones included."""
    return sum(isinstance(o, GraphOp) and not isinstance(o, ConstantOp) for o in op.walk())


def count_kernel_calls(
    module: ModuleOp, options: Options, stages: Collection[str] = ("graph", "tensor", "loop")
) -> int:
    """Kernel calls in the entry function once `module` has run the CPU
    pipeline's `stages` (leave out "graph" for a module already optimised):
    calls from functions that are not kernels themselves, so that a kernel
    whose loop runs on threads (a call of its parallel body) counts once."""
    context = Context()
    for stage, compiler_pass in cpu_passes(options):
        if stage in stages:
            compiler_pass.apply(context, module)
    entries = [
        op for op in module.ops if isinstance(op, FuncOp) and KERNEL_ATTR not in op.attributes
    ]
    return sum(isinstance(op, CallOp) for func in entries for op in func.walk())


@dataclass(frozen=True)
class FusionReport:
    ops_imported: int
    ops_simplified: int
    groups: dict[str, tuple[int, int]]
    """kind -> (number of groups, ops in them)"""
    kernels_unfused: int
    kernels_fused: int
    group_lines: tuple[str, ...] = ()
    """Per group, in program order: `conv: conv1 + bn1 + relu1 -> 1x112x112x64`."""

    def format(self, name: str) -> str:
        kinds = ", ".join(f"{kind} {count} ({ops} ops)"
                          for kind, (count, ops) in sorted(self.groups.items()))  # fmt: skip
        summary = (
            f"{name}: graph ops {self.ops_imported} imported, {self.ops_simplified} after "
            f"simplification; fusion groups: {kinds or 'none'}; kernels "
            f"{self.kernels_unfused} without fusion, {self.kernels_fused} with"
        )
        return "\n".join([summary, *(f"  {line}" for line in self.group_lines)])


def group_line(group: FusedOp) -> str:
    """`conv: conv1 + bn1 + relu1 -> 1x112x112x64` (the group's op names
    when its nodes have no names)."""
    names = source_names(group) or [
        o.name.removeprefix("graph.") for o in group.walk() if isinstance(o, GraphOp)
        and not isinstance(o, ConstantOp | FusedOp)
    ]  # fmt: skip
    shape = "x".join(str(d) for d in shape_of(group.results[0].type))
    return f"{group.kind.data}: {' + '.join(names)} -> {shape}"


def fusion_report(
    module: ModuleOp, layout: str = DEFAULT_LAYOUT, disabled: tuple[str, ...] = ()
) -> FusionReport:
    """Counts for `module` (graph IR as imported; it is not modified) at -O1
    and at -O2 with `layout`, leaving out the `disabled` passes at both. Each
    level's graph pipeline runs once; its result is then lowered to count."""
    context = Context()
    optimised: dict[int, ModuleOp] = {}
    for level in (1, 2):
        optimised[level] = module.clone()
        for graph_pass in graph_passes(level, layout, disabled):
            graph_pass.apply(context, optimised[level])
    groups: Counter[str] = Counter()
    members: Counter[str] = Counter()
    lines = []
    for op in optimised[2].walk():
        if isinstance(op, FusedOp):
            groups[op.kind.data] += 1
            members[op.kind.data] += count_graph_ops(op)
            lines.append(group_line(op))
    ops_simplified = count_graph_ops(optimised[1])
    lower_only = ("tensor", "loop")
    return FusionReport(
        ops_imported=count_graph_ops(module),
        ops_simplified=ops_simplified,
        groups={kind: (groups[kind], members[kind]) for kind in groups},
        kernels_unfused=count_kernel_calls(
            optimised[1], Options(opt_level=1, disabled=disabled), lower_only
        ),
        kernels_fused=count_kernel_calls(
            optimised[2], Options(opt_level=2, layout=layout, disabled=disabled), lower_only
        ),
        group_lines=tuple(lines),
    )


__all__ = ["FusionReport", "count_graph_ops", "count_kernel_calls", "fusion_report"]
