"""Compile time against model size: synthetic models at several sizes, seconds
per pass and per node, so the scaling can be read off.

    python benchmarks/compile_time.py [--sizes 250,1000,2000] [--models chain,wide]
                                      [-O 2] [--profile 20]
    python benchmarks/compile_time.py --models light,transformers   # the real models

Models (built with `onnx.helper`; a size counts ONNX nodes):

    chain   Sin applied N times to x: float32[64] (at -O2 one elementwise
            fusion group, so graph-fuse and loop-fuse see one huge group)
    wide    N/2 branches Mul(x, c_i) -> Sin, joined by one Concat
    fan     Sin(x) feeding N/2 Mul(s, c_i), summed by a chain of Adds (at -O2
            one elementwise group with N/2 values live at once)
    conv    N/2 blocks Conv 3x3 (8 channels, 8x8, own weights) + Relu
    mlp     N/3 blocks MatMul (16x16, own weights) + Add bias + Relu on [4, 16]

Real models (fixed sizes: `--sizes` does not apply), random weights (seed 0):

    light         the nine light models onnx ships (or one by name: resnet50, ...)
    transformers  the BERT-base encoder layer and the GPT block of the test suite

For a real model the first line also gives onnxruntime's session creation for
the same file (graph optimisation level all, one thread) and the ratio, and
the check compares with onnxruntime's outputs.

For each model, size and level the table shows the seconds spent in import,
in each pass of the CPU pipeline (`CompileReport.pass_seconds`; the graph
passes as `graph-optimize` expands them) and in each LLVM phase (IR text,
parse, optimise, codegen, link), the total, and the same per node in
milliseconds, in wall-clock and CPU time (`pass_cpu_seconds`; the LLVM
phases as one, `llvm-jit`). Linear scaling keeps ms/node flat as N grows;
on a busy machine read the CPU columns. `--profile K` also prints the K
functions with the most cumulative CPU time (cProfile) for each compile.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ember  # noqa: E402
from ember.compiler import CompileReport, Options, compile_module  # noqa: E402
from tests.support.models import (  # noqa: E402
    LIGHT_MODELS,
    gpt_block,
    light_model_path,
    random_inputs,
    run_onnxruntime,
    transformer_encoder,
    with_random_weights,
)

OPSET = [helper.make_opsetid("", 17)]


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           output: onnx.ValueInfoProto,
           weights: dict[str, np.ndarray]) -> onnx.ModelProto:  # fmt: skip
    initializers = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    graph = helper.make_graph(nodes, "compile_time", inputs, [output], initializers)
    return helper.make_model(graph, opset_imports=OPSET)


def _float(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def chain(size: int) -> onnx.ModelProto:
    nodes = [helper.make_node("Sin", [f"v{i}"], [f"v{i + 1}"]) for i in range(size)]
    nodes[0].input[0], nodes[-1].output[0] = "x", "y"
    return _model(nodes, [_float("x", [64])], _float("y", [64]), {})


def wide(size: int) -> onnx.ModelProto:
    branches = max(size // 2, 1)
    nodes, weights = [], {}
    for i in range(branches):
        weights[f"c{i}"] = np.full([64], 1.0 + i / branches, np.float32)
        nodes.append(helper.make_node("Mul", ["x", f"c{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Sin", [f"m{i}"], [f"s{i}"]))
    nodes.append(helper.make_node("Concat", [f"s{i}" for i in range(branches)], ["y"], axis=0))
    return _model(nodes, [_float("x", [64])], _float("y", [64 * branches]), weights)


def fan(size: int) -> onnx.ModelProto:
    branches = max(size // 2, 2)
    nodes = [helper.make_node("Sin", ["x"], ["s"])]
    weights = {}
    for i in range(branches):
        weights[f"c{i}"] = np.full([64], 1.0 + i / branches, np.float32)
        nodes.append(helper.make_node("Mul", ["s", f"c{i}"], [f"m{i}"]))
    total = "m0"
    for i in range(1, branches):
        nodes.append(helper.make_node("Add", [total, f"m{i}"], [f"a{i}"]))
        total = f"a{i}"
    nodes[-1].output[0] = "y"
    return _model(nodes, [_float("x", [64])], _float("y", [64]), weights)


def conv(size: int) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes, weights, value = [], {}, "x"
    for i in range(max(size // 2, 1)):
        weights[f"w{i}"] = (rng.standard_normal([8, 8, 3, 3]) / 24).astype(np.float32)
        weights[f"b{i}"] = rng.standard_normal([8]).astype(np.float32)
        nodes.append(helper.make_node("Conv", [value, f"w{i}", f"b{i}"], [f"c{i}"],
                                      pads=[1, 1, 1, 1]))  # fmt: skip
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        value = f"r{i}"
    nodes[-1].output[0] = "y"
    return _model(nodes, [_float("x", [1, 8, 8, 8])], _float("y", [1, 8, 8, 8]), weights)


def mlp(size: int) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes, weights, value = [], {}, "x"
    for i in range(max(size // 3, 1)):
        weights[f"w{i}"] = (rng.standard_normal([16, 16]) / 4).astype(np.float32)
        weights[f"b{i}"] = rng.standard_normal([16]).astype(np.float32)
        nodes.append(helper.make_node("MatMul", [value, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]))
        nodes.append(helper.make_node("Relu", [f"a{i}"], [f"r{i}"]))
        value = f"r{i}"
    nodes[-1].output[0] = "y"
    return _model(nodes, [_float("x", [4, 16])], _float("y", [4, 16]), weights)


MODELS: dict[str, Callable[[int], onnx.ModelProto]] = {
    "chain": chain, "wide": wide, "fan": fan, "conv": conv, "mlp": mlp,
}  # fmt: skip


def _light(name: str) -> Callable[[], onnx.ModelProto]:
    return lambda: with_random_weights(onnx.load(light_model_path(name)))


REAL_MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    **{name: _light(name) for name in LIGHT_MODELS},
    "transformer_encoder": transformer_encoder,
    "gpt_block": gpt_block,
}
GROUPS = {"light": list(LIGHT_MODELS), "transformers": ["transformer_encoder", "gpt_block"]}


def session_seconds(model: onnx.ModelProto) -> float:
    """onnxruntime's session creation for the model (all graph optimisations)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    data = model.SerializeToString()
    start = time.perf_counter()
    onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return time.perf_counter() - start


