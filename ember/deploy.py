"""Ahead-of-time compilation: `ember compile MODEL --target NAME -o DIR`.

`compile_to_directory` imports the model and hands it to the target's
deploy writer: for the CPU a shared library, a C header, the weights and a
manifest (`targets/cpu/deploy.py`, docs/deploying.md); for the NPU each
segment's program and DRAM image (`targets/npu/deploy.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ember.dialects.graph.symbolic import Range
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource
from ember.load_back import stamp_manifest
from ember.options import DEFAULT_OPTIONS, Options
from ember.report import CompileReport
from ember.targets.registry import keeps_compiled, target_named
from ember.targets.versions import Specialize


def compile_to_directory(
    model: ModelSource,
    out_dir: str | Path,
    name: str = "model",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: Options = DEFAULT_OPTIONS,
    report: CompileReport | None = None,
    dims: Mapping[str, Range] | None = None,
    specialize: Specialize = "auto",
    target: str = "cpu",
) -> Any:
    """Compiles `model` ahead of time for `target` into `out_dir`, its files
    named after `name`; returns what the target's writer wrote (for the CPU
    a `targets.cpu.deploy.DeployedModel`, its manifest stamped with the
    build and checksums that `ember.load` checks; every writer's result has
    `files`). `report` collects the seconds per stage (and tells its
    listener); `input_shapes` and `dims` are `import_onnx`'s. A model with
    symbolic dims is compiled once for every size of them, and once more
    for each combination of `specialize`'s sizes (`{"N": [1, 8]}`); the
    default, `"auto"`, is `targets.versions.AUTO_DOC`, and `"none"` leaves
    the generic version alone."""
    chosen = target_named(target)
    out = chosen.prepare_output(Path(out_dir), name)
    report = report or CompileReport()
    with report.stage("import"):
        module = import_onnx(model, input_shapes, dims)
    deployed = chosen.deploy(module, out, name, options, report, specialize)
    if keeps_compiled(chosen.name):  # what `ember.load` checks before loading it back
        stamp_manifest(deployed.manifest)
    return deployed


__all__ = ["compile_to_directory"]
