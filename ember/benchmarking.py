"""Side-by-side latency of Ember and onnxruntime, in one process.

Both engines get the same inputs; their runs come in alternating blocks so that machine
noise hits both alike; the report gives medians and their ratio. This is
measurement for people (`ember bench`, benchmarks/), never a test threshold.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from onnx import ModelProto

from ember.cache import CacheRequest, compile_cached
from ember.compiler import DEFAULT_OPTIONS, CompileReport, Options
from ember.dialects.graph.symbolic import Range, symbols_of
from ember.errors import EmberError, first_line
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource, load_model
from ember.inputs import random_array
from ember.options import resolve_threads
from ember.reference import entry_function
from ember.targets.calls import InputSpec, has_symbols
from ember.targets.registry import keeps_compiled, target_named
from ember.targets.tuning_records import with_best_schedules
from ember.targets.versions import symbolic_specs

if TYPE_CHECKING:
    from ember.machine_limits import MachineLimits
    from ember.targets.cpu.profile import KernelProfile


MAX_TITLE = 48
"""The widest a profile row's kernel title (`conv1 + relu1 (kernel 3)`) is shown."""


@dataclass(frozen=True)
class ProfileReport:
    """Where Ember's time went over the timed runs of a benchmark: one row
    per kernel function (slowest first), named by the model's nodes it runs, the seconds those runs took in all
    (`total_seconds`, measured around each call from Python), and the
    machine's limits measured in the same process; `threads` scales the
    one-core peak for the % of peak."""

    rows: list[KernelProfile]
    total_seconds: float
    runs: int
    limits: MachineLimits
    threads: int = 1

    @property
    def kernel_seconds(self) -> float:
        return sum(row.seconds for row in self.rows)

    def format(self) -> str:
        peak = self.limits.peak_gflops * self.threads
        width = min(MAX_TITLE, max([len("kernel"), *(len(row.title) for row in self.rows)]))
        header = (f"{'kernel':<{width}} {'what':<40} {'calls':>6} {'total ms':>9} {'us/call':>9} "
                  f"{'GFLOP/s':>8} {'% peak':>7} {'% time':>7}")  # fmt: skip
        lines = [self.limits.format(),
                 f"profile over {self.runs} runs on {self.threads} thread(s), "
                 f"% peak of {peak:.1f} GFLOP/s:", header]  # fmt: skip
        for row in self.rows:
            gflops = row.gflops
            rate = f"{gflops:8.1f} {100 * gflops / peak:6.1f}%" if gflops else f"{'-':>8} {'-':>7}"
            lines.append(
                f"{row.title[:width]:<{width}} {row.label[:40]:<40} {row.calls:>6} "
                f"{row.seconds * 1e3:9.3f} "
                f"{row.seconds_per_call * 1e6:9.1f} {rate} "
                f"{100 * row.seconds / self.total_seconds:6.1f}%"
            )
        lines.append(
            f"kernels {self.kernel_seconds * 1e3:.3f} ms of {self.total_seconds * 1e3:.3f} ms "
            f"measured around the calls ({100 * self.kernel_seconds / self.total_seconds:.1f}%)"
        )
        return "\n".join(lines)


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
    profile: ProfileReport | None = None
    trace: dict[str, Any] | None = None
    """With `Options.trace`: `runs` more runs as a Chrome trace-event object."""

    @property
    def ratio(self) -> float:
        """Ember's latency over onnxruntime's (below 1: Ember is faster)."""
        return self.ember_ms / self.ort_ms

    def format(self, name: str) -> str:
        return (
            f"{name}: compile {self.compile_seconds:.2f}s (onnxruntime session "
            f"{self.ort_session_seconds:.2f}s)\n"
            f"  latency (median of {self.runs}, {self.threads} thread(s) each): "
            f"ember {self.ember_ms:.3f} ms, onnxruntime {self.ort_ms:.3f} ms, "
            f"ratio {self.ratio:.2f}x\n"
            f"  max |ember - onnxruntime| = {self.max_abs_error:.3g}; arena {self.arena_bytes} bytes"
            + (f" (without reuse {self.naive_bytes})" if self.naive_bytes else "")
            + (f"\n{self.profile.format()}" if self.profile is not None else "")
        )


