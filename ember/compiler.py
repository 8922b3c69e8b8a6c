"""`ember.compile`: an ONNX (or PyTorch) model compiled for a target.

The public API: `compile`, `compile_module`, `CompiledModel`, `Options` and
`CompileReport`. This module imports the model, checks the options, looks
the target up in the table (`targets/registry.py`) and hands it the graph
IR; the pipeline, the runtime and what a compiled model is belong to the
target (for the CPU: `targets/cpu/pipeline.py`, `targets/cpu/model.py`).
A model with symbolic dims compiled with `specialize` becomes one version
per size (`targets/versions.py`), each compiled by the target.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ember.cache import CacheRequest, cache_enabled, compile_cached
from ember.dialects.graph.symbolic import Range
from ember.errors import EmberError
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource
from ember.frontends.torch import is_pt2_path, is_torch_model, resolve_source
from ember.options import DEFAULT_OPTIONS, OPTIONAL_PASSES, Options, resolve_threads
from ember.passes.graph.optimize import DEFAULT_LAYOUT, OPT_LEVELS
from ember.report import CompileReport, StageListener
from ember.targets.calls import CheckedCalls, InputError, TensorSpec, has_symbols, model_specs
from ember.targets.cpu.model import ENTRY_NAME, CompiledModel, compile_module
from ember.targets.registry import keeps_compiled, target_named, target_names
from ember.targets.versions import compile_versions

TARGETS = target_names()
"""The names `target` takes (`targets/registry.py`)."""


def compile(  # noqa: A001 - the public name the API promises
    model: ModelSource | Any,
    target: str | Sequence[Any] = "cpu",
    threads: int | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    dims: Mapping[str, Range] | None = None,
    specialize: Mapping[str, Sequence[int]] | str | None = None,
    opt_level: int = 2,
    layout: str = DEFAULT_LAYOUT,
    disabled: Sequence[str] = (),
    report: CompileReport | None = None,
    profile: bool = False,
    trace: bool = False,
    example_inputs: Sequence[Any] | None = None,
    dynamic_shapes: Mapping[str, Any] | Sequence[Any] | None = None,
    arch: str = DEFAULT_OPTIONS.arch,
    emulate: bool = False,
    cache: bool | None = None,
    records: str | os.PathLike[str] | bool | None = None,
) -> Any:
    """Compiles an ONNX model (path, bytes or ModelProto) for `target`; or a
    PyTorch one: `ember.compile(module, example_inputs)` (an `nn.Module`,
    with `dynamic_shapes` as `torch.export` takes them), an `ExportedProgram`
    or a `.pt2` path, through `torch.onnx.export(dynamo=True)` (see
    `ember.frontends.torch`; `torch.export.Dim`s become symbols).

    `input_shapes` overrides input shapes and `dims` gives symbolic dims
    their ranges or pins them (`{"N": (8, 8)}`), as `import_onnx` says.
    `specialize` (`{"N": [1, 8]}`) compiles one static version per
    combination of sizes of the model's symbols and returns an
    `ember.targets.versions.VersionedModel`, which runs the one its inputs' sizes
    select (the generic version at other sizes, compiled at the first of
    them); `"auto"` is one version with each symbol at the low end of its
    range.
    `opt_level` (0, 1, 2), `layout` and `disabled` choose the optimisations
    (see `Options`); `report` collects the seconds per stage; `profile`
    times every kernel call (read with `CompiledModel.profile()`); `trace`
    (implies `profile`) also appends each kernel call to the runtime's trace
    while a `ember.targets.cpu.trace.TraceRecorder` records. `target`
    is a name of `targets/registry.py`'s table: `cpu` (native code), `npu`
    (the NPU's share of the model in its simulator, the rest on this CPU:
    `targets/npu/compile.py`), `cuda` (NVIDIA GPUs: PTX for compute
    capability `arch`, run through CUDA's driver, or with `emulate` every
    block and thread of the kernels on this CPU: `targets/cuda/target.py`). `threads` (default: every core this process may use) is
    how many threads each parallel loop worth it is split among: the calling
    thread and workers of a pool that all compiled models share; 1 compiles
    serial code.

    For the CPU target the model is looked up in the persistent compile
    cache first and stored there after compiling (`ember/cache.py`,
    docs/caching.md): the same model bytes with the same options, on the
    same Ember, LLVM and CPU, only load the stored library (the report's
    stage `cache hit KEY`). `cache=False` compiles without it; the default,
    None, uses it unless `$EMBER_CACHE=0`. A model compiled with `profile`
    (or `trace`) is never cached.

    `records` is a tuning records file (`ember tune`, docs/tuning.md) whose
    fastest schedule per op the CPU and NPU targets apply; None (the default) uses
    `$EMBER_RECORDS` or the user's records where they exist, False none.
    """
    if not isinstance(target, str):  # ember.compile(module, example_inputs)
        if example_inputs is not None:
            raise EmberError("example_inputs given twice")
        target, example_inputs = "cpu", target
    # The CPU target's table entry loads its whole pipeline: not on a cache hit.
    chosen = None if keeps_compiled(target) else target_named(target)
    threads = resolve_threads(threads)
    if opt_level not in OPT_LEVELS:
        raise EmberError(f"opt_level must be 0, 1 or 2, got {opt_level!r}")
    if isinstance(disabled, str):
        raise EmberError(f"disabled must be a sequence of pass names, got the string {disabled!r}")
    report = report or CompileReport()
    if not isinstance(profile, bool):
        raise EmberError(f"profile must be True or False, got {profile!r}")
    if not isinstance(trace, bool):
        raise EmberError(f"trace must be True or False, got {trace!r}")
    if not isinstance(emulate, bool):
        raise EmberError(f"emulate must be True or False, got {emulate!r}")
    from ember.targets.tuning_records import resolve_path, with_best_schedules

    chosen_records = resolve_path(records)
    options = Options(opt_level, layout, tuple(disabled), profile=profile or trace, trace=trace,
                      threads=threads, arch=arch, emulate=emulate,
                      records=str(chosen_records) if chosen_records is not None else "")  # fmt: skip
    if is_torch_model(model) or is_pt2_path(model):
        with report.stage("import"):  # exported to ONNX
            model, dims = resolve_source(model, dims, example_inputs, dynamic_shapes)
    else:
        model, dims = resolve_source(model, dims, example_inputs, dynamic_shapes)
    if chosen is None and cache_enabled(cache):
        options = with_best_schedules(options)  # read once: for the key and for the compile
        request = CacheRequest(model, options, input_shapes, dims,
                               "none" if specialize is None else specialize)  # fmt: skip

        def build() -> Any:
            with report.stage("import"):
                return import_onnx(model, input_shapes, dims)

        cached = compile_cached(request, build, report, cache)
        if cached is not None:
            return cached
    chosen = chosen or target_named(target)
    with report.stage("import"):
        module = import_onnx(model, input_shapes, dims)
    if specialize and specialize != "none":
        if not chosen.versions:
            raise EmberError(
                f"the {chosen.name} target compiles one static version (no specialize)"
            )
        return compile_versions(module, specialize,
                                lambda version: chosen.compile(version, CompileReport(), options))  # fmt: skip
    return chosen.compile(module, report, options)


__all__ = [
    "DEFAULT_OPTIONS",
    "ENTRY_NAME",
    "OPTIONAL_PASSES",
    "CheckedCalls",
    "CompileReport",
    "CompiledModel",
    "InputError",
    "Options",
    "StageListener",
    "TARGETS",
    "TensorSpec",
    "compile",
    "compile_module",
    "has_symbols",
    "model_specs",
]
