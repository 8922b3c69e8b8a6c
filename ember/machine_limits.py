"""What this machine can do, measured in the run that compares against it.

A profile's GFLOP/s means little without the ceiling it is under, and the
ceiling differs from one machine to the next (AVX2 or AVX-512, the memory
system), so it is measured, never assumed:

- `peak_gflops`: one core's float32 FMA throughput, from a loop generated
  here with llvmlite: independent FMA chains on the host's widest vectors
  (16 floats with AVX-512, 8 with AVX, 4 otherwise), enough chains to cover
  the FMA latency on every port;
- `bandwidth_gbs`: a large copy (NumPy's, on one core), counting the bytes
  read and written, from a buffer far larger than any cache;
- `sgemm_gflops`: NumPy's sgemm (its BLAS) at 1024^3, with the BLAS threads
  pinned through threadpoolctl when it is installed (`sgemm_threads` says
  what was pinned, or that nothing could be).

Each figure is the best of a few repetitions: a ceiling, not a typical time.
"""

from __future__ import annotations

import ctypes
import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ember.targets.cpu.jit import JitModule
from ember.targets.cpu.machine import host_cpu_description
from ember.targets.cpu.schedule.cpu_target import host_target

FMA_CHAINS = 12
"""Independent accumulators: FMA latency (4-5 cycles) times FMA ports (2)
is at most 10 in flight on the machines we know; 12 leaves headroom and
still fits AVX2's 16 registers."""
SGEMM_SIZE = 1024
COPY_BYTES = 256 << 20


@dataclass(frozen=True)
class MachineLimits:
    cpu: str
    vector_floats: int
    peak_gflops: float
    bandwidth_gbs: float
    sgemm_gflops: float
    sgemm_threads: str

    def format(self) -> str:
        return (
            f"machine: {self.cpu}\n"
            f"  peak {self.peak_gflops:.1f} GFLOP/s per core (FMA on {self.vector_floats} floats), "
            f"copy bandwidth {self.bandwidth_gbs:.1f} GB/s, "
            f"NumPy sgemm {SGEMM_SIZE}^3 {self.sgemm_gflops:.1f} GFLOP/s ({self.sgemm_threads})"
        )


def host_vector_floats() -> int:
    """float32 lanes of the host's widest vectors, as the schedules see them
    (`targets/cpu/schedule/cpu_target.py`); 4 where LLVM names no vector unit."""
    return host_target().vector_width(32) or 4


def _fma_loop_ir(lanes: int, chains: int) -> str:
    """`void ember_fma_peak(i64 n, float *out)`: n iterations of `chains`
    independent `acc = fma(acc, a, b)` on <lanes x float>, then the
    accumulators stored to `out` so that nothing is dead."""
    vec = f"<{lanes} x float>"

    def splat(value: str) -> str:
        return "<" + ", ".join([f"float {value}"] * lanes) + ">"

    a, b = splat("0x3FEFFFFFE0000000"), splat("0x3F50624DE0000000")  # ~1 - 2^-26, 1e-3
    phis = "\n".join(
        f"  %acc{i} = phi {vec} [ {splat('1.0')}, %entry ], [ %next{i}, %loop ]"
        for i in range(chains)
    )
    fmas = "\n".join(
        f"  %next{i} = call {vec} @llvm.fma.v{lanes}f32({vec} %acc{i}, {vec} {a}, {vec} {b})"
        for i in range(chains)
    )
    stores = "\n".join(
        f"  %p{i} = getelementptr {vec}, ptr %out, i64 {i}\n  store {vec} %next{i}, ptr %p{i}, align 4"
        for i in range(chains)
    )
    return f"""
declare {vec} @llvm.fma.v{lanes}f32({vec}, {vec}, {vec})
define void @ember_fma_peak(i64 %n, ptr %out) {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
{phis}
{fmas}
  %i.next = add i64 %i, 1
  %done = icmp sge i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
{stores}
  ret void
}}
"""


def _best_seconds(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def measure_peak_gflops(lanes: int | None = None, seconds: float = 0.05) -> float:
    """One core's float32 FMA GFLOP/s (two flops per lane per FMA)."""
    lanes = lanes or host_vector_floats()
    jit = JitModule(_fma_loop_ir(lanes, FMA_CHAINS))
    peak = jit.function("ember_fma_peak", None, [ctypes.c_int64, ctypes.c_void_p])
    out = np.zeros(lanes * FMA_CHAINS, dtype=np.float32)
    iterations = 1 << 16
    while _best_seconds(functools.partial(peak, iterations, out.ctypes.data), 1) < seconds / 4:
        iterations *= 4
    best = _best_seconds(functools.partial(peak, iterations, out.ctypes.data), 5)
    return iterations * FMA_CHAINS * lanes * 2 / best / 1e9


def measure_bandwidth_gbs(nbytes: int = COPY_BYTES) -> float:
    """GB/s of a large copy, bytes read plus bytes written."""
    source = np.ones(nbytes // 4, dtype=np.float32)
    target = np.empty_like(source)
    best = _best_seconds(lambda: np.copyto(target, source), 5)
    return 2 * nbytes / best / 1e9


@contextmanager
def _blas_threads(threads: int) -> Iterator[str]:
    """Pins the BLAS to `threads` inside the block if threadpoolctl is
    installed; yields what was done, for the report."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield "BLAS threads not pinned: pip install threadpoolctl"
        return
    with threadpool_limits(limits=threads, user_api="blas"):
        yield f"BLAS pinned to {threads} thread(s)"


def measure_sgemm_gflops(threads: int = 1, size: int = SGEMM_SIZE) -> tuple[float, str]:
    """NumPy's float32 matmul at size^3: GFLOP/s and how its threads were set."""
    rng = np.random.default_rng(0)
    a = rng.random((size, size), dtype=np.float32)
    b = rng.random((size, size), dtype=np.float32)
    c = np.empty((size, size), dtype=np.float32)
    with _blas_threads(threads) as note:
        best = _best_seconds(lambda: np.matmul(a, b, out=c), 5)
    return 2 * size**3 / best / 1e9, note


@functools.cache
def measure_machine_limits(threads: int = 1) -> MachineLimits:
    """All three figures (once per process and thread count)."""
    lanes = host_vector_floats()
    sgemm, note = measure_sgemm_gflops(threads)
    return MachineLimits(host_cpu_description(), lanes, measure_peak_gflops(lanes),
                         measure_bandwidth_gbs(), sgemm, note)  # fmt: skip


__all__ = [
    "MachineLimits",
    "host_vector_floats",
    "measure_bandwidth_gbs",
    "measure_machine_limits",
    "measure_peak_gflops",
    "measure_sgemm_gflops",
]
