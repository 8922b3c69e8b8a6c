"""The table of targets: every target by the name `--target` takes.

Each entry builds its target on first use, so naming a target loads only
that target's package (and the host target it is given, if any).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from ember.errors import EmberError
from ember.targets.target import Target


def _cpu() -> Target:
    from ember.targets.cpu.target import CpuTarget

    return CpuTarget()


def _npu() -> Target:
    from ember.targets.npu.target import NpuTarget

    return NpuTarget(host=target_named("cpu"))


def _cuda() -> Target:
    from ember.targets.cuda.target import CudaTarget

    return CudaTarget(host=target_named("cpu"))


TARGETS: dict[str, Callable[[], Target]] = {
    "cpu": _cpu,
    "cuda": _cuda,
    "npu": _npu,
}
"""Every target's name and how to build it."""


KEPT = frozenset({"cpu"})
"""The targets whose compiled models are kept: `ember compile`'s directory
loads back (`ember.load`) and the compile cache stores them
(`ember/cache.py`), without building the target (a hit loads none of its
pipeline)."""


def keeps_compiled(name: str) -> bool:
    """Whether target `name`'s compiled models load back and are cached (`KEPT`)."""
    return name in KEPT


def target_names() -> tuple[str, ...]:
    """The names of every target, in the table's order."""
    return tuple(TARGETS)


@cache
def target_named(name: str) -> Target:
    """The target called `name` (an EmberError listing them otherwise)."""
    if not isinstance(name, str) or name not in TARGETS:
        raise EmberError(f"target '{name}' is not available (available: {', '.join(TARGETS)})")
    return TARGETS[name]()


def target_for_onnx_device(device: str) -> Target | None:
    """The target that runs ONNX's `device` (`CPU`, `CUDA`), or None."""
    for name in TARGETS:
        target = target_named(name)
        if target.onnx_device == device:
            return target
    return None


__all__ = [
    "KEPT",
    "TARGETS",
    "keeps_compiled",
    "target_for_onnx_device",
    "target_named",
    "target_names",
]
