"""The caches before a measured call: as the model leaves them, not as the last call did.

A task's harness called over and over finds everything it reads in the
first-level and second-level caches, where inside the model it does not:
between two calls of one kernel the model runs its other kernels. Just
before a kernel runs in the model, the buffers it reads were mostly just
written by the kernels before it (still in the L2 cache where they fit),
and its weights were last read one inference ago (evicted to the last
level, or to memory). So `warm_inputs(weights, buffers)` gives a function
that, before each timed call, evicts the first two levels (reading a
scratch buffer of twice the L2 size pushes what they hold down to the
last level) and then reads the buffers (the activations) back in.

Timed hot, a schedule that re-reads its weights many times wins alone and
loses in the model; timed with everything flushed to memory (TVM's
`enable_cpu_cache_flush`), a schedule that streams from memory wins alone
while its inputs sit in L2 in the model. On SqueezeNet's 1x1 convolution
of 128 to 16 channels at 55 x 55 the default took 197 us inside the
model, 88 us hot alone, 408 us with its buffers flushed to memory, and
this warm-input state gives the number nearest the model's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from ember.targets.cpu.schedule.cpu_target import host_target


@functools.cache
def _scratch() -> np.ndarray:
    """Twice the host's L2 cache in float32s (read, never written)."""
    return np.ones(2 * host_target().l2_bytes // 4, dtype=np.float32)


def _readable(buffer: np.ndarray) -> np.ndarray:
    """`buffer`'s bytes as float32s where they divide into them (a fast sum)."""
    flat = buffer.reshape(-1).view(np.uint8)
    whole = flat.nbytes // 4 * 4
    return flat[:whole].view(np.float32)


def warm_inputs(buffers: Sequence[np.ndarray]) -> Callable[[], None]:
    """A function that leaves the caches as a kernel finds them in the model
    (see the module docstring): L1 and L2 hold `buffers`, the rest is
    further out."""
    scratch = _scratch()
    inputs = [_readable(b) for b in buffers if b.nbytes >= 4]

    def prepare() -> None:
        np.add.reduce(scratch)
        for data in inputs:
            np.add.reduce(data)

    return prepare


__all__ = ["warm_inputs"]
