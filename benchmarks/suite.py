"""Ember next to onnxruntime on every model we ship, at each thread count.

    python benchmarks/suite.py [-k resnet50,mlp] [--runs 10] [--threads 1,2] [--json out.json]
    python benchmarks/suite.py -k resnet50,transformer --dtype fp32,fp16,bf16
    python benchmarks/suite.py -k squeezenet --threads 1 --records records.sqlite

The models: every light model (random weights, seed 0), the MLP (batch
64, 784-1024-1024-10), the BERT-base-like encoder layer and a GPT block
(both seq 128, hidden 768), and all-MiniLM-L6-v2 exported from PyTorch
(where `.[pretrained]` is installed; seq 128). For each, at each thread count, both engines
run in this process with their runs alternating (`benchmark_model`); the
table gives the compile seconds, the median latencies, their ratio (Ember /
onnxruntime, below 1: Ember is faster) and Ember's speed-up from the first
thread count to the last, then the geometric mean of the ratios per thread
count. Above it: this machine's limits (one core's FMA peak, copy
bandwidth, NumPy's sgemm at 1024^3) and Ember's own 1024^3 matmul as a share
of NumPy's, all measured in the same run. `-k` keeps the models whose name
contains one of its comma-separated words (a few minutes for a few models;
all of them take long).

`--records FILE` also times each model with the schedules `ember tune`
recorded in FILE against the default schedules (both Ember, their runs
alternating in rounds, in this run) and prints the ratio per model and its
geometric mean (docs/tuning.md).

`--dtype fp16,bf16` also runs each model converted to float16 or bfloat16
(its float weights, inputs, outputs and Casts; `tests.support.models.to_half`):
Ember computes such models in f32 between half tensors (docs/types.md), and
the row's last column is the largest difference of its outputs from the
float32 model's (Ember's, same inputs) relative to their largest magnitude.
Where onnxruntime's CPU provider cannot run the converted model (it lacks
bfloat16 kernels for most ops) its columns say n/a and the reason is printed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Compile times here are the pipeline's, never a compile-cache hit's (ember/cache.py).
os.environ.setdefault("EMBER_CACHE", "0")

from ember.benchmarking import (  # noqa: E402
    PeerError,
    alternating_medians,
    benchmark_model,
    timed_calls,
)
from ember.compiler import compile as ember_compile  # noqa: E402
from ember.machine_limits import measure_machine_limits  # noqa: E402
from tests.support.models import (  # noqa: E402
    HALF,
    LIGHT_MODELS,
    gpt_block,
    light_model_path,
    minilm_available,
    minilm_onnx,
    mlp,
    random_inputs,
    to_half,
    transformer_encoder,
    with_random_weights,
)

ModelMaker = Callable[[], onnx.ModelProto]


def _light(name: str) -> ModelMaker:
    return lambda: with_random_weights(onnx.load(light_model_path(name)))


MODELS: dict[str, ModelMaker] = {
    **{name: _light(name) for name in LIGHT_MODELS},
    "mlp": mlp,
    "transformer_encoder": transformer_encoder,
    "gpt_block": gpt_block,
    **({"minilm": minilm_onnx} if minilm_available() else {}),
}
"""Each model by name, built only when selected (random weights take time);
all-MiniLM-L6-v2 (its trained weights, one sentence of 128 tokens) where
torch, transformers and its weights package are installed."""


DTYPES = {"fp32": TensorProto.FLOAT, "fp16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}


@dataclass
class ModelRow:
    name: str
    compile_seconds: float = 0.0
    ember_ms: dict[int, float] = field(default_factory=dict)
    ort_ms: dict[int, float] = field(default_factory=dict)
    max_abs_error: float = 0.0
    dtype: str = "fp32"
    error_to_fp32: float | None = None
    """For a half-precision row: its outputs' largest difference from the
    float32 model's, relative to their largest magnitude."""
    default_ms: dict[int, float] = field(default_factory=dict)
    tuned_ms: dict[int, float] = field(default_factory=dict)
    """With `--records`: Ember with the default schedules and with the
    records' (timed alternately, in this run)."""

    def ratio(self, threads: int) -> float:
        return self.ember_ms[threads] / self.ort_ms.get(threads, math.nan)