def compile_timed(
    model: onnx.ModelProto, level: int
) -> tuple[dict[str, float], dict[str, float], object]:
    """Wall and CPU seconds per pass (import first, LLVM phases last; CPU time
    for the LLVM phases together, as `llvm-jit`) and the compiled model."""
    report = CompileReport()
    start, cpu_start = time.perf_counter(), time.process_time()
    module = ember.import_onnx(model)
    seconds = {"import": time.perf_counter() - start}
    cpu_seconds = {"import": time.process_time() - cpu_start}
    compiled = compile_module(module, report, Options(opt_level=level))
    seconds.update(report.pass_seconds)
    cpu_seconds.update(report.pass_cpu_seconds)
    return seconds, cpu_seconds, compiled


def _check_real(model: onnx.ModelProto, compiled: object) -> str:
    """Max difference to onnxruntime's outputs, relative to their largest."""
    inputs = random_inputs(model)
    got = compiled(*inputs.values())  # type: ignore[operator]
    want = run_onnxruntime(model, inputs)
    return f"{max(float(np.max(np.abs(g - w)) / max(float(np.max(np.abs(w))), 1e-30)) for g, w in zip(got, want)):.1e} (relative)"


def _check(name: str, model: onnx.ModelProto, compiled: object) -> str:
    """Max difference to the reference interpreter (a compile-time fix must
    not change the numbers)."""
    x = (
        np.random.default_rng(1)
        .standard_normal([d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim])
        .astype(np.float32)
    )
    (got,) = compiled(x)  # type: ignore[operator]
    (want,) = ember.reference.run(ember.import_onnx(model), {"x": x})
    return f"{float(np.max(np.abs(got - want))):.1e}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250,1000,2000",
                        help="comma-separated node counts (e.g. 250,1000,2000,10000)")  # fmt: skip
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"of {', '.join([*MODELS, *GROUPS])} or a light model's name")  # fmt: skip
    parser.add_argument("-O", dest="levels", default="2", help="comma-separated levels: 0,1,2")
    parser.add_argument("--profile", type=int, default=0, metavar="K",
                        help="print the K functions with the most cumulative time")  # fmt: skip
    parser.add_argument("--no-check", action="store_true",
                        help="skip comparing the output with the reference interpreter")  # fmt: skip
    args = parser.parse_args(argv)
    names = [n for word in args.models.split(",") for n in GROUPS.get(word, [word])]
    unknown = set(names) - set(MODELS) - set(REAL_MODELS)
    if unknown:
        known = ", ".join([*MODELS, *GROUPS, *REAL_MODELS])
        parser.error(f"unknown models {sorted(unknown)}; known: {known}")
    for name in names:
        for level in map(int, args.levels.split(",")):
            real = name in REAL_MODELS
            for size in [0] if real else map(int, args.sizes.split(",")):
                model = REAL_MODELS[name]() if real else MODELS[name](size)
                _report(name, model, level, args, real)
    return 0


def _report(name: str, model: onnx.ModelProto, level: int, args: argparse.Namespace,
            real: bool) -> None:  # fmt: skip
    """Compiles one model and prints its line and its per-pass table."""
    nodes = len(model.graph.node)
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    if profiler:
        profiler.enable()
    seconds, cpu_seconds, compiled = compile_timed(model, level)
    if profiler:
        profiler.disable()
    total, cpu = sum(seconds.values()), sum(cpu_seconds.values())
    if args.no_check:
        error = "-"
    else:
        error = _check_real(model, compiled) if real else _check(name, model, compiled)
    peer = ""
    if real:
        session = session_seconds(model)
        peer = f"; onnxruntime session {session:.2f}s, ratio {total / session:.1f}x"
    print(f"{name} -O{level} nodes={nodes}: {total:.2f}s, {1000 * total / nodes:.2f} "
          f"ms/node (CPU {cpu:.2f}s, {1000 * cpu / nodes:.2f} ms/node){peer}, "
          f"max error {error}")  # fmt: skip
    print(f"    {'pass':<24} {'wall s':>8} {'ms/node':>8} {'CPU s':>8} {'ms/node':>8}")
    for stage in {**seconds, **cpu_seconds}:
        columns = [f"{'':>8} {'':>8}" if table.get(stage) is None else
                   f"{table[stage]:8.3f} {1000 * table[stage] / nodes:8.3f}"
                   for table in (seconds, cpu_seconds)]  # fmt: skip
        print(f"    {stage:<24} {' '.join(columns)}")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
