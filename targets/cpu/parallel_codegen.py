"""LLVM's optimisation and code generation of a module's parts on several cores.

llvmlite runs every call into LLVM under one process-wide lock, so threads
cannot compile two modules at once; other processes can. A worker is a
Python process of its own (`python -c`, importing only what compiling
needs: no `multiprocessing`, which would import the caller's `__main__`
again), started the first time a module is split (`module_parts.py`) and
kept for the life of this process. It reads a part's IR text from its
stdin and writes back the part's object (or LLVM's error): length-prefixed
pickles over its pipes. The worker parses, optimises and emits exactly as
this process does (`compile_part`, the host's target machine), so a part's
code does not depend on where it was compiled.

`compile_parts` hands the parts out as the workers and this thread become
free, the largest first, so a worker that is still starting takes fewer.
A worker that fails (it could not start, or died) is dropped and its part
compiled here; LLVM's own errors are the same here as there.

`EMBER_CODEGEN_WORKERS` sets the number of workers (default: the CPUs this
process may run on, less one, at most `MAX_WORKERS`; 0 compiles everything
here).
"""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

import llvmlite.binding as llvm

from ember.options import available_cores
from ember.targets.cpu.machine import host_target_machine
from ember.targets.cpu.optimize import emit_object, optimize, parse_ir
from ember.targets.cpu.timing import CompileTimes

WORKERS_ENV = "EMBER_CODEGEN_WORKERS"
MAX_WORKERS = 7
_LENGTH = struct.Struct("<Q")
_HIDDEN = {llvm.Linkage.internal, llvm.Linkage.private}


@dataclass(frozen=True)
class PartObject:
    """A part's object code, with the names the linker needs: the functions
    and globals it defines that C can see (`exported`), those it defines for
    other parts only (`shared`: hidden), and those it declares."""

    code: bytes
    exported: tuple[str, ...]
    shared: tuple[str, ...]
    declared: tuple[str, ...]


def part_object(module: llvm.ModuleRef, code: bytes) -> PartObject:
    """`code`, emitted from `module`, with `module`'s names."""
    values = [*module.functions, *module.global_variables]
    linked = [v for v in values if not v.is_declaration and v.linkage not in _HIDDEN]
    return PartObject(
        code,
        tuple(v.name for v in linked if v.visibility != llvm.Visibility.hidden),
        tuple(v.name for v in linked if v.visibility == llvm.Visibility.hidden),
        tuple(v.name for v in values if v.is_declaration),
    )


def compile_part(text: str, opt_level: int, times: CompileTimes | None = None) -> PartObject:
    """Parses, optimises (LLVM's O`opt_level` pipeline) and emits one part
    for the host CPU, adding each phase's seconds to `times` if given."""
    times = times or CompileTimes()
    machine = host_target_machine(opt_level)
    with times.measure("parse"):
        module = parse_ir(text, machine)
    return optimized_object(module, machine, opt_level, times)


def optimized_object(module: llvm.ModuleRef, machine: llvm.TargetMachine, opt_level: int | None,
                     times: CompileTimes) -> PartObject:  # fmt: skip
    """`module` optimised at `opt_level` (None: not at all) and emitted."""
    if opt_level is not None:
        times.optimize_s += optimize(module, machine, opt_level)
    with times.measure("codegen"):
        code = emit_object(module, machine)
    return part_object(module, code)


def worker_count() -> int:
    """The number of worker processes to compile parts on (see the module docstring)."""
    setting = os.environ.get(WORKERS_ENV, "").strip()
    if setting.isdigit():
        return min(int(setting), MAX_WORKERS)
    return min(available_cores() - 1, MAX_WORKERS)