def matmul_model(size: int) -> onnx.ModelProto:
    """One size x size x size float32 MatMul of two inputs."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "matmul",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [size, size]) for n in ("a", "b")],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [size, size])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def ember_matmul_gflops(size: int, runs: int = 3) -> float:
    """Ember's GFLOP/s on one size^3 float32 matmul on one thread (as the
    peak and NumPy's sgemm are measured): best of `runs`."""
    compiled = ember_compile(matmul_model(size), threads=1)
    rng = np.random.default_rng(0)
    a, b = (rng.random((size, size), dtype=np.float32) for _ in range(2))
    compiled(a, b)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        compiled(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def selected(words: str) -> list[str]:
    wanted = [w for w in words.split(",") if w]
    return [name for name in MODELS if not wanted or any(w in name for w in wanted)]


def thread_counts(text: str) -> list[int]:
    try:
        counts = [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts like 1,2, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"thread counts must be 1 or more, got {text!r}")
    return counts


def header_lines(matmul_size: int) -> tuple[list[str], dict[str, object]]:
    limits = measure_machine_limits()
    ours = ember_matmul_gflops(matmul_size)
    share = 100 * ours / limits.sgemm_gflops
    lines = [
        limits.format(),
        f"  Ember matmul {matmul_size}^3: {ours:.1f} GFLOP/s = {share:.1f}% of NumPy's sgemm "
        f"at 1024^3, {100 * ours / limits.peak_gflops:.1f}% of the peak",
    ]
    return lines, {"limits": asdict(limits), "ember_matmul_gflops": ours,
                   "matmul_size": matmul_size}  # fmt: skip


def table(rows: Sequence[ModelRow], threads: Sequence[int], half: bool = False) -> list[str]:
    """The header, a line per row and the geometric means; `half` adds the
    column of the half-precision rows' differences from float32."""
    columns = "".join(f" {'ember ms@' + str(t):>12} {'ort ms@' + str(t):>10} {'ratio@' + str(t):>8}"
                      for t in threads)  # fmt: skip
    speedup = (
        f" {'speed-up ' + str(threads[0]) + '->' + str(threads[-1]):>14}"
        if len(threads) > 1
        else ""
    )
    accuracy = f" {'vs fp32':>8}" if half else ""
    lines = [f"{'model':<25} {'compile s':>9}{columns}{speedup}{accuracy}"]
    for row in rows:
        cells = "".join(f" {row.ember_ms[t]:>12.2f} {_ms(row.ort_ms.get(t))} {_ms(row.ratio(t), 8)}"
                        for t in threads)  # fmt: skip
        gain = (f" {row.ember_ms[threads[0]] / row.ember_ms[threads[-1]]:>14.2f}"
                if len(threads) > 1 else "")  # fmt: skip
        error = f" {row.error_to_fp32:>8.1e}" if row.error_to_fp32 is not None else " " * 9 * half
        lines.append(f"{row.name:<25} {row.compile_seconds:>9.1f}{cells}{gain}{error}")
    for dtype in dict.fromkeys(r.dtype for r in rows):
        same = [r for r in rows if r.dtype == dtype]
        means = "  ".join(f"@{t}: {geomean([r.ratio(t) for r in same]):.2f}" for t in threads)
        of = f" ({dtype} rows)" if half else ""
        lines.append(f"geometric mean of the ratios (Ember / onnxruntime){of}: {means}")
    return lines


def _ms(value: float | None, width: int = 10) -> str:
    return f"{'n/a':>{width}}" if value is None or math.isnan(value) else f"{value:>{width}.2f}"


def geomean(values: Sequence[float]) -> float:
    """Of the values that are numbers (a row onnxruntime cannot run has none)."""
    values = [v for v in values if not math.isnan(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def run_suite(names: Sequence[str], threads: Sequence[int], runs: int,
              dtypes: Sequence[str] = ("fp32",), records: Path | None = None) -> list[ModelRow]:  # fmt: skip
    rows = []
    for name in names:
        model = MODELS[name]()
        for dtype in dtypes:
            half = dtype != "fp32"
            row = ModelRow(f"{name} {dtype}" if half else name, dtype=dtype)
            converted = to_half(model, DTYPES[dtype]) if half else model
            for count in threads:
                _time_row(row, converted, count, runs)
                if records is not None:
                    _time_tuned(row, converted, count, runs, records)
            if half:
                row.error_to_fp32 = error_to_fp32(model, converted, DTYPES[dtype])
            print(table([row], threads, half=list(dtypes) != ["fp32"])[1], flush=True)
            rows.append(row)
    return rows


def _time_row(row: ModelRow, model: onnx.ModelProto, threads: int, runs: int) -> None:
    """Both engines on `threads` threads; Ember alone where onnxruntime
    cannot run the model (its columns then stay empty: n/a)."""
    try:
        result = benchmark_model(model, threads=threads, runs=runs, warmup=1)
    except PeerError as error:
        print(f"  {row.name}: {error}")
        start = time.perf_counter()
        compiled = ember_compile(model, threads=threads)
        row.compile_seconds = row.compile_seconds or time.perf_counter() - start
        row.ember_ms[threads] = _median_ms(compiled, random_inputs(model), runs)
        return
    row.compile_seconds = row.compile_seconds or result.compile_seconds
    row.ember_ms[threads], row.ort_ms[threads] = result.ember_ms, result.ort_ms
    row.max_abs_error = max(row.max_abs_error, result.max_abs_error)


def _time_tuned(row: ModelRow, model: onnx.ModelProto, threads: int, runs: int,
                records: Path) -> None:  # fmt: skip
    """Ember with the default schedules and with `records`' (`ember tune`),
    their runs alternating in rounds as `benchmark_model` alternates engines."""
    default = ember_compile(model, threads=threads, records=False)
    tuned = ember_compile(model, threads=threads, records=str(records))
    inputs = list(random_inputs(model).values())
    medians = alternating_medians({"default": lambda: default(*inputs),
                                   "tuned": lambda: tuned(*inputs)}, runs)  # fmt: skip
    row.default_ms[threads] = 1000 * medians["default"]
    row.tuned_ms[threads] = 1000 * medians["tuned"]


def tuned_table(rows: Sequence[ModelRow], threads: Sequence[int]) -> list[str]:
    """Per model, Ember's default and tuned times and their ratio (below 1:
    the records' schedules are faster), then the ratios' geometric mean."""
    columns = "".join(f" {'default@' + str(t):>10} {'tuned@' + str(t):>10} {'ratio@' + str(t):>8}"
                      for t in threads)  # fmt: skip
    lines = [f"{'model (tuning records)':<25}{columns}"]
    for row in rows:
        cells = "".join(f" {row.default_ms[t]:>10.2f} {row.tuned_ms[t]:>10.2f} "
                        f"{row.tuned_ms[t] / row.default_ms[t]:>8.3f}" for t in threads)  # fmt: skip
        lines.append(f"{row.name:<25}{cells}")
    means = "  ".join(
        f"@{t}: {geomean([r.tuned_ms[t] / r.default_ms[t] for r in rows]):.3f}" for t in threads
    )
    lines.append(f"geometric mean of tuned / default: {means}")
    return lines


def _median_ms(compiled: Callable[..., object], inputs: dict[str, np.ndarray], runs: int) -> float:
    """Ember's median latency alone, timed as `benchmark_model` times it."""
    seconds: list[float] = []
    timed_calls(lambda: compiled(*inputs.values()), runs, seconds, settle=True)
    return 1000 * float(np.median(seconds))


def error_to_fp32(model: onnx.ModelProto, half_model: onnx.ModelProto, half: int) -> float:
    """The half model's outputs against the float32 model's (Ember both, the
    same inputs rounded to the half type), relative to their largest."""
    inputs = random_inputs(model)
    rounded = {k: v.astype(HALF[half]) if v.dtype == np.float32 else v for k, v in inputs.items()}
    wide = ember_compile(model)(*[v.astype(np.float32) if v.dtype == HALF[half] else v
                                  for v in rounded.values()])  # fmt: skip
    narrow = ember_compile(half_model)(*rounded.values())
    return max(
        float(np.max(np.abs(n.astype(np.float64) - w)) / max(float(np.max(np.abs(w))), 1e-30))
        for n, w in zip(narrow, wide)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="models whose name contains one of these words")
    parser.add_argument("--runs", type=int, default=10, help="timed runs per engine and count")
    parser.add_argument("--threads", type=thread_counts, default=[1, 2],
                        help="thread counts, comma-separated (default 1,2)")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--dtype", default="fp32",
                        help="comma-separated of fp32, fp16, bf16: each model also converted "
                             "to these (default fp32)")  # fmt: skip
    parser.add_argument("--matmul-size", type=int, default=1024,
                        help="size of Ember's matmul next to NumPy's sgemm (default 1024)")  # fmt: skip
    parser.add_argument("--records", type=Path, default=None,
                        help="also time each model with these tuning records' schedules "
                             "(ember tune) against the default schedules, alternately")  # fmt: skip
    args = parser.parse_args(argv)
    names = selected(args.k)
    dtypes = [d for d in args.dtype.split(",") if d]
    if not dtypes or set(dtypes) - set(DTYPES):
        parser.error(f"--dtype {args.dtype!r}: expected some of {', '.join(DTYPES)}")
    if not names:
        parser.error(f"-k {args.k!r} selects no model (models: {', '.join(MODELS)})")
    lines, machine = header_lines(args.matmul_size)
    print("\n".join(lines), flush=True)
    print(table([], args.threads, half=dtypes != ["fp32"])[0], flush=True)
    rows = run_suite(names, args.threads, args.runs, dtypes, args.records)
    print("\n".join(table(rows, args.threads, half=dtypes != ["fp32"])[1 + len(rows) :]))
    if args.records is not None:
        print("\n".join(tuned_table(rows, args.threads)))
    if args.json is not None:
        args.json.write_text(json.dumps({
            "machine": machine, "threads": args.threads,
            "models": [asdict(row) for row in rows],
            "geomean_ratio": {t: geomean([r.ratio(t) for r in rows if r.dtype == dtypes[0]])
                              for t in args.threads},
            "geomean_tuned_over_default": {t: geomean([r.tuned_ms[t] / r.default_ms[t]
                                                       for r in rows if r.tuned_ms])
                                           for t in args.threads},
            "geomean_ratio_by_dtype": {d: {t: geomean([r.ratio(t) for r in rows if r.dtype == d])
                                           for t in args.threads} for d in dtypes},
        }, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
