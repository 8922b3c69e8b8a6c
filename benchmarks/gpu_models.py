"""Ember on an NVIDIA GPU next to onnxruntime-gpu, PyTorch eager and cuBLAS.

    python benchmarks/gpu_models.py                # on a machine with a GPU
    python benchmarks/gpu_models.py --dry-run      # anywhere: PTX and ptxas only
    python benchmarks/gpu_models.py -k resnet --runs 50 --budget-s 300

Models: the MLP (batch 64, 784-1024-1024-10), the BERT-base-like encoder
layer (seq 128), SqueezeNet and ResNet-50 (the onnx package's light models,
random weights), each compiled with `ember.compile(model, target="cuda")`,
and a 4096^3 SGEMM (a one-node MatMul model, both operands inputs).

Per model: Ember's outputs against onnxruntime's CPU provider (and its
CUDA provider where `onnxruntime.get_available_providers()` has it), then
the median latency of one call with NumPy arrays in and out (host-device
copies included, as onnxruntime's `run` does them) of Ember, onnxruntime's
CUDA provider and PyTorch eager (the ONNX model through onnx2torch, only
where it and a CUDA build of torch are installed), and Ember's device time
for its launches alone (CUDA events). The SGEMM compares device time alone:
Ember's launches against `torch.matmul` on the GPU (cuBLAS, TF32 off), in
GFLOP/s, and their ratio. A model that fails is reported in its row and the
rest go on; the exit status is 1 when any output disagreed or failed.

`--dry-run` needs no GPU: each model goes through the cuda target's deploy
writer (`ember compile --target cuda -o DIR`: PTX and launch plan), and
ptxas assembles the PTX for its `.target`; the table gives the launches,
kernels, the most registers of a kernel, shared memory and spills.

The script runs without network: everything it uses comes from the venv.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ember  # noqa: E402
from ember.benchmarking import timed_calls  # noqa: E402
from ember.errors import EmberError  # noqa: E402
from tests.support.models import (  # noqa: E402
    light_model_path,
    mlp,
    random_inputs,
    transformer_encoder,
    with_random_weights,
)

TARGET = "cuda"
SGEMM_SIZE = 4096
RTOL, ATOL = 1e-3, 1e-4
"""Outputs agree when |ember - reference| <= ATOL + RTOL * |reference|
(float32 on both sides, different summation orders)."""
SGEMM_RTOL = 1e-4
"""The SGEMM agrees when its largest error is below this fraction of the
largest |reference| (float32 sums of 4096 terms)."""


def _light(name: str) -> Callable[[], onnx.ModelProto]:
    return lambda: with_random_weights(onnx.load(light_model_path(name)))


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp": mlp,
    "bert_layer": transformer_encoder,
    "squeezenet": _light("squeezenet"),
    "resnet50": _light("resnet50"),
}
"""The benchmarked models by name, each built when it is reached."""


def sgemm_model(n: int = SGEMM_SIZE) -> onnx.ModelProto:
    """C = A @ B, n x n float32, A and B inputs."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["C"])],
        "sgemm",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [n, n]) for name in "AB"],
        [helper.make_tensor_value_info("C", TensorProto.FLOAT, [n, n])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def require_cuda_target() -> None:
    """An EmberError unless this build of Ember has the cuda target."""
    from ember.targets.registry import target_names

    if TARGET not in target_names():
        raise EmberError(
            f"this build of Ember has no '{TARGET}' target (targets/registry.py has: "
            f"{', '.join(target_names())}); nothing to benchmark on the GPU"
        )


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:110]


# -- the dry run: PTX and ptxas, no GPU -----------------------------------------------------


def dry_run(name: str, model: onnx.ModelProto) -> str:
    """One row: the deployed PTX of `model` assembled by ptxas."""
    from ember.deploy import compile_to_directory
    from ember.targets.cuda import assemble
    from ember.targets.cuda.runtime import ptx_target

    with tempfile.TemporaryDirectory(prefix="ember-gpu-dry-") as folder:
        start = time.perf_counter()
        compile_to_directory(model, Path(folder), name=name, target=TARGET)
        seconds = time.perf_counter() - start
        ptx_files = sorted(Path(folder).rglob("*.ptx"))
        if not ptx_files:
            return f"{name:<12} the cuda deploy writer wrote no .ptx file"
        launches = sum(len(_launches(path)) for path in Path(folder).rglob("*.json"))
        kernels: dict[str, Any] = {}
        for path in ptx_files:
            ptx = path.read_text()
            number, suffix = ptx_target(ptx)
            kernels.update(assemble(ptx, f"sm_{number}{suffix}").kernels)
    entries = [k for k in kernels.values() if k.registers]
    return (
        f"{name:<12} {seconds:>9.1f} {launches:>8} {len(entries):>7} "
        f"{max((k.registers for k in entries), default=0):>8} "
        f"{max((k.shared_bytes for k in entries), default=0):>10} "
        f"{sum(k.spill_stores + k.spill_loads for k in entries):>10}"
    )


