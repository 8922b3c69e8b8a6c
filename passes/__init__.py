"""Transformations within one level, one sub-package per level.

`all_passes()` is the registry that `ember-opt` and the pipelines use:
every pass's command-line name maps to its class.
"""

from __future__ import annotations

from xdsl.passes import ModulePass


def all_passes() -> dict[str, type[ModulePass]]:
    from ember.passes.graph.fold_constants import FoldConstantsPass
    from ember.passes.graph.infer_shapes import InferShapesPass

    passes: list[type[ModulePass]] = [FoldConstantsPass, InferShapesPass]
    return {p.name: p for p in passes}
