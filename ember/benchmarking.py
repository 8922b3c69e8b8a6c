"""Side-by-side latency of Ember and onnxruntime, in one process.

Both engines get the same inputs; their runs alternate so that machine
noise hits both alike; the report gives medians and their ratio. This is
measurement for people (`ember bench`, benchmarks/), never a test threshold.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ember.compiler import DEFAULT_OPTIONS, Options
from ember.errors import EmberError
from ember.frontends.onnx.loader import ModelSource, load_model
from ember.inputs import random_array


@dataclass(frozen=True)
class BenchmarkResult:
    compile_seconds: float
    ort_session_seconds: float
    ember_ms: float
    ort_ms: float
    threads: int
    runs: int
    max_abs_error: float
    arena_bytes: int
    naive_bytes: int

    @property
    def ratio(self) -> float:
        """Ember's latency over onnxruntime's (below 1: Ember is faster)."""
        return self.ember_ms / self.ort_ms

    def format(self, name: str) -> str:
        return (
            f"{name}: compile {self.compile_seconds:.2f}s (onnxruntime session "
            f"{self.ort_session_seconds:.2f}s)\n"
            f"  latency (median of {self.runs}, {self.threads} thread(s)): ember {self.ember_ms:.3f} ms, "
            f"onnxruntime {self.ort_ms:.3f} ms, ratio {self.ratio:.2f}x\n"
            f"  max |ember - onnxruntime| = {self.max_abs_error:.3g}; arena {self.arena_bytes} bytes "
            f"(without reuse {self.naive_bytes})"
        )


def _random_inputs(specs: Sequence[object], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inputs = {}
    for spec in specs:
        shape, dtype = spec.shape, spec.dtype  # type: ignore[attr-defined]
        inputs[spec.name] = random_array(shape, dtype, rng)  # type: ignore[attr-defined]
    return inputs


def benchmark_model(
    model: ModelSource,
    threads: int = 1,
    runs: int = 20,
    warmup: int = 3,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: Options = DEFAULT_OPTIONS,
) -> BenchmarkResult:
    import ember

    try:
        import onnxruntime
    except ImportError:
        raise EmberError("benchmarking needs onnxruntime (pip install onnxruntime)") from None
    proto = load_model(model)
    start = time.perf_counter()
    compiled = ember.compile(proto, threads=threads, input_shapes=input_shapes,
                             opt_level=options.opt_level, layout=options.layout,
                             disabled=options.disabled)  # fmt: skip
    compile_seconds = time.perf_counter() - start
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    start = time.perf_counter()
    session = onnxruntime.InferenceSession(
        proto.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    ort_session_seconds = time.perf_counter() - start
    inputs = _random_inputs(compiled.inputs)
    ember_times, ort_times = [], []
    for index in range(warmup + runs):
        t0 = time.perf_counter()
        ours = compiled.run(inputs)
        t1 = time.perf_counter()
        theirs = session.run(None, inputs)
        t2 = time.perf_counter()
        if index >= warmup:
            ember_times.append(t1 - t0)
            ort_times.append(t2 - t1)
    error = max(
        float(np.max(np.abs(a.astype(np.float64) - b), initial=0)) for a, b in zip(ours, theirs)
    )
    return BenchmarkResult(
        compile_seconds, ort_session_seconds,
        statistics.median(ember_times) * 1e3, statistics.median(ort_times) * 1e3,
        threads, runs, error, compiled.report.arena_bytes, compiled.report.naive_bytes,
    )  # fmt: skip