def compile_parts(
    texts: Sequence[str], opt_level: int, here: Callable[[str], PartObject] | None = None
) -> list[PartObject]:
    """Each part compiled (`compile_part`, or `here` for those this thread
    takes), in the order of `texts`."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # the largest first
    with PartCompiler(opt_level, here, workers=len(texts) - 1) as compiler:
        for index in order:
            compiler.submit(texts[index])
        objects = compiler.finish()
    results: list[PartObject | None] = [None] * len(texts)
    for index, part in zip(order, objects):
        results[index] = part
    return [result for result in results if result is not None]


class PartCompiler:
    """Compiles parts as they are made: `submit` queues a part, which a
    codegen worker takes as soon as one is free, so LLVM works on the first
    parts while this thread makes the next; `finish` compiles what is still
    queued on this thread too and returns every part's object, in the order
    they were submitted. Used as a context manager, which lets the workers go
    (after their current part) however the block ends."""

    def __init__(self, opt_level: int, here: Callable[[str], PartObject] | None = None,
                 workers: int | None = None) -> None:  # fmt: skip
        self.opt_level = opt_level
        self.compile_here = here or (lambda text: compile_part(text, opt_level))
        self.texts: list[str] = []
        self.results: list[PartObject | None] = []
        self.pending: queue.Queue[int | None] = queue.Queue()  # None: a worker's stop mark
        count = worker_count() if workers is None else min(worker_count(), workers)
        self.workers = _idle_workers(count)
        self.helpers = [threading.Thread(target=self._serve, args=(worker,), daemon=True)
                        for worker in self.workers]  # fmt: skip
        for helper in self.helpers:
            helper.start()

    def submit(self, text: str) -> None:
        self.texts.append(text)
        self.results.append(None)
        self.pending.put(len(self.texts) - 1)

    def finish(self) -> list[PartObject]:
        while (index := self._take()) is not None:
            self.results[index] = self.compile_here(self.texts[index])
        self._release()
        for index, result in enumerate(self.results):  # parts a failing worker gave back late
            if result is None:
                self.results[index] = self.compile_here(self.texts[index])
        return [result for result in self.results if result is not None]

    def __enter__(self) -> PartCompiler:
        return self

    def __exit__(self, *exc: object) -> None:
        while self._take() is not None:  # the workers stop after their current part
            pass
        self._release()

    def _take(self) -> int | None:
        """A queued part's index, or None once none is queued."""
        try:
            return self.pending.get_nowait()
        except queue.Empty:
            return None

    def _serve(self, worker: _Worker) -> None:
        while (index := self.pending.get()) is not None:
            try:
                self.results[index] = worker.compile(self.texts[index], self.opt_level)
            except _WorkerFailed:
                _drop(worker)
                self.pending.put(index)  # another worker or this thread compiles it
                return

    def _release(self) -> None:
        """Stops the workers (each at the mark it takes next) and lets them go."""
        for _ in self.helpers:
            self.pending.put(None)
        for helper in self.helpers:
            helper.join()
        for worker in self.workers:
            if worker.busy.locked():
                worker.busy.release()
        self.helpers, self.workers = [], []


class _WorkerFailed(Exception):
    """The worker process did not answer (it could not start, or died)."""


class _Worker:
    """One worker process, used by one thread at a time."""

    def __init__(self) -> None:
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, sys.path))}
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment,
        )  # fmt: skip
        self.busy = threading.Lock()

    def compile(self, text: str, opt_level: int) -> PartObject:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            _send(self.process.stdin, (text, opt_level))
            reply = _receive(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as error:
            raise _WorkerFailed from error
        if isinstance(reply, PartObject):
            return reply
        raise _WorkerFailed(str(reply))

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


_workers: list[_Worker] = []
_workers_lock = threading.Lock()


def start_workers() -> None:
    """Starts the workers now (`worker_count()` in all), where a module is
    about to be lowered that will be split: a worker takes about half a
    second to start, which then passes while this process lowers it."""
    with _workers_lock:
        _start(worker_count() - len(_workers))


def _start(count: int) -> list[_Worker]:
    started: list[_Worker] = []
    for _ in range(count):
        try:
            started.append(_Worker())
        except OSError:
            break
    _workers.extend(started)
    return started


def _idle_workers(count: int) -> list[_Worker]:
    """Up to `count` workers no other thread is using, started as needed;
    the caller releases each one's `busy` lock when done."""
    taken: list[_Worker] = []
    with _workers_lock:
        for worker in _workers:
            if len(taken) < count and worker.busy.acquire(blocking=False):
                taken.append(worker)
        for worker in _start(count - len(taken)):
            worker.busy.acquire()
            taken.append(worker)
    return taken


def _drop(worker: _Worker) -> None:
    with _workers_lock:
        if worker in _workers:
            _workers.remove(worker)
    worker.process.kill()


@atexit.register
def _close_workers() -> None:
    with _workers_lock:
        for worker in _workers:
            worker.close()
        _workers.clear()


def _send(stream: IO[bytes], message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> object:
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        raise EOFError("the worker closed its pipe")
    data = stream.read(_LENGTH.unpack(header)[0])
    return pickle.loads(data)


def serve() -> None:
    """A worker's loop: parts from stdin, objects (or LLVM's error message)
    to stdout, until stdin closes. What else the worker prints goes to stderr."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    while True:
        try:
            text, opt_level = _receive(requests)  # type: ignore[misc]
        except EOFError:
            return
        try:
            reply: object = compile_part(text, opt_level)
        except Exception as error:  # reported to the caller, which compiles the part itself
            reply = str(error)
        _send(replies, reply)


__all__ = [
    "WORKERS_ENV",
    "PartCompiler",
    "PartObject",
    "compile_part",
    "compile_parts",
    "optimized_object",
    "part_object",
    "start_workers",
    "worker_count",
]
