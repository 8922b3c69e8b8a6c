"""Run LLVM IR in this process: ORC LLJIT over objects we emit ourselves.

We optimise and emit the object with our own target machine (so the JIT
runs exactly the code an AOT `.so` would contain) and hand ORC only the
object to link. One LLJIT serves the whole process; each `JitModule` is a
separate JIT library whose code lives as long as the `JitModule` does.

Ember's thread pool (`runtime.py`) is built once per process, the first
time a module calls `ember_parallel_for`, into a library of its own that is
never unloaded; its symbol is then resolved for every later module, so all
compiled models share one pool.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import threading
from collections.abc import Sequence
from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir

from ember.targets.cpu.errors import CodegenError
from ember.targets.cpu.machine import LLVM_OPT_LEVEL, host_target_machine, initialize
from ember.targets.cpu.optimize import optimize, parse_ir
from ember.targets.cpu.runtime import PARALLEL_FOR, runtime_module
from ember.targets.cpu.timing import CompileTimes

_HIDDEN = {llvm.Linkage.internal, llvm.Linkage.private}
_library_ids = itertools.count()


@functools.cache
def _lljit() -> llvm.LLJIT:
    """The process-wide JIT. Never disposed: libraries must not outlive it."""
    initialize()
    # JITLink allocates each object in one block, so the small code model's
    # 32-bit PC-relative references (constant pools) always reach.
    jit = llvm.create_lljit_compiler(host_target_machine(), use_jit_link=True)
    jit._owned = True  # llvmlite then skips disposal, even at interpreter exit
    return jit


class JitModule:
    """Native code for one LLVM module, with its exported symbols by name.

    `source` may be IR text, an `llvmlite.ir.Module`, or a `ModuleRef` from
    `parse_ir` (it carries the host triple and data layout; it is optimised
    in place). Pass `optimized=True` to skip the IR pipeline for a module
    that has been through `optimize` already. `times` records the seconds
    spent per phase; `module` keeps the optimised IR for inspection.
    """

    def __init__(
        self,
        source: str | ir.Module | llvm.ModuleRef,
        *,
        opt_level: int = LLVM_OPT_LEVEL,
        optimized: bool = False,
        target_machine: llvm.TargetMachine | None = None,
    ) -> None:
        self.times = CompileTimes()
        tm = target_machine or host_target_machine(opt_level)
        if isinstance(source, llvm.ModuleRef):
            self.module = source
        else:
            with self.times.measure("parse"):
                self.module = parse_ir(source, tm)
        if not optimized:
            self.times.optimize_s += optimize(self.module, tm, opt_level)
        with self.times.measure("codegen"):
            try:
                self.object_code: bytes = tm.emit_object(self.module)
            except RuntimeError as exc:
                raise CodegenError(f"LLVM code generation failed: {exc}") from exc
        with self.times.measure("link"):
            self._tracker = self._link()

    def _link(self) -> Any:
        if any(f.name == PARALLEL_FOR and f.is_declaration for f in self.module.functions):
            _thread_pool()
        builder = llvm.JITLibraryBuilder().add_object_img(self.object_code)
        for name, address in _resolve_externals(self.module).items():
            builder.import_symbol(name, address)
        # Libcalls that codegen introduces (memset, memcpy, ...) come from here.
        builder.add_current_process()
        self.symbols = _exported_names(self.module)
        for name in self.symbols:
            builder.export_symbol(name)
        try:
            return builder.link(_lljit(), f"ember_jit_{next(_library_ids)}")
        except RuntimeError as exc:
            raise CodegenError(f"JIT linking failed: {exc}") from exc

    def address(self, name: str) -> int:
        """The address of an exported function or global variable."""
        if name not in self.symbols:
            known = ", ".join(sorted(self.symbols)) or "none"
            raise CodegenError(f"no exported symbol '{name}' in the JIT module (exported: {known})")
        return int(self._tracker[name])

    def function(self, name: str, restype: Any, argtypes: Sequence[Any]) -> Any:
        """A ctypes function for `name`; it keeps this module (its code) alive."""
        prototype = ctypes.CFUNCTYPE(restype, *argtypes)
        func = prototype(self.address(name))
        func._ember_jit_module = self  # type: ignore[attr-defined]
        return func


_pool_lock = threading.Lock()
_pool: list[JitModule] = []


def _thread_pool() -> JitModule:
    """The process's thread pool, built and linked once (under a lock: two
    threads compiling at once must not make two pools) and never released;
    `ember_parallel_for` then resolves to it through LLVM's symbol search
    (`_resolve_externals`)."""
    with _pool_lock:
        if not _pool:
            pool = JitModule(str(runtime_module(llvm.get_process_triple())))
            llvm.add_symbol(PARALLEL_FOR, pool.address(PARALLEL_FOR))
            _pool.append(pool)
        return _pool[0]


def _exported_names(module: llvm.ModuleRef) -> list[str]:
    """Defined functions and globals that C can see (not internal/private)."""
    values = itertools.chain(module.functions, module.global_variables)
    return [v.name for v in values if not v.is_declaration and v.linkage not in _HIDDEN]


def _resolve_externals(module: llvm.ModuleRef) -> dict[str, int]:
    """Addresses of declared externals (libm and the like); error if any is missing.

    Resolving them here gives a clear error naming the symbols, where ORC
    would only say that materialization failed.
    """
    found: dict[str, int] = {}
    missing: list[str] = []
    values = itertools.chain(module.functions, module.global_variables)
    for value in values:
        if not value.is_declaration or value.name.startswith("llvm."):
            continue
        address = llvm.address_of_symbol(value.name)
        if address:
            found[value.name] = address
        else:
            missing.append(value.name)
    if missing:
        raise CodegenError(f"unresolved external symbols in JIT module: {', '.join(missing)}")
    return found
