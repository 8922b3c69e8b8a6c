"""CPU back end: LLVM IR to native code, in process (JIT) or as a `.so` (AOT).

Everything above this package produces one LLVM function with a C ABI for a
whole model; this package optimises it for the host CPU, and either links
it into the running process or into a shared library with a C header.

The names below are imported from their modules on first use, so that
importing a module of this package (`ember.targets.cpu.model`, which
`ember.compiler` needs) does not load LLVM: every `ember` and `ember-opt`
process would pay for it at start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {
    "PTHREAD_LINK_ARGS": "aot", "CField": "aot", "CFunction": "aot", "CStruct": "aot",
    "link_shared_library": "aot", "thread_pool_part": "aot",
    "write_c_header": "aot", "CNames": "c_names", "CodegenError": "errors", "JitModule": "jit",
    "to_llvmlite": "llvm_module", "LLVM_OPT_LEVEL": "machine",
    "host_cpu_description": "machine", "host_target_machine": "machine",
    "part_count": "module_parts", "split_module": "module_parts", "emit_object": "optimize",
    "parse_ir": "optimize",
    "compile_parts": "parallel_codegen", "compile_streamed": "streamed_codegen",
    "launches_parallel_loops": "streamed_codegen",
    "CompileTimes": "timing",
}  # fmt: skip
"""Each exported name and the module of this package that defines it (not
`optimize`, which is also the name of its module: import it from there)."""


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)


__all__ = sorted(_HOMES)
