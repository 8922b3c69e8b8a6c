"""The host CPU as an LLVM target machine, created once per process.

Ember compiles for the machine it runs on (JIT) or for an identical one
(AOT `.so`), so the target machine carries the host CPU name and its full
feature string: without them LLVM assumes baseline x86-64 (SSE2) and the
vectorizer picks 128-bit vectors instead of AVX2/AVX-512 ones.
"""

from __future__ import annotations

import ctypes.util
import functools

import llvmlite.binding as llvm

from ember.targets.cpu.errors import CodegenError

LLVM_OPT_LEVEL = 2
"""The level of LLVM's IR pipeline and of code generation. The hot loops
reach LLVM as vector code already (micro-kernels) or get vectorised at O2
too (loop and SLP vectorisation stay on); O3's extra passes made bigger
objects, not faster ones. Measured on a Zen 5 core, O2 ran the CNNs, the MLP
and the GPT block within noise of O3 (ResNet-50 37 vs 39 ms, DenseNet-121
22.5 vs 23.5 ms) and compiled in 10 to 30% less time
(Inception-v1 10.7 instead of 15.6 s, ResNet-50 6.4 instead of 7.5 s); its
objects are a third smaller."""

# Features worth naming in a report; the full list is long and mostly noise.
_KEY_FEATURES = ("sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                 "avx512bf16", "avx512fp16", "amx-tile", "neon", "sve")  # fmt: skip


@functools.cache
def initialize() -> None:
    """Initialise llvmlite's native target and make libm visible to the JIT.

    Idempotent. Python itself links libm on Linux, but loading it
    permanently makes `expf`, `erff`, ... resolvable through LLVM's symbol
    search on every platform that has a separate libm.
    """
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm = ctypes.util.find_library("m")
    if libm is not None:
        try:
            llvm.load_library_permanently(libm)
        except RuntimeError as exc:
            raise CodegenError(f"cannot load the C math library {libm!r}: {exc}") from exc


def host_target_machine(opt_level: int = LLVM_OPT_LEVEL) -> llvm.TargetMachine:
    """The host CPU's target machine: PIC (the `.so` needs it), default code model.

    One per optimisation level for the whole process: creating one queries
    the host and costs more than compiling a small module.
    """
    return _host_target_machine(opt_level)


@functools.cache
def _host_target_machine(opt_level: int) -> llvm.TargetMachine:
    initialize()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=opt_level,
        reloc="pic",
        codemodel="default",
    )


@functools.cache
def host_cpu_description() -> str:
    """E.g. `znver4 (x86_64-unknown-linux-gnu; avx2, fma, avx512f)`, for reports."""
    initialize()
    features = llvm.get_host_cpu_features()
    present = [name for name in _KEY_FEATURES if features.get(name)]
    extras = f"; {', '.join(present)}" if present else ""
    return f"{llvm.get_host_cpu_name()} ({llvm.get_process_triple()}{extras})"
