"""What schedules need to know of a CPU: its vector registers and caches.

`CpuTarget` is a small description: the width of a vector register in
bits, how many the register file holds, whether the CPU has a fused
multiply-add (without one, a vector fma is a library call per lane, and a
micro-kernel does not pay), and the data cache sizes. `cpu_target(name)`
gives the description of a named CPU (`NAMED_TARGETS`, which tests pin so
that the schedules they check do not depend on the machine), or of the host
for `host`: its vector unit from LLVM's view of the host CPU's features
(`llvm.get_host_cpu_features()`, what the JIT compiles for) and its caches
from `/sys/devices/system/cpu/cpu0/cache` when Linux has it, else typical
sizes.

`generic` has no vector unit: with it, `tensor-default-schedule` attaches
the scalar default everywhere (what `loop-generate` falls back to).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as llvm

from ember.errors import EmberError


@dataclass(frozen=True)
class CpuTarget:
    """A CPU as schedules see it (see the module docstring)."""

    name: str
    vector_bits: int
    """The width of one vector register; 0: no vector unit worth using."""
    registers: int
    """How many vector registers there are (x86-64: 16, AVX-512: 32)."""
    fma: bool
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    l3_bytes: int = 32 * 1024 * 1024

    def vector_width(self, element_bits: int) -> int:
        """Elements of `element_bits` bits per vector register (0: none)."""
        return self.vector_bits // element_bits

    @property
    def has_micro_kernels(self) -> bool:
        """Whether contractions run as vector micro-kernels here."""
        return self.vector_bits > 0 and self.fma


NAMED_TARGETS: dict[str, CpuTarget] = {
    target.name: target
    for target in (
        CpuTarget("generic", 0, 16, False),
        CpuTarget("x86-64", 128, 16, False),  # SSE2: no fma
        CpuTarget("haswell", 256, 16, True),  # AVX2 + FMA
        CpuTarget("znver3", 256, 16, True, l2_bytes=512 * 1024),
        CpuTarget("skylake-avx512", 512, 32, True),
        CpuTarget("znver4", 512, 32, True),
        CpuTarget("neoverse-v1", 128, 32, True),  # NEON (SVE left out)
    )
}
"""The CPUs a schedule can be asked for by name (`cpu=haswell`)."""

HOST = "host"


def cpu_target(name: str) -> CpuTarget:
    """The description of CPU `name`: one of `NAMED_TARGETS` or `host`; any
    other name is an `EmberError` listing them."""
    if name == HOST:
        return host_target()
    target = NAMED_TARGETS.get(name)
    if target is None:
        known = ", ".join([HOST, *NAMED_TARGETS])
        raise EmberError(f"unknown CPU '{name}' for schedules: expected one of {known}")
    return target


# (feature, vector bits, registers), the widest first: what LLVM uses when
# the feature is on. AArch64's NEON has 32 registers of 128 bits and an fma.
_VECTOR_UNITS = (("avx512f", 512, 32), ("avx", 256, 16), ("neon", 128, 32), ("sse2", 128, 16))


@functools.cache
def host_target() -> CpuTarget:
    """The host CPU's description (computed once per process)."""
    features = llvm.get_host_cpu_features()
    bits, registers = next(((b, r) for f, b, r in _VECTOR_UNITS if features.get(f)), (0, 16))
    fma = bool(features.get("fma") or features.get("neon"))
    caches = _cache_sizes(Path("/sys/devices/system/cpu/cpu0/cache"))
    defaults = CpuTarget(HOST, 0, 0, False)
    return CpuTarget(
        llvm.get_host_cpu_name() or HOST, bits, registers, fma,
        l1_bytes=caches.get(1, defaults.l1_bytes), l2_bytes=caches.get(2, defaults.l2_bytes),
        l3_bytes=caches.get(3, defaults.l3_bytes),
    )  # fmt: skip


_UNITS = {"K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024}


def _cache_sizes(folder: Path) -> dict[int, int]:
    """The size in bytes of each level's data (or unified) cache that Linux
    describes under `folder`; nothing where it does not."""
    sizes: dict[int, int] = {}
    for index in sorted(folder.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        scale = _UNITS.get(text[-1], 1)
        digits = text[:-1] if text[-1] in _UNITS else text
        if digits.isdigit():
            sizes[level] = int(digits) * scale
    return sizes


__all__ = ["HOST", "NAMED_TARGETS", "CpuTarget", "cpu_target", "host_target"]