def spec_inputs(specs: Sequence[InputSpec], seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded random inputs of the specs' shapes; an input with symbolic dims
    (a generic version's) has none to draw, which is an error naming them."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for spec in specs:
        shape = [d for d in spec.dims if isinstance(d, int)]
        if len(shape) < len(spec.dims):
            symbols = sorted(symbols_of(spec.dims))
            raise EmberError(
                f"input {spec.describe()} has a dynamic shape; a benchmark runs random inputs "
                f"of one shape: give it with --dim {symbols[0]}=SIZE or --input-shape NAME=DIMS "
                "(dims= or input_shapes= in Python)"
            )
        inputs[spec.name] = random_array(shape, spec.dtype, rng)
    return inputs


class PeerError(EmberError):
    """onnxruntime, the peer Ember is compared with, cannot load or run the
    model (it lacks a kernel for an op or a type, or rejects an input)."""


def onnxruntime_session(model: ModelProto, threads: int = 1) -> Any:
    """An onnxruntime CPU session for `model` with `threads` intra-op threads;
    a model onnxruntime rejects is an `EmberError` naming onnxruntime."""
    try:
        import onnxruntime
    except ImportError:
        raise EmberError("comparing with onnxruntime needs it (pip install onnxruntime)") from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: unused-initializer warnings are noise here
    try:
        return onnxruntime.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # onnxruntime raises its own types and RuntimeError
        raise PeerError(f"onnxruntime cannot load the model: {first_line(error)}") from None


def run_onnxruntime(session: Any, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """`session.run` with onnxruntime's own errors (it may reject inputs
    that Ember accepts) reported as `EmberError`."""
    try:
        return session.run(None, dict(inputs))
    except Exception as error:
        raise PeerError(f"onnxruntime cannot run the model: {first_line(error)}") from None


ROUNDS = 4
"""The timed runs come in this many rounds, each a block of Ember's runs and
then a block of onnxruntime's: noise that lasts longer than a round hits
both engines alike, and neither engine runs while the other's threads are
still spinning after its last run (both pools spin a while after each
parallel section before they sleep; with as many threads as cores the
engine running would share its cores with them)."""


SETTLE_SECONDS = 0.05
"""The pause before each block: long enough for the other engine's pool to
stop spinning and go to sleep."""

SETTLE_CALLS = 3
"""Untimed calls after the pause, before a block's timed ones: the first
calls after a pause run slower while caches, clocks and the engine's
threads warm up again (on a two-core Xeon VM, the MLP's first call after a
50 ms pause took 1.5x its steady latency with Ember and 1.3x with
onnxruntime, the second 1.2x and 1.1x, the third within 5 %). Latencies are
steady-state ones, for both engines alike."""


def round_blocks(runs: int, rounds: int) -> list[int]:
    """`runs` split into at most `rounds` blocks whose sizes differ by one at most."""
    count = min(runs, rounds)
    return [runs // count + (1 if i < runs % count else 0) for i in range(count)]


def timed_calls(run: Callable[[], Any], times: int, seconds: list[float], settle: bool) -> Any:
    """Calls `run` `times` times, appending each call's seconds, after a
    pause (`SETTLE_SECONDS`) and, if `settle`, `SETTLE_CALLS` untimed calls;
    returns the last result."""
    time.sleep(SETTLE_SECONDS)
    result = None
    for _ in range(SETTLE_CALLS if settle else 0):
        result = run()
    for _ in range(times):
        start = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - start)
    return result


def alternating_medians(runs: Mapping[str, Callable[[], Any]], count: int) -> dict[str, float]:
    """The median seconds of each of `runs`, called `count` times each in
    `ROUNDS` rounds of a block per run (noise that lasts longer than a round
    hits them all alike)."""
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for block in round_blocks(count, ROUNDS):
        for name, run in runs.items():
            timed_calls(run, block, seconds[name], settle=True)
    return {name: float(np.median(times)) for name, times in seconds.items()}


def _imported(proto: ModelProto, input_shapes: Mapping[str, Sequence[int]] | None,
              dims: Mapping[str, Range] | None, report: CompileReport) -> Any:  # fmt: skip
    """The model's graph IR; an error before compiling for a model with
    symbolic dims, which has no shape to draw inputs of."""
    with report.stage("import"):
        module = import_onnx(proto, input_shapes, dims)
    func = entry_function(module)
    if has_symbols(func):
        spec_inputs(symbolic_specs(func)[0])
    return module


def benchmark_model(
    model: ModelSource,
    threads: int = 1,
    runs: int = 20,
    warmup: int = 3,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: Options = DEFAULT_OPTIONS,
    report: CompileReport | None = None,
    dims: Mapping[str, Range] | None = None,
    target: str = "cpu",
    cache: bool | None = None,
) -> BenchmarkResult:
    """Ember compiled for `target` (a name of `targets/registry.py`) against
    onnxruntime's CPU provider. Both engines run on `threads` threads:
    Ember's parallel loops are split among them (`options.threads` is
    replaced), and it is onnxruntime's intra-op thread count. With
    `options.profile` the result holds Ember's profile over the timed runs
    (and the machine's limits, measured here); with `options.trace` too, a
    trace of as many runs again, made after the timed ones (CPU only). A target that cannot run
    here (the cuda target without a GPU) raises its EmberError before any
    run."""
    threads = resolve_threads(threads)
    if runs < 1 or warmup < 0:
        raise EmberError(f"benchmark needs runs >= 1 and warmup >= 0 (got {runs}, {warmup})")
    proto = load_model(model)
    report = report or CompileReport()
    options = replace(options, threads=threads)
    start = time.perf_counter()
    compiled = None
    if keeps_compiled(target):
        options = with_best_schedules(options)  # read once: for the key and for the compile
        request = CacheRequest(model, options, input_shapes, dims)  # keyed as ember.compile
        compiled = compile_cached(request, lambda: _imported(proto, input_shapes, dims, report),
                                  report, cache)  # fmt: skip
    if compiled is None:
        module = _imported(proto, input_shapes, dims, report)
        compiled = target_named(target).compile(module, report, options)
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    session = onnxruntime_session(proto, threads)
    ort_session_seconds = time.perf_counter() - start
    inputs = spec_inputs(compiled.inputs)
    for _ in range(warmup):
        compiled.run(inputs)
        run_onnxruntime(session, inputs)
    if options.profile:
        compiled.reset_profile()
    ember_times: list[float] = []
    ort_times: list[float] = []
    for block in round_blocks(runs, ROUNDS):
        # A profile counts every call: no untimed ones then.
        ours = timed_calls(lambda: compiled.run(inputs), block, ember_times, not options.profile)
        theirs = timed_calls(lambda: run_onnxruntime(session, inputs), block, ort_times, True)
    error = max(
        float(np.max(np.abs(a.astype(np.float64) - b), initial=0)) for a, b in zip(ours, theirs)
    )
    profile = None
    if options.profile:
        from ember.machine_limits import measure_machine_limits

        profile = ProfileReport(compiled.profile(), sum(ember_times), runs,
                                measure_machine_limits(), threads)  # fmt: skip
    label = str(model) if isinstance(model, str) else "model"
    trace = _traced_runs(compiled, inputs, runs, label) if options.trace else None
    return BenchmarkResult(
        compile_seconds, ort_session_seconds,
        statistics.median(ember_times) * 1e3, statistics.median(ort_times) * 1e3,
        threads, runs, error, report.arena_bytes, report.naive_bytes, profile, trace,
    )  # fmt: skip


def _traced_runs(compiled: Any, inputs: dict[str, np.ndarray], runs: int,
                 name: str) -> dict[str, Any]:  # fmt: skip
    """`runs` more calls of `compiled` (built with `Options.trace`), recorded
    as a Chrome trace (`ember.targets.cpu.trace`)."""
    from ember.targets.cpu.trace import TraceRecorder, chrome_trace

    with TraceRecorder() as recorder:
        for _ in range(runs):
            recorder.run(lambda: compiled.run(inputs))
    return chrome_trace(recorder.events, compiled.report.kernel_costs, name, recorder.dropped)
