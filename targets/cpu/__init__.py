"""CPU back end: LLVM IR to native code, in process (JIT) or as a `.so` (AOT).

Everything above this package produces one LLVM function with a C ABI for a
whole model; this package optimises it for the host CPU, and either links
it into the running process or into a shared library with a C header.
"""

from __future__ import annotations

from ember.targets.cpu.aot import (
    PTHREAD_LINK_ARGS,
    CField,
    CFunction,
    CStruct,
    calls_thread_pool,
    link_shared_library,
    thread_pool_part,
    write_c_header,
)
from ember.targets.cpu.c_names import CNames
from ember.targets.cpu.errors import CodegenError
from ember.targets.cpu.jit import JitModule
from ember.targets.cpu.llvm_module import to_llvmlite
from ember.targets.cpu.machine import LLVM_OPT_LEVEL, host_cpu_description, host_target_machine
from ember.targets.cpu.module_parts import part_count, split_module
from ember.targets.cpu.optimize import emit_object, optimize, parse_ir
from ember.targets.cpu.parallel_codegen import compile_parts
from ember.targets.cpu.timing import CompileTimes

__all__ = [
    "PTHREAD_LINK_ARGS",
    "LLVM_OPT_LEVEL",
    "CField",
    "CFunction",
    "CNames",
    "CStruct",
    "CodegenError",
    "CompileTimes",
    "JitModule",
    "calls_thread_pool",
    "compile_parts",
    "emit_object",
    "host_cpu_description",
    "host_target_machine",
    "link_shared_library",
    "optimize",
    "parse_ir",
    "part_count",
    "split_module",
    "thread_pool_part",
    "to_llvmlite",
    "write_c_header",
]