def _launches(manifest: Path) -> list[Any]:
    """The launches a deploy manifest lists (`LaunchPlan.to_json()` under
    any key), or none."""
    try:
        found = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return []
    stack = [found]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("launches"), list):
                return item["launches"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return []


# -- on the GPU -----------------------------------------------------------------------------


@dataclass
class Row:
    """One model's results (milliseconds; None where not measured)."""

    name: str
    compile_s: float = 0.0
    ember_ms: float | None = None
    ember_device_ms: float | None = None
    ort_gpu_ms: float | None = None
    torch_ms: float | None = None
    error_cpu: float | None = None
    error_gpu: float | None = None
    ok: bool = True
    notes: list[str] = field(default_factory=list[str])

    def format(self) -> str:
        def ms(value: float | None) -> str:
            return f"{value:>9.3f}" if value is not None else f"{'-':>9}"

        def err(value: float | None) -> str:
            return f"{value:>9.1e}" if value is not None else f"{'-':>9}"

        return (
            f"{self.name:<12} {self.compile_s:>9.1f} {ms(self.ember_ms)} {ms(self.ember_device_ms)} "
            f"{ms(self.ort_gpu_ms)} {ms(self.torch_ms)} {err(self.error_cpu)} {err(self.error_gpu)} "
            f"{'ok' if self.ok else 'FAIL':>4}  {'; '.join(self.notes)}"
        )


HEADER = (
    f"{'model':<12} {'compile s':>9} {'ember ms':>9} {'ember dev':>9} {'ort-gpu':>9} "
    f"{'torch':>9} {'err cpu':>9} {'err gpu':>9} {'':>4}  notes"
)


def median_ms(run: Callable[[], Any], runs: int, warmup: int) -> float:
    seconds: list[float] = []
    for _ in range(warmup):
        run()
    timed_calls(run, runs, seconds, settle=False)
    return 1e3 * statistics.median(seconds)


def max_error(outputs: list[np.ndarray], reference: list[np.ndarray]) -> tuple[float, bool]:
    """The largest |difference| and whether every element is within tolerance."""
    error, close = 0.0, True
    for got, want in zip(outputs, reference, strict=True):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        if got.shape != want.shape:
            return float("inf"), False
        error = max(error, float(np.max(np.abs(got - want), initial=0.0)))
        close = close and bool(np.allclose(got, want, rtol=RTOL, atol=ATOL))
    return error, close


def ort_session(model: onnx.ModelProto, provider: str) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    providers = (
        [provider] if provider == "CPUExecutionProvider" else [provider, "CPUExecutionProvider"]
    )
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=providers)


def has_ort_cuda() -> bool:
    import onnxruntime

    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()


