"""The `ember` command: import, run, compile and benchmark models.

    ember import MODEL [--input-shape NAME=1x3x224x224] [--elide-large-constants] [--print-debuginfo] [-o OUT]
    ember run MODEL [--input NAME=file.npy] [--check] [--target cpu|cuda|npu|reference]
              [--output OUT.npz] [--emulate] [--arch sm_XX] [-O2] [--threads N]
    ember compile MODEL -o OUT_DIR [--target cpu|cuda|npu] [--arch sm_XX] [--name NAME]
              [--specialize N=1,8] [-O0|-O1|-O2]
    ember bench MODEL [--target cpu|cuda|npu] [--dry-run | --emulate] [--arch sm_XX]
              [--threads N] [--runs N] [-O2] [--profile] [--trace FILE.json] [--plot FILE.png]
    ember explore MODEL -o report.html [--target cpu|cuda|npu] [--runs N]
              [--layout-engine auto|dot|layered]
    ember run|bench DIR          a directory `ember compile` wrote, loaded back
    ember cache info|clear       the compile cache's entries; remove them

MODEL is an ONNX file, a `.pt2` file from `torch.export.save` (with the
`torch` extra), or `light:NAME` (a model that ships with `onnx`);
`--random-weights SEED` replaces its weights by seeded random values.
`--threads N` (default: every core) splits parallel loops among N threads
(bench: onnxruntime runs on N threads too).
A model with symbolic dims (`N`, `S`) takes their ranges with `--dim
S=1..512` or is pinned with `--dim N=8`. `run` binds them from the
`--input` files' shapes (the entry check: files that disagree, or a size
outside its range, are an error naming the input, axis and symbol) and runs
the generic version, compiled once for every size; `compile` deploys the
generic version, plus static ones for the sizes `--specialize` gives
(default `auto`: every symbol at the low end of its range; `none`).
`--target npu` runs the model's matrix products on the NPU simulator and
the rest on this CPU (`run --check` compares with onnxruntime and the
reference interpreter; `compile` writes the programs, their DRAM images
and a manifest; `bench` prints cycles and utilisation per layer, `--plot`
draws them).
`--target cuda` compiles for an NVIDIA GPU (`--arch`, default sm_90): `run`
runs it through CUDA's driver (cuda-bindings and a GPU), or with `--emulate`
every block and thread of its kernels on this CPU; `compile` writes the PTX,
the cubin (where ptxas is on PATH), the weights and the launch plan; `bench`
times it next to onnxruntime (with `--emulate`, the emulator), and `bench
--dry-run` runs nothing: it prints each launch with the registers, shared
memory and spills ptxas reports for its kernel (a target's `dry_run_table`;
other targets have none).
`run` and `bench` for the CPU target load a model compiled before with the
same options from the compile cache (`ember/cache.py`, docs/caching.md:
`$EMBER_CACHE_DIR`, `$EMBER_CACHE_SIZE`; `--no-cache` or `EMBER_CACHE=0`
turn it off): the stage line `cache hit KEY` says so.
`explore` writes one self-contained HTML file showing what the compiler
did: the graph before and after optimisation (fusion groups as clusters),
the IR after each pass, the kernels (profile, roofline, schedule, loop and
LLVM IR), the memory plan and, for the NPU, the cycles per layer
(docs/explore.md); `compile --html FILE` and `bench --html FILE` write the
same report of the compile they run (bench: with its `--profile`).
Compiling commands report each stage's time on stderr (`--quiet` silences
them; `--time-passes` adds each pass's, slowest first, when they end). User mistakes print `error: ...` and exit with status 1.
"""

from __future__ import annotations

import argparse
import sys
import warnings
import zipfile
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

import numpy as np
from xdsl.dialects.func import FuncOp

from ember.compiler import OPTIONAL_PASSES, CompileReport, Options
from ember.dialects.graph.symbolic import Range
from ember.errors import EmberError
from ember.frontends.onnx.loader import ModelSource
from ember.options import MAX_THREADS, resolve_threads
from ember.output_files import written
from ember.passes.graph.optimize import DEFAULT_LAYOUT, LAYOUTS, OPT_LEVELS
from ember.targets.registry import keeps_compiled, target_names

CHECK_RTOL, CHECK_ATOL = 1e-3, 1e-4
"""`ember run --check`: an output matches where |got - expected| <= atol +
rtol |expected| everywhere (numpy's `allclose`); the check line prints it."""

REFERENCE = "reference"
"""`ember run --target reference`: the NumPy reference interpreter, which is
not a compilation target (it runs the graph IR itself)."""


def parse_shape_override(text: str) -> tuple[str, list[int]]:
    """`data=1x3x224x224` -> ("data", [1, 3, 224, 224]); `?` is an unknown dim."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise EmberError(f"--input-shape expects NAME=DIMS (e.g. data=1x3x224x224), got '{text}'")
    try:
        shape = [-1 if d in ("?", "-1") else int(d) for d in dims.split("x")] if dims else []
    except ValueError:
        raise EmberError(f"--input-shape: '{dims}' is not a shape like 1x3x224x224") from None
    if any(d < -1 for d in shape):
        raise EmberError(f"--input-shape: '{dims}' has a negative dimension")
    return name, shape


def _shape_overrides(args: argparse.Namespace) -> dict[str, list[int]]:
    return dict(parse_shape_override(s) for s in args.input_shape)


def parse_dim_range(text: str) -> tuple[str, Range]:
    """`S=1..512` -> ("S", (1, 512)); `S=16..` has no upper bound; `N=8` pins N."""
    name, sep, sizes = text.partition("=")
    low, dots, high = sizes.partition("..")
    try:
        if not sep or not name:
            raise ValueError
        bounds = (int(low), int(high) if high else None) if dots else (int(sizes), int(sizes))
    except ValueError:
        raise EmberError(
            f"--dim expects NAME=LOW..HIGH, NAME=LOW.. or NAME=SIZE (e.g. S=1..512), got '{text}'"
        ) from None
    return name, bounds


def _dims(args: argparse.Namespace) -> dict[str, Range]:
    """The --dim ranges, over those a `.pt2` model's export proved (`_model`
    reads them first)."""
    return {**getattr(args, "exported_ranges", {}), **dict(parse_dim_range(s) for s in args.dim)}


def parse_specialize(text: str) -> tuple[str, list[int]]:
    """`N=1,8` -> ("N", [1, 8])."""
    name, sep, sizes = text.partition("=")
    try:
        if not sep or not name:
            raise ValueError
        values = [int(size) for size in sizes.split(",")]
    except ValueError:
        raise EmberError(
            f"--specialize expects NAME=SIZE,SIZE,... (e.g. N=1,8), got '{text}'"
        ) from None
    if any(size < 0 for size in values):
        raise EmberError(f"--specialize {name}: sizes cannot be negative, got '{sizes}'")
    return name, values


def _specialize(args: argparse.Namespace) -> dict[str, list[int]] | str:
    """`--specialize`'s sizes per symbol, or `auto` (also without the flag) or `none`."""
    words = [text for text in args.specialize if text in ("auto", "none")]
    if words:
        if len(args.specialize) > 1:
            raise EmberError(f"--specialize {words[0]} cannot be combined with other --specialize")
        return words[0]
    if not args.specialize:
        return "auto"
    sizes: dict[str, list[int]] = {}
    for text in args.specialize:
        name, values = parse_specialize(text)
        sizes.setdefault(name, []).extend(v for v in values if v not in sizes.get(name, []))
    return sizes


