"""Run LLVM IR in this process: ORC LLJIT over objects we emit ourselves.

We optimise and emit the object with our own target machine (so the JIT
runs the same code per function as an AOT `.so` contains) and hand ORC only
the object to link; a large model's module comes in parts, compiled on
several processes (`parallel_codegen.py`), whose objects ORC links
together. One LLJIT serves the whole process; each `JitModule` is a
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
from collections.abc import Iterable, Sequence
from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir

from ember.targets.cpu.errors import CodegenError
from ember.targets.cpu.machine import LLVM_OPT_LEVEL, host_target_machine, initialize
from ember.targets.cpu.optimize import parse_ir
from ember.targets.cpu.parallel_codegen import (
    PartObject,
    compile_part,
    compile_parts,
    optimized_object,
)
from ember.targets.cpu.runtime import PARALLEL_FOR, TRACE_RECORD, runtime_module
from ember.targets.cpu.timing import CompileTimes

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
    that has been through `optimize` already. `parts` are further parts of
    the same program as IR text (`module_parts.split_module`): with them,
    `source` must be text too, and all are compiled on this thread and the
    codegen workers at once (`parallel_codegen.py`), their objects linked
    into one library (for the host CPU: no `target_machine` then). `times`
    records the seconds this thread spent per phase; `module` keeps the
    optimised IR for inspection (None with parts). With no `source`,
    `objects` compiled already (`streamed_codegen.py`) are linked.
    `imported` names the functions the code calls outside itself (the
    thread pool's launch, libm, ...).
    """

    def __init__(
        self,
        source: str | ir.Module | llvm.ModuleRef | None = None,
        *,
        opt_level: int = LLVM_OPT_LEVEL,
        optimized: bool = False,
        target_machine: llvm.TargetMachine | None = None,
        parts: Sequence[str] = (),
        objects: Sequence[PartObject] = (),
    ) -> None:
        self.times = CompileTimes()
        tm = target_machine or host_target_machine(opt_level)
        self.module: llvm.ModuleRef | None = None
        if source is None:  # compiled already (`streamed_codegen.py`): linked alone
            pass
        elif parts:
            if not isinstance(source, str) or target_machine is not None:
                raise CodegenError("a module in parts is IR text, compiled for the host CPU")
            objects = compile_parts([source, *parts], opt_level,
                                    lambda text: compile_part(text, opt_level, self.times))  # fmt: skip
        else:
            module = source if isinstance(source, llvm.ModuleRef) else self._parse(source, tm)
            self.module = module
            objects = [self._compile(module, tm, None if optimized else opt_level)]
        with self.times.measure("link"):
            self._tracker = self._link(objects)

    def _parse(self, source: str | ir.Module, tm: llvm.TargetMachine) -> llvm.ModuleRef:
        with self.times.measure("parse"):
            return parse_ir(source, tm)

    def _compile(
        self, module: llvm.ModuleRef, tm: llvm.TargetMachine, opt_level: int | None
    ) -> PartObject:
        return optimized_object(module, tm, opt_level, self.times)

    def _link(self, objects: Sequence[PartObject]) -> Any:
        defined = {name for part in objects for name in (*part.exported, *part.shared)}
        declared = {name for part in objects for name in part.declared} - defined
        self.imported = frozenset(declared)  # what the code calls outside itself
        if declared & {PARALLEL_FOR, TRACE_RECORD}:
            thread_pool()
        builder = llvm.JITLibraryBuilder()
        for part in objects:
            builder.add_object_img(part.code)
        for name, address in _resolve_externals(declared).items():
            builder.import_symbol(name, address)
        # Libcalls that codegen introduces (memset, memcpy, ...) come from here.
        builder.add_current_process()
        self.symbols = [name for part in objects for name in part.exported]
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


def thread_pool() -> JitModule:
    """The process's thread pool, built and linked once (under a lock: two
    threads compiling at once must not make two pools) and never released;
    `ember_parallel_for` and `ember_trace_record` then resolve to it through
    LLVM's symbol search (`_resolve_externals`); `trace.py` reaches its
    trace functions through it."""
    with _pool_lock:
        if not _pool:
            pool = JitModule(str(runtime_module(llvm.get_process_triple(), export_trace=True)))
            llvm.add_symbol(PARALLEL_FOR, pool.address(PARALLEL_FOR))
            llvm.add_symbol(TRACE_RECORD, pool.address(TRACE_RECORD))
            _pool.append(pool)
        return _pool[0]


def _resolve_externals(names: Iterable[str]) -> dict[str, int]:
    """Addresses of declared externals (libm and the like); error if any is missing.

    Resolving them here gives a clear error naming the symbols, where ORC
    would only say that materialization failed.
    """
    found: dict[str, int] = {}
    missing: list[str] = []
    for name in sorted(names):
        if name.startswith("llvm."):
            continue
        address = llvm.address_of_symbol(name)
        if address:
            found[name] = address
        else:
            missing.append(name)
    if missing:
        raise CodegenError(f"unresolved external symbols in JIT module: {', '.join(missing)}")
    return found
