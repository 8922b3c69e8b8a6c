"""`graph-optimize`: the named graph-level pipeline behind `ember compile -O`.

| level | passes |
|---|---|
| 0 | `graph-expand-qlinear`, `graph-infer-shapes`, `graph-fold-constants`, `graph-unroll-control-flow`, `graph-widen-accumulators`, `dce` (what lowering needs) |
| 1 | `graph-expand-qlinear`, `graph-infer-shapes`, `graph-simplify` (folding, static control flow unrolled, canonicalisation, BatchNorm folding, CSE, DCE to a fixed point), `graph-widen-accumulators` (half-precision models sum in f32: docs/types.md) |
| 2 | level 1, then `graph-layout` (NHWC unless `layout` says otherwise; `none` keeps NCHW; a function whose conversions would cost too much stays NCHW) and `graph-simplify` again, then `graph-fuse` |

`disabled` leaves passes out, by name (`graph-fuse`, `graph-layout`, or one
that `graph-simplify` runs), for ablations and for finding a pass at fault.
`ember-opt -p graph-optimize{level=2}` expands to these passes, so
`--print-between-passes` shows the IR after each of them. At level 2 the
CPU pipeline also runs `loop-fuse` after bufferization (see
`ember.targets.cpu.pipeline.cpu_passes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import DiagnosticException

OPT_LEVELS = (0, 1, 2)
LAYOUTS = ("none", "NCHWc", "NHWC")
DEFAULT_LAYOUT = "NHWC"
"""Convolutions run channels-last at level 2 unless told otherwise: measured
2-4x faster than NCHW on the light models (docs/graph-optimizer.md)."""
MAX_CONVERSION_RATIO = 0.01
"""Level 2 keeps a function in NCHW when layout conversions would move more
elements than this per multiply-accumulate of its convolutions: converting
around every convolution costs more than channels-last saves. ShuffleNet's
channel shuffles came to 0.02 and made it 1.5x slower in NHWC until
`graph-layout` learned to shuffle channels-last (now it converts only its
input and its classifier's; 1 thread, Zen 5: 2.6 ms, in NCHW 3.7 ms); the
light models need 0.001 or less and run 1-4x faster."""


def graph_passes(
    level: int,
    layout: str = DEFAULT_LAYOUT,
    disabled: tuple[str, ...] = (),
    expand_qlinear: bool = True,
) -> list[ModulePass]:
    """The graph-level passes of optimisation `level` (see the module
    docstring); without `expand_qlinear` quantised products stay (a target
    that runs them, the NPU)."""
    from ember.passes.graph.expand_qlinear import ExpandQLinearPass
    from ember.passes.graph.fold_constants import FoldConstantsPass
    from ember.passes.graph.fuse import FusePass
    from ember.passes.graph.infer_shapes import InferShapesPass
    from ember.passes.graph.simplify import SimplifyPass
    from ember.passes.graph.unroll_control_flow import UnrollControlFlowPass
    from ember.passes.graph.widen_accumulators import WidenAccumulatorsPass

    if level not in OPT_LEVELS:
        raise DiagnosticException(f"graph-optimize: level must be 0, 1 or 2, got {level}")
    if layout not in LAYOUTS:
        raise DiagnosticException(
            f"graph-optimize: layout must be one of {', '.join(LAYOUTS)}, got '{layout}'"
        )
    expand: list[ModulePass] = [ExpandQLinearPass()] if expand_qlinear else []
    widen = WidenAccumulatorsPass()
    if level == 0:
        return [*expand, InferShapesPass(), FoldConstantsPass(), UnrollControlFlowPass(), widen,
                DeadCodeElimination()]  # fmt: skip
    passes: list[ModulePass] = [*expand, InferShapesPass(), SimplifyPass(skip=disabled), widen]
    if level == 2:
        if layout != "none" and "graph-layout" not in disabled:
            from ember.passes.graph.layout import LayoutPass

            passes += [LayoutPass(layout=layout, max_conversion_ratio=MAX_CONVERSION_RATIO),
                       SimplifyPass(skip=disabled)]  # fmt: skip
        if "graph-fuse" not in disabled:
            passes.append(FusePass())
    return passes


@dataclass(frozen=True)
class GraphOptimizePass(ModulePass):
    """Runs the graph-level pipeline of one optimisation level (see the module
    docstring)."""

    name = "graph-optimize"

    level: int = 2
    layout: str = DEFAULT_LAYOUT
    disabled: tuple[str, ...] = ()

    def passes(self) -> list[ModulePass]:
        return graph_passes(self.level, self.layout, self.disabled)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph_pass in self.passes():
            graph_pass.apply(ctx, op)


__all__ = ["DEFAULT_LAYOUT", "LAYOUTS", "OPT_LEVELS", "GraphOptimizePass", "graph_passes"]
