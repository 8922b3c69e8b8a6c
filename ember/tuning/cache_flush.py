"""Evicting a buffer from the CPU's caches, so that a measured call starts cold.

A task's harness called over and over finds its weights and its buffers in
the caches, where inside the model they are not: between two calls of one
kernel the model runs all its other kernels, which evict them. A schedule
that reads its weights many times (a loop order that re-walks a panel, no
packing) is then fast alone and slow in the model. So `measure` evicts the
harness's weights and buffers before each timed call, as TVM's measurement
does (`enable_cpu_cache_flush`).

On x86-64 `flush(buffer)` runs `clflush` on each of the buffer's cache
lines and then `mfence`, in a function JIT-compiled once per process
(`llvm.x86.sse2.clflush`). Elsewhere (no such instruction) it writes and
reads a scratch buffer larger than the last-level cache instead
(`EVICTION_BYTES`), which costs more time per call but evicts as well.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence

import numpy as np

EVICTION_BYTES = 256 * 2**20
"""The scratch buffer streamed where there is no clflush: more than the
last-level cache of the CPUs we run on."""

LINE_BYTES = 64

_FLUSH_IR = f"""
declare void @llvm.x86.sse2.clflush(ptr)
declare void @llvm.x86.sse2.mfence()

define void @ember_flush(ptr %start, i64 %bytes) {{
entry:
  %empty = icmp eq i64 %bytes, 0
  br i1 %empty, label %done, label %loop
loop:
  %offset = phi i64 [0, %entry], [%next, %loop]
  %line = getelementptr i8, ptr %start, i64 %offset
  call void @llvm.x86.sse2.clflush(ptr %line)
  %next = add i64 %offset, {LINE_BYTES}
  %more = icmp ult i64 %next, %bytes
  br i1 %more, label %loop, label %done
done:
  call void @llvm.x86.sse2.mfence()
  ret void
}}
"""


@functools.cache
def _clflush() -> Callable[[int, int], None] | None:
    """`ember_flush(start, bytes)` JIT-compiled for this CPU, or None off x86-64."""
    import llvmlite.binding as llvm

    from ember.targets.cpu.jit import JitModule
    from ember.targets.cpu.machine import initialize

    initialize()
    if not llvm.get_process_triple().startswith(("x86_64", "amd64")):
        return None
    module = JitModule(_FLUSH_IR)
    return module.function("ember_flush", None, [ctypes.c_void_p, ctypes.c_int64])  # type: ignore[no-any-return]


@functools.cache
def _scratch() -> np.ndarray:
    return np.zeros(EVICTION_BYTES, dtype=np.uint8)


def flusher(buffers: Sequence[np.ndarray]) -> Callable[[], None]:
    """A function that evicts `buffers` from every cache level."""
    clflush = _clflush()
    if clflush is None:
        scratch = _scratch()

        def stream() -> None:
            np.add(scratch, 1, out=scratch)  # written and read back

        return stream
    spans = [(b.ctypes.data, b.nbytes) for b in buffers if b.nbytes]

    def flush() -> None:
        for start, nbytes in spans:
            clflush(start, nbytes)

    return flush


__all__ = ["flusher"]