def _model(args: argparse.Namespace) -> ModelSource:
    """The model the command names (its path, so that diagnostics name the
    file), or the loaded model with random weights if asked for; a `.pt2`
    file (`torch.export.save`) exported to ONNX, its symbols' ranges kept
    for `_dims`."""
    from ember.frontends.onnx.loader import load_model
    from ember.frontends.torch import is_pt2_path, load_pt2, onnx_from_torch
    from ember.models import resolve_model, with_random_weights

    path: ModelSource = resolve_model(args.model)
    if is_pt2_path(path):
        path, args.exported_ranges = onnx_from_torch(load_pt2(path))
    if args.random_weights is None:
        return path
    return with_random_weights(load_model(path), args.random_weights)


def _progress(args: argparse.Namespace) -> CompileReport:
    """A report that prints each compile stage and its seconds on stderr
    (and, with `--time-passes`, each pass's when the command ends)."""
    if args.quiet:
        report = CompileReport()
        args.reports.append(report)
        return report
    interactive = sys.stderr.isatty()

    def tell(stage: str, seconds: float | None) -> None:
        if seconds is None:
            if interactive:  # overwritten by the line with the time
                print(f"ember: {stage} ...", end="\r", file=sys.stderr, flush=True)
            return
        print(f"ember: {stage:<12} {seconds:7.2f}s", file=sys.stderr, flush=True)

    report = CompileReport(listener=tell)
    args.reports.append(report)
    return report


def print_pass_times(report: CompileReport, stream: TextIO) -> None:
    """The seconds of each pass and LLVM phase, slowest first, wall and CPU
    (this process's; LLVM's phases run in its codegen workers, so they show
    wall time only), with their shares of the total."""
    total = sum(report.pass_seconds.values()) or 1.0
    print(f"{'pass':<36} {'wall s':>8} {'cpu s':>8} {'share':>6}", file=stream)
    for name, seconds in sorted(report.pass_seconds.items(), key=lambda item: -item[1]):
        cpu = report.pass_cpu_seconds.get(name)
        cpu_text = f"{cpu:8.3f}" if cpu is not None else f"{'-':>8}"
        print(f"{name:<36} {seconds:8.3f} {cpu_text} {100 * seconds / total:5.1f}%", file=stream)
    cpu_total = sum(report.pass_cpu_seconds.values())
    print(f"{'total':<36} {total:8.3f} {cpu_total:8.3f}", file=stream)


def _import(args: argparse.Namespace) -> int:
    from ember.frontends.onnx import import_onnx
    from ember.printing import elide_large_constants, print_module

    module = import_onnx(_model(args), _shape_overrides(args), _dims(args))
    if args.elide_large_constants is not None:
        elide_large_constants(module, args.elide_large_constants)
    if args.output:
        try:
            with written(args.output) as stream:
                print_module(module, stream, args.print_debuginfo)
        except OSError as error:
            raise EmberError(f"{args.output}: cannot write: {error.strerror}") from None
    else:
        print_module(module, sys.stdout, args.print_debuginfo)
    return 0


