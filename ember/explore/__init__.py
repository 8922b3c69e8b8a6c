"""`ember explore MODEL -o report.html`: see what the compiler did to a model.

One self-contained HTML file (no server, nothing fetched) showing the
graph before and after optimisation with its fusion groups, the IR after
every pass with what it changed, the kernels (time, GFLOP/s, roofline,
schedule, loop IR and LLVM IR), the memory plan and, for the NPU, the
cycles per layer. docs/explore.md describes it.

One module per concept:

- `collect.py`: compile (and profile) the model, watched pass by pass;
- `snapshots.py`: what is kept from each pass; `ir_diff.py`: what it changed;
- `graph_model.py`: the graph's nodes, edges and clusters; `naming.py`: their names;
- `kernel_map.py`: which graph node each kernel call comes from;
- `graph_svg.py`: the graph as SVG, with `dot` or `layered_layout.py`;
- `roofline_svg.py`, `memory_plan.py` + `memory_view.py`, `npu_view.py`: the charts;
- `page.py`: the HTML page.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ember.dialects.graph.symbolic import Range
from ember.errors import EmberError
from ember.explore.collect import RUNS, Exploration, explore_model
from ember.explore.page import render_page
from ember.frontends.onnx.loader import ModelSource
from ember.options import Options
from ember.output_files import written
from ember.report import CompileReport

ENGINES = ("auto", "dot", "layered")
"""How the graphs are laid out: `dot` where it is on PATH (auto), or the built-in layered layout."""


def check_report_path(path: str | Path) -> None:
    """Fails early (before a long compile) where `path` cannot be written."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise EmberError(f"{target}: no such directory '{folder}'")
    if target.is_dir():
        raise EmberError(f"{target}: is a directory")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise EmberError(f"{target}: not writable")


def write_report(found: Exploration, path: str | Path, engine: str = "auto") -> None:
    """Writes the report of `found` to `path` (whole or not at all)."""
    if engine not in ENGINES:
        raise EmberError(f"layout engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    page = render_page(found, engine).encode("ascii", "xmlcharrefreplace")
    try:
        with written(path, "wb") as stream:
            stream.write(page)
    except OSError as error:
        raise EmberError(f"{path}: cannot write: {error.strerror or error}") from None


def explore(model: ModelSource, path: str | Path, target: str = "cpu",
            options: Options | None = None, name: str | None = None, runs: int = RUNS,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            dims: Mapping[str, Range] | None = None, engine: str = "auto",
            report: CompileReport | None = None) -> Exploration:  # fmt: skip
    """Compiles `model` for `target` and writes its report to the HTML file
    `path`; returns what the report shows."""
    check_report_path(path)
    found = explore_model(model, name or str(model) if not isinstance(model, bytes) else "model",
                          target, options, runs, input_shapes, dims, report)  # fmt: skip
    write_report(found, path, engine)
    return found


__all__ = [
    "ENGINES",
    "check_report_path",
    "Exploration",
    "explore",
    "explore_model",
    "render_page",
    "write_report",
]
