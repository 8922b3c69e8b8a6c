"""The `ember` command: import, run, compile and benchmark models.

    ember import MODEL [--input-shape NAME=1x3x224x224] [--elide-large-constants] [-o OUT]
    ember run MODEL [--input NAME=file.npy] [--check] [--target cpu|reference] [-O2]
    ember compile MODEL -o OUT_DIR [--name NAME] [-O0|-O1|-O2] [--layout L] [--fusion-report]
    ember bench MODEL [--threads N] [--runs N] [-O2]

MODEL is an ONNX file or `light:NAME` (a model that ships with `onnx`).
User mistakes print `error: ...` and exit with status 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ember.compiler import OPTIONAL_PASSES, Options
from ember.errors import EmberError
from ember.passes.graph.optimize import DEFAULT_LAYOUT, LAYOUTS, OPT_LEVELS


def parse_shape_override(text: str) -> tuple[str, list[int]]:
    """`data=1x3x224x224` -> ("data", [1, 3, 224, 224]); `?` is an unknown dim."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise EmberError(f"--input-shape expects NAME=DIMS (e.g. data=1x3x224x224), got '{text}'")
    try:
        shape = [-1 if d in ("?", "-1") else int(d) for d in dims.split("x")] if dims else []
    except ValueError:
        raise EmberError(f"--input-shape: '{dims}' is not a shape like 1x3x224x224") from None
    return name, shape


def _import(args: argparse.Namespace) -> int:
    from ember.frontends.onnx import import_onnx
    from ember.models import resolve_model
    from ember.printing import elide_large_constants, print_module

    shapes = dict(parse_shape_override(s) for s in args.input_shape)
    module = import_onnx(resolve_model(args.model), shapes)
    if args.elide_large_constants is not None:
        elide_large_constants(module, args.elide_large_constants)
    if args.output:
        try:
            with open(args.output, "w") as stream:
                print_module(module, stream)
        except OSError as error:
            raise EmberError(f"{args.output}: cannot write: {error.strerror}") from None
    else:
        print_module(module, sys.stdout)
    return 0