def _load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    inputs = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            raise EmberError(f"--input expects NAME=FILE.npy, got '{spec}'")
        try:
            inputs[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as error:
            raise EmberError(f"--input {name}: cannot load '{path}': {error}") from None
        if not isinstance(inputs[name], np.ndarray):  # an .npz archive
            raise EmberError(f"--input {name}: '{path}' holds several arrays, not one .npy array")
    return inputs


def _symbolic_inputs(
    func: FuncOp, given: dict[str, np.ndarray], seed: int
) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """For a model with symbolic dims: the given inputs, checked by the
    entry check (which binds the symbols' sizes from them), plus seeded
    random ones at the shapes those sizes give; returns them and the sizes."""
    from ember.dialects.graph.symbolic import SymExpr, symbols_of
    from ember.dialects.graph.types import format_shape
    from ember.inputs import random_array
    from ember.targets.versions import EntryCheck, model_ranges, symbolic_specs

    specs, _ = symbolic_specs(func)
    _check_input_names(func, given)
    known = [spec for spec in specs if spec.name in given]
    for spec in known:
        array = given[spec.name]
        if array.dtype != spec.dtype or array.ndim != len(spec.dims):
            raise _file_mismatch(spec.name, f"{spec.dtype}[{format_shape(spec.dims)}]", array)
    sizes = EntryCheck(known, model_ranges(func)).bind([given[spec.name] for spec in known])
    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for spec in specs:
        if spec.name in given:
            inputs[spec.name] = given[spec.name]
            continue
        unbound = sorted(symbols_of(spec.dims) - set(sizes))
        if unbound:
            raise EmberError(
                f"input {spec.describe()}: no --input gives {', '.join(unbound)}; give the size with "
                f"--dim {unbound[0]}=SIZE, --input-shape {spec.name}=DIMS or an array with "
                f"--input {spec.name}=FILE.npy"
            )
        shape = [d.evaluate(sizes) if isinstance(d, SymExpr) else d for d in spec.dims]
        inputs[spec.name] = random_array(shape, spec.dtype, rng)
    return inputs, sizes


def _file_mismatch(name: str, shown: str, array: np.ndarray) -> EmberError:
    from ember.dialects.graph.types import format_shape

    return EmberError(
        f"--input {name}: the model takes {shown}, the file holds "
        f"{array.dtype}[{format_shape(list(array.shape))}]"
    )


def _check_input_names(func: FuncOp, given: dict[str, np.ndarray]) -> None:
    from ember.reference import input_names

    unknown = sorted(set(given) - set(input_names(func)))
    if unknown:
        raise EmberError(
            f"--input names unknown input(s) {', '.join(unknown)}; "
            f"the model takes {', '.join(input_names(func))}"
        )


def _make_inputs(func: FuncOp, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The given inputs, checked against the model, plus seeded random ones
    for the rest."""
    from ember.dialects.graph.dims import symbolic_shape
    from ember.dialects.graph.symbolic import symbols_of
    from ember.dialects.graph.types import DYNAMIC, format_shape, numpy_dtype, shape_of
    from ember.inputs import random_array
    from ember.reference import input_names

    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for name, arg in zip(input_names(func), func.body.block.args):
        shape, dtype = shape_of(arg.type), numpy_dtype(arg.type.element_type)  # type: ignore[attr-defined]
        shown = f"{dtype}[{format_shape(symbolic_shape(arg.type))}]"  # type: ignore[arg-type]
        if name in given:
            array = given[name]
            fits = len(array.shape) == len(shape) and all(
                d in (DYNAMIC, n) for d, n in zip(shape, array.shape)
            )
            if array.dtype != dtype or not fits:
                raise _file_mismatch(name, shown, array)
            inputs[name] = array
        elif DYNAMIC in shape:
            symbols = sorted(symbols_of(symbolic_shape(arg.type)))  # type: ignore[arg-type]
            pin = f"--dim {symbols[0]}=SIZE, " if symbols else ""
            raise EmberError(
                f"input '{name}' is {shown}; give its size with {pin}"
                f"--input-shape {name}=DIMS or an array with --input {name}=FILE.npy"
            )
        else:
            inputs[name] = random_array(shape, dtype, rng)
    _check_input_names(func, given)
    return inputs


def describe_array(array: np.ndarray) -> str:
    """Summary statistics that show whether an output's values differ."""
    if array.size == 0:
        return "empty"
    values = array.astype(np.float64)
    finite = values[np.isfinite(values)]
    text = (f"mean={float(np.mean(values)):.6g} std={float(np.std(values)):.3g} "
            f"min={float(np.min(values)):.6g} max={float(np.max(values)):.6g}")  # fmt: skip
    if finite.size != values.size:
        text += f" non-finite={values.size - finite.size}"
    if values.size > 1 and np.all(values == values.flat[0]):
        text += f" (all {values.size} values equal)"
    return text


def _run(args: argparse.Namespace) -> int:
    if _is_compiled_directory(args.model):
        return _run_loaded(args)
    import ember.reference
    from ember.frontends.onnx import import_onnx
    from ember.reference import entry_function, output_names
    from ember.targets.calls import has_symbols
    from ember.targets.registry import target_named
    from ember.targets.versions import specialized

    model = _model(args)
    given = _load_inputs(args.input)
    report = _progress(args)
    options = _options(args)
    if keeps_compiled(args.target) and not args.no_cache:
        from ember.targets.tuning_records import with_best_schedules

        options = with_best_schedules(options)  # read once: for the cache's key and the compile
    found = _run_cached(args, model, given, report, options)
    if found is not None:
        inputs, outputs, names = found
        _print_outputs(args, names, outputs)
        return _check_against_onnxruntime(model, inputs, outputs, names) if args.check else 0
    with report.stage("import"):
        module = import_onnx(model, _shape_overrides(args), _dims(args))
    func = entry_function(module)
    names = output_names(func)
    if has_symbols(func):
        inputs, sizes = _symbolic_inputs(func, given, args.seed)
    else:
        inputs, sizes = _make_inputs(func, given, args.seed), {}
    check_reference = False
    if args.target == REFERENCE:
        with report.stage("reference"):
            outputs = ember.reference.run(specialized(module, sizes) if sizes else module, inputs)
    else:
        target = target_named(args.target)
        check_reference = args.check and target.check_against_reference
        reference = module.clone() if check_reference else None
        if args.fusion_report:
            _print_fusion_report(args, module)
        compiled = _compile_for_run(target, module, sizes, report, options, args, model)
        with report.stage("run"):
            outputs = compiled.run(inputs)
    _print_outputs(args, names, outputs)
    if not args.check:
        return 0
    status = _check_against_onnxruntime(model, inputs, outputs, names)
    if check_reference:
        expected = ember.reference.run(reference, inputs)
        status = max(status, _compare("reference", outputs, expected, names))
    return status


def _print_outputs(args: argparse.Namespace, names: Sequence[str],
                   outputs: Sequence[np.ndarray]) -> None:  # fmt: skip
    """Prints each output's summary; with `--output FILE.npz`, saves them
    there by their ONNX names (`np.load(FILE)[name]`)."""
    print(f"{args.model}: {len(outputs)} output(s) from {args.target}")
    for name, array in zip(names, outputs):
        print(f"  {name}: {array.dtype}{list(array.shape)} {describe_array(array)}")
    if args.output is not None:
        try:
            with written(args.output, "wb") as stream, zipfile.ZipFile(stream, "w") as archive:
                for name, array in zip(names, outputs):  # as np.savez, for any name
                    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
        except OSError as error:
            raise EmberError(f"--output {args.output}: cannot write: {error.strerror}") from None
        print(f"  outputs saved: {args.output}")


def _is_compiled_directory(model: str) -> bool:
    """Whether MODEL names a directory (`ember compile -o DIR` output)."""
    from pathlib import Path

    return Path(model).is_dir()


def _loaded(args: argparse.Namespace) -> Any:
    """The model of the directory MODEL, loaded back (`ember.load`), after
    refusing the options that only apply to compiling."""
    from ember.load_back import load

    compiling = [flag for flag, given in (
        ("--input-shape", args.input_shape), ("--dim", args.dim),
        ("--random-weights", args.random_weights is not None), ("-O", args.opt_level != 2),
        ("--layout", args.layout is not None), ("--disable-pass", args.disable_pass),
        ("--fusion-report", args.fusion_report), ("--target", not keeps_compiled(args.target)),
        ("--check", getattr(args, "check", False)), ("--profile", getattr(args, "profile", False)),
        ("--trace", getattr(args, "trace", None) is not None),
        ("--plot", getattr(args, "plot", None) is not None),
        ("--html", getattr(args, "html", None) is not None),
        ("--dry-run", getattr(args, "dry_run", False)),
    ) if given]  # fmt: skip
    if compiling:
        raise EmberError(f"{args.model} is a compiled model's directory: {', '.join(compiling)} "
                         "applies to compiling an ONNX model")  # fmt: skip
    report = _progress(args)
    return load(args.model, args.threads, report)


def _loaded_inputs(model: Any, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The given inputs plus seeded random ones for the static inputs of a
    loaded model (an input with symbolic dims must be given)."""
    from ember.inputs import random_array

    rng = np.random.default_rng(seed)
    names = [spec.name for spec in model.inputs]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise EmberError(f"--input names unknown input(s) {', '.join(unknown)}; the model takes "
                         f"{', '.join(names)}")  # fmt: skip
    inputs = {}
    for spec in model.inputs:
        if spec.name in given:
            inputs[spec.name] = given[spec.name]
        elif all(isinstance(d, int) for d in spec.dims):
            inputs[spec.name] = random_array(list(spec.dims), spec.dtype, rng)
        else:
            raise EmberError(f"input {spec.describe()} has symbolic dims: give it with "
                             f"--input {spec.name}=FILE.npy")  # fmt: skip
    return inputs


def _run_loaded(args: argparse.Namespace) -> int:
    """`ember run DIR`: the compiled model of DIR on given or random inputs."""
    model = _loaded(args)
    inputs = _loaded_inputs(model, _load_inputs(args.input), args.seed)
    _print_outputs(args, [spec.name for spec in model.outputs], model.run(inputs))
    return 0


def _bench_loaded(args: argparse.Namespace) -> int:
    """`ember bench DIR`: the latency of the compiled model of DIR (no
    onnxruntime beside it: the directory holds no ONNX model)."""
    import statistics

    from ember.benchmarking import round_blocks, timed_calls

    model = _loaded(args)
    inputs = _loaded_inputs(model, {}, 0)
    for _ in range(3):
        model.run(inputs)
    times: list[float] = []
    for block in round_blocks(args.runs, 4):
        timed_calls(lambda: model.run(inputs), block, times, True)
    threads = args.threads or resolve_threads(None)
    print(f"{args.model}: load {model.report.total_seconds:.3f}s; ember "
          f"{statistics.median(times) * 1e3:.3f} ms (median of {args.runs} runs, "
          f"{threads} thread(s))")  # fmt: skip
    return 0


def _run_cached(args: argparse.Namespace, model: ModelSource, given: dict[str, np.ndarray],
                report: CompileReport, options: Options) -> tuple[dict[str, np.ndarray], list[np.ndarray], list[str]] | None:  # fmt: skip
    """`ember run` of a model the compile cache holds, its inputs given or
    static: loaded and run without importing the model; its inputs,
    outputs and output names, or None where that does not apply."""
    if not keeps_compiled(args.target) or args.no_cache or args.fusion_report:
        return None
    from ember.cache import CacheRequest, cached

    request = CacheRequest(model, options, _shape_overrides(args), _dims(args))
    compiled = cached(request, report)
    if compiled is None or not all(spec.name in given or all(isinstance(d, int) for d in spec.dims)
                                   for spec in compiled.inputs):  # fmt: skip
        return None
    inputs = _loaded_inputs(compiled, given, args.seed)
    with report.stage("run"):
        outputs = compiled.run(inputs)
    return inputs, outputs, [spec.name for spec in compiled.outputs]


def _compile_for_run(target: Any, module: Any, sizes: dict[str, int], report: CompileReport,
                     options: Options, args: argparse.Namespace, model: ModelSource) -> Any:  # fmt: skip
    """The model compiled for `target` as `ember.compile` would: a symbolic
    model once for every size (the generic version, whose entry check sees
    the inputs), or, where its ops do not all lower with symbolic sizes yet
    or the target compiles static shapes only, for these sizes (said on
    stderr). The CPU target looks it up in the compile cache first."""
    from ember.errors import InputDependentError
    from ember.targets.versions import specialized

    def compiled(build: Callable[[], Any], pinned: dict[str, int] | None = None) -> Any:
        if keeps_compiled(target.name) and not args.no_cache:
            from ember.cache import CacheRequest, compile_cached

            request = CacheRequest(model, options, _shape_overrides(args), _dims(args),
                                   extra={"sizes": pinned} if pinned else None)  # fmt: skip
            found = compile_cached(request, build, report)
            if found is not None:
                return found
        return target.compile(build(), report, options)

    if not sizes:
        return compiled(lambda: module)
    given = ", ".join(f"{n}={v}" for n, v in sorted(sizes.items()))
    if not target.versions:
        print(f"ember: compiled for {given} only: the {target.name} target compiles static "
              "shapes", file=sys.stderr)  # fmt: skip
        return target.compile(specialized(module, sizes), report, options)
    try:
        return compiled(module.clone)
    except InputDependentError as error:
        print(f"ember: compiled for {given} only: {error}", file=sys.stderr)
        return compiled(lambda: specialized(module, sizes), sizes)


def _options(args: argparse.Namespace) -> Options:
    from ember.targets.tuning_records import resolve_path

    layout = DEFAULT_LAYOUT if args.layout is None else args.layout
    records = resolve_path(getattr(args, "records", False))
    return Options(opt_level=args.opt_level, layout=layout, disabled=tuple(args.disable_pass),
                   threads=resolve_threads(getattr(args, "threads", None)),
                   arch=getattr(args, "arch", Options.arch),
                   emulate=getattr(args, "emulate", False),
                   records=str(records) if records is not None else "")  # fmt: skip


def _check_options(args: argparse.Namespace) -> None:
    """Options that would be silently ignored are mistakes."""
    if getattr(args, "target", "cpu") == REFERENCE and getattr(args, "threads", None):
        raise EmberError("--threads applies to --target cpu (the reference interpreter does not "
                         "run compiled code)")  # fmt: skip
    if getattr(args, "emulate", False):
        _check_emulates(args.target)
    if getattr(args, "opt_level", 2) == 2:
        return
    if args.layout is not None:
        raise EmberError(f"--layout applies at -O2 only (graph-layout does not run at "
                         f"-O{args.opt_level})")  # fmt: skip
    if args.fusion_report:
        raise EmberError(f"--fusion-report compares -O1 with -O2's fusion; it needs -O2, "
                         f"not -O{args.opt_level}")  # fmt: skip


def _check_emulates(name: str) -> None:
    """An EmberError unless target `name` has an emulation for `--emulate`
    (`Target.emulates`); the message lists the targets that do."""
    from ember.targets.registry import target_named

    if name != REFERENCE and target_named(name).emulates:
        return
    emulating = [n for n in target_names() if target_named(n).emulates]
    raise EmberError(f"--emulate applies to targets that run kernels on a device "
                     f"({', '.join(emulating)}); --target {name} has no emulation")  # fmt: skip


def _print_fusion_report(args: argparse.Namespace, module: Any) -> None:
    from ember.fusion_report import fusion_report

    options = _options(args)
    print(fusion_report(module, options.layout, options.disabled).format(args.model))


def _compile(args: argparse.Namespace) -> int:
    from ember.deploy import compile_to_directory
    from ember.frontends.onnx import import_onnx
    from ember.targets.registry import target_named

    shapes = _shape_overrides(args)
    model = _model(args)
    if args.fusion_report:
        _print_fusion_report(args, import_onnx(model, shapes, _dims(args)))
    if args.html is not None and target_named(args.target).cycle_model:
        # Compiled outside the pass runner (the NPU): explore watches a compile of its own.
        from ember.explore import explore

        explore(model, args.html, args.target, _options(args), name=args.model,
                input_shapes=shapes, dims=_dims(args), report=_progress(args))  # fmt: skip
        print(f"report: {args.html}")
        args.html = None
    report = _html_report(args)
    deployed = compile_to_directory(model, args.output, args.name, shapes, _options(args),
                                    report, dims=_dims(args),
                                    specialize=_specialize(args), target=args.target)  # fmt: skip
    for path in deployed.files:
        print(path)
    if args.html is not None:
        _write_html(args, report)
    return 0


def _tune_cpu(args: argparse.Namespace) -> int:
    """`ember tune MODEL`: its CPU tasks listed or searched (`ember.tuning.command`)."""
    from ember.compiler import compile as ember_compile
    from ember.frontends.onnx import import_onnx
    from ember.targets.cpu.schedule.tasks import model_tasks
    from ember.tuning.command import run_tune

    model = _model(args)
    shapes, dims = _shape_overrides(args), _dims(args)
    options = Options(opt_level=args.opt_level, layout=args.layout or DEFAULT_LAYOUT,
                      disabled=tuple(args.disable_pass), threads=args.threads)  # fmt: skip

    def compile_model(records: bool | str) -> Any:
        return ember_compile(model, threads=args.threads, input_shapes=shapes, dims=dims,
                             opt_level=options.opt_level, layout=options.layout,
                             disabled=options.disabled, records=records, cache=False)  # fmt: skip

    return run_tune(args, model_tasks(import_onnx(model, shapes, dims), options), compile_model)


def _tune_npu(args: argparse.Namespace) -> int:
    """`ember tune MODEL --target npu`: its NPU tasks listed or searched in the
    cycle model (`ember.tuning.npu_command`)."""
    from ember.frontends.onnx import import_onnx
    from ember.tuning.npu_command import run_npu_tune

    module = import_onnx(_model(args), _shape_overrides(args), _dims(args))
    return run_npu_tune(args, module, Options(disabled=tuple(args.disable_pass)))


TUNERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "cpu": _tune_cpu,
    "npu": _tune_npu,
}
"""`ember tune --target`: the targets whose schedules it searches, and how."""


def _tune(args: argparse.Namespace) -> int:
    """`ember tune MODEL`: its tasks listed or searched, for `--target`."""
    return TUNERS[args.target](args)


def _explore(args: argparse.Namespace) -> int:
    """`ember explore MODEL -o report.html`: the model compiled, watched and
    (where the target profiles kernels) run; its report written."""
    from ember.explore import check_report_path, explore

    check_report_path(args.output)
    if args.fusion_report:
        _print_fusion_report(args, _imported(args))
    explore(_model(args), args.output, args.target, _options(args), name=args.model,
            runs=args.runs, input_shapes=_shape_overrides(args), dims=_dims(args),
            engine=args.layout_engine, report=_progress(args))  # fmt: skip
    print(f"report: {args.output}")
    return 0


def _imported(args: argparse.Namespace) -> Any:
    from ember.frontends.onnx import import_onnx

    return import_onnx(_model(args), _shape_overrides(args), _dims(args))


def _write_html(args: argparse.Namespace, report: CompileReport, profile: Any = None) -> None:
    """`--html FILE`: the explorer's report of the compile `report` watched."""
    from ember.explore import write_report
    from ember.explore.collect import exploration_of

    found = exploration_of(args.model, args.target, _options(args), report, profile)
    write_report(found, args.html)
    print(f"report: {args.html}")


def _html_report(args: argparse.Namespace) -> CompileReport:
    """The progress report, watched pass by pass when `--html` asks for it
    (whose file is checked first, before the compile)."""
    report = _progress(args)
    if getattr(args, "html", None) is not None:
        from ember.explore import check_report_path
        from ember.explore.collect import watched_report

        check_report_path(args.html)
        watched_report(report)
    return report


def _bench_cycle_model(args: argparse.Namespace, target: Any) -> int:
    """The per-layer cycles of the model on a simulated device (its cycle
    model's, which do not depend on the data), and with --plot their picture."""
    from ember.frontends.onnx import import_onnx

    if args.profile or args.trace is not None:
        flag = "--profile" if args.profile else "--trace"
        raise EmberError(f"{flag} times CPU kernels; on the {target.name} target the table "
                         "has every layer")  # fmt: skip
    if args.plot is not None:
        from ember.roofline import check_plot_target

        check_plot_target(args.plot)
    if args.html is not None:  # the NPU compiles outside the pass runner: explore watches it
        from ember.explore import explore

        compiled = explore(_model(args), args.html, args.target, _options(args), name=args.model,
                           input_shapes=_shape_overrides(args), dims=_dims(args),
                           report=_progress(args)).compiled  # fmt: skip
        print(f"report: {args.html}")
    else:
        report = _progress(args)
        with report.stage("import"):
            module = import_onnx(_model(args), _shape_overrides(args), _dims(args))
        compiled = target.compile(module, report, _options(args))
    print(f"{args.model} {target.performance_table(compiled)}")
    if args.plot is not None:
        from ember.npu_plot import plot_cycles

        plot_cycles(compiled.report, args.plot, title=args.model)
        print(f"cycles: {args.plot}")
    return 0


def _bench_dry_run(args: argparse.Namespace, target: Any) -> int:
    """The target's dry-run table (`Target.dry_run_table`): compiled and
    checked by the device's tools, nothing run; an error for a target
    without one, or with options that time runs."""
    from ember.frontends.onnx import import_onnx

    if (args.emulate or args.profile or args.trace is not None or args.plot is not None
            or args.html is not None):  # fmt: skip
        raise EmberError("--dry-run runs nothing: --emulate, --profile, --trace, --plot and "
                         "--html need runs")  # fmt: skip
    report = _progress(args)
    with report.stage("import"):
        module = import_onnx(_model(args), _shape_overrides(args), _dims(args))
    table = target.dry_run_table(module, report, _options(args))
    if table is None:
        raise EmberError(f"--dry-run: the {target.name} target has no dry run ({target.summary}); "
                         "a GPU target has one: see 'ember bench --help'")  # fmt: skip
    print(f"{args.model}: {target.name} dry run, nothing run\n{table}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ember.benchmarking import benchmark_model
    from ember.targets.registry import target_named

    if _is_compiled_directory(args.model):
        return _bench_loaded(args)
    target = target_named(args.target)
    if args.dry_run:
        return _bench_dry_run(args, target)
    if target.cycle_model:
        return _bench_cycle_model(args, target)
    if args.plot is not None:
        from ember.roofline import check_plot_target

        if not args.profile:
            raise EmberError("--plot draws the profile's roofline: add --profile")
        check_plot_target(args.plot)  # before the compile, not after it
    options = replace(_options(args), profile=args.profile or args.trace is not None,
                      trace=args.trace is not None)  # fmt: skip
    report = _html_report(args)
    no_cache = args.no_cache or args.html is not None  # a cache hit compiles nothing to watch
    result = benchmark_model(_model(args), threads=resolve_threads(args.threads), runs=args.runs,
                             input_shapes=_shape_overrides(args), dims=_dims(args),
                             options=options, report=report,
                             target=args.target, cache=False if no_cache else None)  # fmt: skip
    shown = result if args.profile else replace(result, profile=None)
    print(shown.format(args.model))
    if args.html is not None:
        _write_html(args, report, result.profile)
    if args.trace is not None and result.trace is not None:
        from ember.targets.cpu.trace import write_trace

        try:
            with written(args.trace) as stream:
                write_trace(result.trace, stream)
        except OSError as error:
            raise EmberError(f"{args.trace}: cannot write: {error.strerror}") from None
        print(f"trace: {args.trace} (open it in https://ui.perfetto.dev or chrome://tracing)")
    if args.plot is not None and result.profile is not None:
        from ember.roofline import plot_roofline

        plot_roofline(result.profile, args.plot, title=args.model)
        print(f"roofline: {args.plot}")
    return 0


def _check_against_onnxruntime(
    model: ModelSource, inputs: dict[str, np.ndarray], outputs: list[np.ndarray], names: list[str]
) -> int:
    from ember.benchmarking import onnxruntime_session, run_onnxruntime
    from ember.frontends.onnx.loader import load_model

    expected = run_onnxruntime(onnxruntime_session(load_model(model)), inputs)
    return _compare("onnxruntime", outputs, expected, names)


def _compare(peer: str, outputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
             names: Sequence[str]) -> int:  # fmt: skip
    """Prints each output's error against `peer`'s; 1 if any is off."""
    worst = 0
    label = "" if peer == "onnxruntime" else f" against {peer}"
    for name, got, want in zip(names, outputs, expected):
        if got.shape != want.shape:
            print(f"  check {name}{label}: shape {list(got.shape)}, {peer} {list(want.shape)} "
                  "-> MISMATCH")  # fmt: skip
            worst = 1
            continue
        error = np.abs(got.astype(np.float64) - want)
        rel = error / np.maximum(np.abs(want), 1e-12)
        ok = np.allclose(got, want, rtol=CHECK_RTOL, atol=CHECK_ATOL, equal_nan=True)
        worst = max(worst, 0 if ok else 1)
        print(f"  check {name}{label}: max abs error {float(np.nanmax(error, initial=0)):.3g}, "
              f"max rel error {float(np.nanmax(rel, initial=0)):.3g} (tolerance: |error| <= "
              f"{CHECK_ATOL:g} + {CHECK_RTOL:g} x |expected|) -> "
              f"{'ok' if ok else 'MISMATCH'}")  # fmt: skip
    return worst


def _cache(args: argparse.Namespace) -> int:
    """`ember cache info` lists the compile cache's entries; `clear` empties it."""
    import time

    from ember.cache import CompileCache

    cache = CompileCache()
    if args.action == "clear":
        print(f"{cache.root}: removed {cache.clear()} entries")
        return 0
    entries = cache.listing()
    total = sum(e.bytes for e in entries)
    print(f"{cache.root}: {len(entries)} entries, {total / 2**20:.1f} MiB of "
          f"{cache.limit / 2**20:.0f} MiB (EMBER_CACHE_SIZE)")  # fmt: skip
    for entry in reversed(entries):  # most recently used first
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.used))
        print(f"  {entry.key}  {entry.bytes / 2**20:8.1f} MiB  used {used}  {entry.source}")
    return 0


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _thread_count(text: str) -> int:
    try:
        return resolve_threads(int(text))
    except (ValueError, EmberError):
        raise argparse.ArgumentTypeError(
            f"must be an integer from 1 to {MAX_THREADS}, got '{text}'"
        ) from None


def _threads_flag(command: argparse.ArgumentParser, extra: str = "") -> None:
    command.add_argument("--threads", type=_thread_count, default=None, metavar="N",
                         help=f"threads for parallel loops{extra} (default: every core)")  # fmt: skip


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def installed(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    return (f"ember {installed('ember')} (xDSL {installed('xdsl')}, onnx {installed('onnx')}, "
            f"llvmlite {installed('llvmlite')}, Python {sys.version.split()[0]})")  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line and status 1, like every other mistake."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ember", description="The Ember model compiler.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)

    def model_command(
        name: str, help_text: str, handler: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help_text)
        command.set_defaults(handler=handler)
        command.add_argument(
            "model",
            help="ONNX file, .pt2 file (torch.export.save), or light:NAME for a model shipped with "
            "onnx (run and bench: also a directory `ember compile` wrote)",
        )
        command.add_argument("--input-shape", action="append", default=[], metavar="NAME=DIMS",
                             help="override an input's shape, e.g. data=1x3x224x224 "
                                  "(? = unknown)")  # fmt: skip
        command.add_argument("--dim", action="append", default=[], metavar="NAME=RANGE",
                             help="the sizes a symbolic dim may take, e.g. S=1..512 or S=16.. "
                                  "(no upper bound); N=8 pins N to 8")  # fmt: skip
        command.add_argument("--random-weights", type=_non_negative, metavar="SEED",
                             help="replace the model's float weights by random values drawn "
                                  "with this seed (the light models ship placeholder weights)")  # fmt: skip
        command.add_argument("-q", "--quiet", action="store_true",
                             help="do not report compile stages on stderr")  # fmt: skip
        command.add_argument("--time-passes", action="store_true",
                             help="print each pass's and LLVM phase's seconds (wall, CPU) "
                                  "on stderr after compiling")  # fmt: skip
        return command

    def optimisation_flags(command: argparse.ArgumentParser) -> None:
        command.add_argument("-O", dest="opt_level", type=int, choices=OPT_LEVELS, default=2,
                             help="graph optimisation level: 0 none, 1 clean-up, 2 + fusion "
                                  "and layout (default)")  # fmt: skip
        command.add_argument("--layout", choices=LAYOUTS, default=None,
                             help=f"activation layout of convolutions at -O2 (default "
                                  f"{DEFAULT_LAYOUT}; none keeps NCHW)")  # fmt: skip
        command.add_argument("--disable-pass", action="append", default=[], metavar="PASS",
                             choices=OPTIONAL_PASSES, help="leave an optimisation pass out: "
                             f"{', '.join(OPTIONAL_PASSES)}")  # fmt: skip
        command.add_argument("--fusion-report", action="store_true",
                             help="print ops and kernels at -O1 and at -O2")  # fmt: skip

    import_command = model_command("import", "print the model as graph IR", _import)
    import_command.add_argument(
        "--elide-large-constants", nargs="?", type=_non_negative, const=16, default=None,
        metavar="N",
        help="print constants of more than N elements (default 16) as dense_resource<__elided__>",
    )  # fmt: skip
    import_command.add_argument("--print-debuginfo", action="store_true",
                                help="print each op's location: the model node it came from")  # fmt: skip
    import_command.add_argument("-o", "--output", help="write the IR to this file")

    run_command = model_command("run", "run the model on given or random inputs", _run)
    run_command.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                             help="an input from a .npy file (its shape gives the "
                                  "sizes of the model's symbolic dims)")  # fmt: skip
    run_command.add_argument("--target", choices=[*target_names(), REFERENCE], default="cpu",
                             help="cpu: compiled native code; cuda: an NVIDIA GPU (or, with "
                                  "--emulate, its kernels on this CPU); npu: the NPU simulator "
                                  "(and the CPU for the rest); reference: the NumPy "
                                  "interpreter")  # fmt: skip
    _device_flags(run_command)
    run_command.add_argument("--check", action="store_true",
                             help=f"compare the outputs with onnxruntime (ok where |error| <= "
                                  f"{CHECK_ATOL:g} + {CHECK_RTOL:g} x |expected|)")  # fmt: skip
    run_command.add_argument("--output", metavar="FILE.npz", default=None,
                             help="save the outputs, by their ONNX names, as a NumPy .npz "
                                  "archive")  # fmt: skip
    run_command.add_argument("--seed", type=_non_negative, default=0,
                             help="seed of generated inputs")  # fmt: skip
    optimisation_flags(run_command)
    _threads_flag(run_command)
    _no_cache_flag(run_command)
    _records_flag(run_command)

    compile_command = model_command(
        "compile", "compile ahead of time: .so, C header, weights", _compile
    )
    compile_command.add_argument("-o", "--output", required=True, help="output directory")
    compile_command.add_argument("--name", default="model", help="C name prefix (default: model)")
    compile_command.add_argument("--target", choices=target_names(), default="cpu",
                                 help="cuda: PTX, a cubin (ptxas), the weights and a launch plan; "
                                      "npu: the NPU programs, DRAM images and a manifest")  # fmt: skip
    _arch_flag(compile_command)
    compile_command.add_argument("--specialize", action="append", default=[], metavar="NAME=SIZES",
                                 help="a model with symbolic dims: also compile static versions "
                                      "for these sizes of a symbol, e.g. N=1,8 (give every "
                                      "symbol; a call at other sizes runs the generic version); "
                                      "default auto: one version with each symbol at the low "
                                      "end of its range; none: the generic version alone")  # fmt: skip
    optimisation_flags(compile_command)
    _threads_flag(compile_command, "; the library's NAME_set_threads changes it at run time")
    _records_flag(compile_command)
    _html_flag(compile_command)

    bench_command = model_command("bench", "latency of Ember and onnxruntime side by side", _bench)
    _threads_flag(bench_command, ", Ember's and onnxruntime's alike")
    bench_command.add_argument("--runs", type=_positive, default=20, help="timed runs per engine")
    bench_command.add_argument("--profile", action="store_true",
                               help="time each kernel function of Ember's code: calls, time, "
                                    "GFLOP/s, %% of the measured peak")  # fmt: skip
    bench_command.add_argument("--trace", metavar="FILE.json", default=None,
                               help="write a Chrome trace of --runs more runs: one track per "
                                    "thread, one slice per kernel call and per parallel chunk "
                                    "(open it in Perfetto or chrome://tracing)")  # fmt: skip
    bench_command.add_argument("--plot", metavar="FILE.png", default=None,
                               help="with --profile: draw the kernels' roofline; with --target "
                                    "npu: the cycles per layer (needs matplotlib: pip install "
                                    "'ember[plot]')")  # fmt: skip
    bench_command.add_argument("--target", choices=target_names(), default="cpu",
                               help="cuda: latency on an NVIDIA GPU (needs cuda-bindings and a "
                                    "GPU); npu: cycles and utilisation per layer on the NPU")  # fmt: skip
    bench_command.add_argument("--dry-run", action="store_true",
                               help="run nothing: compile, check with the device's tools and "
                                    "print each kernel launch's resources (--target cuda: grid, "
                                    "block, registers, shared memory, spills from ptxas)")  # fmt: skip
    _device_flags(bench_command, " (bench: times the emulator, not a GPU)")
    optimisation_flags(bench_command)
    _no_cache_flag(bench_command)
    _records_flag(bench_command)
    _html_flag(bench_command, " (with --profile: the kernels' times and roofline)")

    explore_command = model_command(
        "explore", "write an HTML report of what the compiler did (docs/explore.md)", _explore
    )
    explore_command.add_argument("-o", "--output", required=True, metavar="FILE.html",
                                 help="the report: one self-contained HTML file")  # fmt: skip
    explore_command.add_argument("--target", choices=target_names(), default="cpu",
                                 help="npu: also the cycles per layer; cpu: the kernels' profile "
                                      "and roofline")  # fmt: skip
    explore_command.add_argument("--runs", type=_positive, default=10,
                                 help="runs that time the kernels (default 10)")  # fmt: skip
    explore_command.add_argument("--layout-engine", choices=("auto", "dot", "layered"),
                                 default="auto",
                                 help="how the graphs are laid out: Graphviz dot where it is on "
                                      "PATH (auto), or the built-in layered layout")  # fmt: skip
    _device_flags(explore_command, "; explore: compiles for it, no GPU needed")
    optimisation_flags(explore_command)
    _threads_flag(explore_command)

    tune_command = model_command(
        "tune", "search schedules for the model's ops by measuring them (docs/tuning.md)", _tune
    )
    tune_command.add_argument("--target", choices=list(TUNERS), default="cpu",
                              help="the target whose schedules are searched: cpu (measured on "
                                   "this CPU) or npu (in the NPU's cycle model)")  # fmt: skip
    tune_command.add_argument("--list", action="store_true",
                              help="print the model's tasks and what the records hold; measure "
                                   "nothing")  # fmt: skip
    tune_command.add_argument("--records", metavar="FILE", default=None,
                              help="the tuning records to read and add to (default: "
                                   "$EMBER_RECORDS, else the user's data directory)")  # fmt: skip
    tune_command.add_argument("--trials", type=_positive, default=64,
                              help="measurements per task at most (default 64)")  # fmt: skip
    tune_command.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                              help="stop after this many seconds (default: when every task has "
                                   "had its trials)")  # fmt: skip
    tune_command.add_argument("--batch", type=_positive, default=8,
                              help="candidates measured per round of a task (default 8)")  # fmt: skip
    tune_command.add_argument("--threads", type=_thread_count, default=1,
                              help="threads the model will run on (default 1)")  # fmt: skip
    tune_command.add_argument("--no-check", action="store_true",
                              help="do not time the whole model with and without the records "
                                   "at the end")  # fmt: skip
    tune_command.add_argument("--seed", type=_non_negative, default=0,
                              help="seed of the search's random choices")  # fmt: skip
    where = tune_command.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                       help="measure on the workers of this Dask scheduler")  # fmt: skip
    where.add_argument("--local-cluster", type=_positive, default=0, metavar="N",
                       help="measure on a Dask LocalCluster of N worker processes here")  # fmt: skip
    where.add_argument("--in-process", action="store_true",
                       help="measure in this process (no worker process; a crash ends the "
                            "search)")  # fmt: skip
    optimisation_flags(tune_command)

    cache_command = commands.add_parser(
        "cache", help="the compile cache: info lists its entries, clear removes them"
    )
    cache_command.set_defaults(handler=_cache)
    cache_command.add_argument("action", choices=("info", "clear"))
    return parser