def torch_cuda() -> Any:
    """`torch` where it has CUDA and a GPU, else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def torch_eager(model: onnx.ModelProto, torch: Any) -> Callable[[dict[str, np.ndarray]], Any] | str:
    """The ONNX model as a PyTorch module on the GPU, called with NumPy
    inputs (copies in and out included), or why there is none."""
    try:
        from onnx2torch import convert
    except ImportError:
        return "torch: onnx2torch not installed"
    try:
        module = convert(model).cuda().eval()
    except Exception as error:  # onnx2torch raises whatever it meets
        return f"torch: onnx2torch: {first_line(error)}"
    names = [
        i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}
    ]

    def run(feeds: dict[str, np.ndarray]) -> Any:
        with torch.inference_mode():
            result = module(*(torch.from_numpy(feeds[n]).cuda() for n in names))
            results = result if isinstance(result, list | tuple) else [result]
            return [r.cpu().numpy() for r in results]

    return run


def run_model(name: str, model: onnx.ModelProto, args: argparse.Namespace) -> Row:
    row = Row(name)
    feeds = random_inputs(model)
    start = time.perf_counter()
    compiled = ember.compile(model, target=TARGET)
    row.compile_s = time.perf_counter() - start
    arrays = [feeds[spec.name] for spec in compiled.inputs]
    outputs = compiled(*arrays)
    row.error_cpu, close = max_error(
        outputs, ort_session(model, "CPUExecutionProvider").run(None, feeds)
    )
    row.ok = close
    row.ember_ms = median_ms(lambda: compiled(*arrays), args.runs, args.warmup)
    if hasattr(compiled, "launch_times"):
        row.ember_device_ms = 1e3 * statistics.median(compiled.launch_times(arrays, args.runs))
    else:
        row.notes.append("no launch_times: the compiled model is not a CudaModel")
    if has_ort_cuda():
        session = ort_session(model, "CUDAExecutionProvider")
        reference = session.run(None, feeds)
        row.error_gpu, close = max_error(outputs, reference)
        row.ok = row.ok and close
        row.ort_gpu_ms = median_ms(lambda: session.run(None, feeds), args.runs, args.warmup)
    else:
        row.notes.append("onnxruntime has no CUDAExecutionProvider")
    torch = torch_cuda()
    eager = torch_eager(model, torch) if torch is not None else "torch: no CUDA build or no GPU"
    if isinstance(eager, str):
        row.notes.append(eager)
    else:
        row.torch_ms = median_ms(lambda: eager(feeds), args.runs, args.warmup)
    if hasattr(compiled, "close"):
        compiled.close()
    return row


def sgemm(args: argparse.Namespace) -> tuple[str, bool]:
    """The SGEMM's lines (Ember's and cuBLAS's GFLOP/s from device time) and
    whether Ember's product agrees with the reference."""
    n = SGEMM_SIZE
    flops = 2.0 * n**3
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    start = time.perf_counter()
    compiled = ember.compile(sgemm_model(n), target=TARGET)
    compile_s = time.perf_counter() - start
    [c] = compiled(a, b)
    ember_s = statistics.median(compiled.launch_times([a, b], args.runs))
    ember_gflops = flops / ember_s / 1e9
    lines = [
        f"sgemm {n}^3: compile {compile_s:.1f} s; Ember {ember_s * 1e3:.3f} ms = {ember_gflops:.0f} GFLOP/s"
    ]
    torch = torch_cuda()
    if torch is None:
        reference = a.astype(np.float64) @ b.astype(np.float64)
        lines.append("  cuBLAS: no CUDA build of torch; checked against NumPy (float64)")
    else:
        torch.backends.cuda.matmul.allow_tf32 = False  # SGEMM against SGEMM
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        times = []
        for i in range(args.warmup + args.runs):
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            tc = torch.matmul(ta, tb)
            end.record()
            torch.cuda.synchronize()
            if i >= args.warmup:
                times.append(begin.elapsed_time(end) / 1e3)
        cublas_s = statistics.median(times)
        cublas = flops / cublas_s / 1e9
        reference = tc.double().cpu().numpy()
        lines.append(
            f"  cuBLAS (torch.matmul, TF32 off) {cublas_s * 1e3:.3f} ms = {cublas:.0f} GFLOP/s; "
            f"Ember / cuBLAS = {ember_gflops / cublas:.2f}"
        )
    relative = float(np.max(np.abs(c - reference)) / np.max(np.abs(reference)))
    ok = relative < SGEMM_RTOL
    lines.append(
        f"  max |Ember - reference| / max |reference| = {relative:.1e} {'ok' if ok else 'FAIL'}"
    )
    if hasattr(compiled, "close"):
        compiled.close()
    return "\n".join(lines), ok


# -- the command line -----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="PTX and ptxas only, no GPU")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("-k", default="", help="only models whose name contains this")
    parser.add_argument("--no-sgemm", action="store_true")
    parser.add_argument("--traceback", action="store_true", help="print a failure's traceback")
    parser.add_argument(
        "--budget-s", type=float, default=420.0, help="skip what is left after this many seconds"
    )
    args = parser.parse_args(argv)
    try:
        require_cuda_target()
    except EmberError as error:
        print(f"error: {error}")
        return 2
    if not args.dry_run:
        from ember.targets.cuda.runtime import cuda_available

        reason = cuda_available()
        if reason is not None:
            print(f"error: {reason}; --dry-run compiles and assembles without a GPU")
            return 2
    started = time.perf_counter()
    failed = False
    print(
        f"{'model':<12} {'compile s':>9} {'launches':>8} {'kernels':>7} {'max regs':>8} "
        f"{'smem bytes':>10} {'spill B':>10}"
        if args.dry_run
        else HEADER,
        flush=True,
    )
    for name, build in MODELS.items():
        if args.k not in name:
            continue
        if time.perf_counter() - started > args.budget_s:
            print(f"{name:<12} skipped: over the {args.budget_s:.0f} s budget", flush=True)
            continue
        try:
            if args.dry_run:
                line = dry_run(name, build())
            else:
                row = run_model(name, build(), args)
                failed = failed or not row.ok
                line = row.format()
        except Exception as error:  # one model's failure must not hide the others
            failed = True
            line = f"{name:<12} failed: {first_line(error)}"
            if args.traceback:
                traceback.print_exc()
        print(line, flush=True)
    if not args.no_sgemm and args.k in "sgemm":
        if time.perf_counter() - started > args.budget_s:
            print(f"sgemm skipped: over the {args.budget_s:.0f} s budget")
        else:
            try:
                lines, ok = (
                    (dry_run("sgemm", sgemm_model(SGEMM_SIZE)), True)
                    if args.dry_run
                    else sgemm(args)
                )
                failed = failed or not ok
            except Exception as error:
                failed, lines = True, f"sgemm failed: {first_line(error)}"
                if args.traceback:
                    traceback.print_exc()
            print(lines, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