def _load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    inputs = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            raise EmberError(f"--input expects NAME=FILE.npy, got '{spec}'")
        try:
            inputs[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise EmberError(f"--input {name}: cannot load '{path}': {error}") from None
    return inputs


def _make_inputs(func: object, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The given inputs, plus seeded random ones for the rest."""
    from ember.dialects.graph.types import numpy_dtype, shape_of
    from ember.inputs import random_array
    from ember.reference import input_names

    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for name, arg in zip(input_names(func), func.body.block.args):  # type: ignore[attr-defined]
        if name in given:
            inputs[name] = given.pop(name)
            continue
        shape = [1 if d < 0 else d for d in shape_of(arg.type)]
        dtype = numpy_dtype(arg.type.element_type)
        inputs[name] = random_array(shape, dtype, rng)
    if given:
        raise EmberError(f"--input names unknown input(s): {', '.join(given)}")
    return inputs


def _run(args: argparse.Namespace) -> int:
    import ember.reference
    from ember.compiler import compile_module
    from ember.frontends.onnx import import_onnx
    from ember.models import resolve_model
    from ember.reference import entry_function, output_names

    path = resolve_model(args.model)
    shapes = dict(parse_shape_override(s) for s in args.input_shape)
    start = time.perf_counter()
    module = import_onnx(path, shapes)
    func = entry_function(module)
    names = output_names(func)
    inputs = _make_inputs(func, _load_inputs(args.input), args.seed)
    if args.target == "reference":
        prepared = time.perf_counter()
        outputs = ember.reference.run(module, inputs)
    else:
        if args.fusion_report:
            _print_fusion_report(args, module)
        compiled = compile_module(module, options=_options(args))
        prepared = time.perf_counter()
        outputs = compiled.run(inputs)
    ran = time.perf_counter()
    verb = "imported" if args.target == "reference" else "compiled"
    print(f"{args.model}: {verb} in {prepared - start:.2f}s, ran ({args.target}) in "
          f"{ran - prepared:.3f}s")  # fmt: skip
    for name, array in zip(names, outputs):
        print(f"  {name}: {array.dtype}{list(array.shape)} mean={float(np.mean(array)):.6g} "
              f"min={float(np.min(array)):.6g} max={float(np.max(array)):.6g}")  # fmt: skip
    if args.check:
        return _check_against_onnxruntime(path, inputs, outputs, names)
    return 0


def _options(args: argparse.Namespace) -> Options:
    return Options(opt_level=args.opt_level, layout=args.layout, disabled=tuple(args.disable_pass))


def _print_fusion_report(args: argparse.Namespace, module: ModuleOp) -> None:
    from ember.fusion_report import fusion_report

    print(fusion_report(module, args.layout).format(args.model))


def _compile(args: argparse.Namespace) -> int:
    from ember.deploy import compile_to_directory
    from ember.frontends.onnx import import_onnx
    from ember.models import resolve_model

    shapes = dict(parse_shape_override(s) for s in args.input_shape)
    model = resolve_model(args.model)
    if args.fusion_report:
        _print_fusion_report(args, import_onnx(model, shapes))
    deployed = compile_to_directory(model, args.output, args.name, shapes, _options(args))
    for path in (deployed.library, deployed.header, deployed.weights, deployed.manifest):
        print(path)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from ember.benchmarking import benchmark_model
    from ember.models import resolve_model

    shapes = dict(parse_shape_override(s) for s in args.input_shape)
    result = benchmark_model(resolve_model(args.model), threads=args.threads, runs=args.runs,
                             input_shapes=shapes, options=_options(args))  # fmt: skip
    print(result.format(args.model))
    return 0


def _check_against_onnxruntime(
    path: str, inputs: dict[str, np.ndarray], outputs: list[np.ndarray], names: list[str]
) -> int:
    try:
        import onnxruntime
    except ImportError:
        raise EmberError("--check needs onnxruntime (pip install onnxruntime)") from None
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: unused-initializer warnings are noise here
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    expected = session.run(None, inputs)
    worst = 0
    for name, got, want in zip(names, outputs, expected):
        error = np.abs(got.astype(np.float64) - want)
        rel = error / np.maximum(np.abs(want), 1e-12)
        ok = np.allclose(got, want, rtol=1e-3, atol=1e-4)
        worst = max(worst, 0 if ok else 1)
        print(f"  check {name}: max abs error {float(error.max(initial=0)):.3g}, "
              f"max rel error {float(rel.max(initial=0)):.3g} -> {'ok' if ok else 'MISMATCH'}")  # fmt: skip
    return worst


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ember", description="The Ember model compiler.")
    commands = parser.add_subparsers(dest="command", required=True)

    def model_command(name: str, help_text: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help_text)
        command.add_argument("model", help="ONNX file, or light:NAME for a model shipped with onnx")
        command.add_argument(
            "--input-shape",
            action="append",
            default=[],
            metavar="NAME=DIMS",
            help="override an input's shape, e.g. data=1x3x224x224 (? = unknown)",
        )
        return command  # fmt: skip

    def optimisation_flags(command: argparse.ArgumentParser) -> None:
        command.add_argument("-O", dest="opt_level", type=int, choices=OPT_LEVELS, default=2,
                             help="graph optimisation level: 0 none, 1 clean-up, 2 + fusion "
                                  "(default)")  # fmt: skip
        command.add_argument("--layout", choices=LAYOUTS, default=DEFAULT_LAYOUT,
                             help=f"activation layout of convolutions at -O2 (default "
                                  f"{DEFAULT_LAYOUT}; none keeps NCHW)")  # fmt: skip
        command.add_argument("--disable-pass", action="append", default=[], metavar="PASS",
                             choices=OPTIONAL_PASSES, help="leave an optimisation pass out")  # fmt: skip
        command.add_argument("--fusion-report", action="store_true",
                             help="print ops and kernels before and after fusion")  # fmt: skip

    import_command = model_command("import", "print the model as graph IR")
    import_command.add_argument(
        "--elide-large-constants", nargs="?", type=int, const=16, default=None, metavar="N",
        help="print constants of more than N elements (default 16) as dense_resource<__elided__>",
    )  # fmt: skip
    import_command.add_argument("-o", "--output", help="write the IR to this file")
    import_command.set_defaults(handler=_import)

    run_command = model_command("run", "run the model on given or random inputs")
    run_command.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    run_command.add_argument("--target", choices=["cpu", "reference"], default="cpu",
                             help="cpu: compiled native code; reference: the NumPy interpreter")  # fmt: skip
    run_command.add_argument("--check", action="store_true",
                             help="compare the outputs with onnxruntime")  # fmt: skip
    run_command.add_argument("--seed", type=int, default=0, help="seed of generated inputs")
    optimisation_flags(run_command)
    run_command.set_defaults(handler=_run)

    compile_command = model_command("compile", "compile ahead of time: .so, C header, weights")
    compile_command.add_argument("-o", "--output", required=True, help="output directory")
    compile_command.add_argument("--name", default="model", help="C name prefix (default: model)")
    compile_command.add_argument("--target", choices=["cpu"], default="cpu")
    optimisation_flags(compile_command)
    compile_command.set_defaults(handler=_compile)

    bench_command = model_command("bench", "latency of Ember and onnxruntime side by side")
    bench_command.add_argument("--threads", type=int, default=1,
                               help="threads for onnxruntime (Ember's code is single-threaded)")  # fmt: skip
    bench_command.add_argument("--runs", type=int, default=20, help="timed runs per engine")
    optimisation_flags(bench_command)
    bench_command.set_defaults(handler=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except EmberError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["main"]