def _html_flag(command: argparse.ArgumentParser, extra: str = "") -> None:
    command.add_argument("--html", metavar="FILE.html", default=None,
                         help="also write the explorer's report of the compile: graph, passes, "
                              f"kernels, memory plan (docs/explore.md){extra}")  # fmt: skip


def _no_cache_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--no-cache", action="store_true",
                         help="compile without the compile cache (neither load nor store; "
                              "EMBER_CACHE=0 does the same)")  # fmt: skip


def _records_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--records", metavar="FILE", default=None,
                         help="apply the fastest schedules `ember tune` recorded in FILE "
                              "(default: $EMBER_RECORDS or the user's records, where they "
                              "exist; none: no records)")  # fmt: skip


def _device_flags(command: argparse.ArgumentParser, emulated: str = "") -> None:
    """`--emulate` and `--arch`, for the commands that run a model."""
    command.add_argument("--emulate", action="store_true",
                         help="--target cuda: run the GPU kernels on this CPU, every block and "
                              f"thread (no GPU needed; slow){emulated}")  # fmt: skip
    _arch_flag(command)


def _arch_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--arch", default=Options.arch, metavar="sm_XX",
                         help=f"--target cuda: the GPU's compute capability (default "
                              f"{Options.arch})")  # fmt: skip


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    """A warning (the compile cache's) as one line on stderr."""
    print(f"ember: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.reports = []
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            if hasattr(args, "opt_level"):
                _check_options(args)
            status = args.handler(args)
        if getattr(args, "time_passes", False):
            for report in args.reports:
                print_pass_times(report, sys.stderr)
        return status
    except EmberError as error:
        if sys.stderr.isatty():  # clear an unfinished progress line
            print("\033[K", end="", file=sys.stderr)
        print(f"error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["describe_array", "main"]
