"""The thread pool generated as LLVM IR: every index runs once, on several
threads at once, and nested or concurrent launches finish."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import llvmlite.binding as llvm
import numpy as np
import pytest

from ember.lowering.loop_to_llvm.parallel import PARALLEL_FOR
from ember.targets.cpu import JitModule, parse_ir
from ember.targets.cpu.runtime import SET_THREADS, runtime_module

TASK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)

# A native task (no Python, no GIL): counts[i] += 1 for i in [from, to),
# and `launch(counts, n, threads)` that runs it through the pool.
COUNTING_IR = f"""
declare void @{PARALLEL_FOR}(ptr, ptr, i64, i64)
define internal void @count(ptr %counts, i64 %from, i64 %to) {{
entry:
  br label %loop
loop:
  %i = phi i64 [%from, %entry], [%next, %body]
  %more = icmp slt i64 %i, %to
  br i1 %more, label %body, label %done
body:
  %slot = getelementptr i64, ptr %counts, i64 %i
  %old = load i64, ptr %slot
  %new = add i64 %old, 1
  store i64 %new, ptr %slot
  %next = add i64 %i, 1
  br label %loop
done:
  ret void
}}
define void @launch(ptr %counts, i64 %n, i64 %threads) {{
  call void @{PARALLEL_FOR}(ptr @count, ptr %counts, i64 %n, i64 %threads)
  ret void
}}
"""


@pytest.fixture(scope="module")
def launch() -> Callable[[np.ndarray, int], None]:
    module = JitModule(COUNTING_IR)  # links the process's pool on first use
    function = module.function("launch", None, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64])

    def run(counts: np.ndarray, threads: int) -> None:
        function(counts.ctypes.data, counts.size, threads)

    return run


_POOLS: list[JitModule] = []
"""The test pool's code, kept for the life of the process as `jit.py` keeps
the process's: its workers never exit, and they wait on a condition
variable in the library's memory, which freeing it would give to the next
library that ORC loads."""


@pytest.fixture(scope="module")
def pool() -> tuple[JitModule, Callable[..., None], Callable[[int], None]]:
    """A pool of its own (not the process's), called with Python tasks."""
    module = JitModule(str(runtime_module(llvm.get_process_triple())))
    _POOLS.append(module)
    parallel_for = module.function(PARALLEL_FOR, None,
                                   [TASK, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64])  # fmt: skip
    set_threads = module.function(SET_THREADS, None, [ctypes.c_int64])
    return module, parallel_for, set_threads


@pytest.mark.parametrize(("n", "threads"), [(0, 2), (1, 2), (2, 2), (7, 3), (1000, 2),
                                            (1001, 3), (5, 8), (100_000, 4), (50, 1)])  # fmt: skip
def test_every_index_runs_once(launch: Callable[..., None], n: int, threads: int) -> None:
    counts = np.zeros(n, np.int64)
    launch(counts, threads)
    np.testing.assert_array_equal(counts, np.ones(n, np.int64))


def test_many_launches_in_a_row(launch: Callable[..., None]) -> None:
    counts = np.zeros(4096, np.int64)
    for round_ in range(3000):
        launch(counts, 2 + round_ % 3)
    np.testing.assert_array_equal(counts, np.full(4096, 3000))


def test_chunks_run_on_several_threads_at_once(pool: tuple) -> None:
    """Each of two chunks waits for the other to start: only a second thread
    running at the same time lets the launch finish (a timeout fails it)."""
    _, parallel_for, _ = pool
    both_started = threading.Barrier(2, timeout=60)
    threads: set[int] = set()

    def chunk(ctx: int | None, start: int, stop: int) -> None:
        threads.add(threading.get_ident())
        both_started.wait()

    task = TASK(chunk)
    parallel_for(task, None, 2, 2)
    assert len(threads) == 2 and not both_started.broken


def test_each_thread_starts_with_its_own_share(pool: tuple) -> None:
    """The caller owns the first half of the chunks and the worker the
    second (two threads, eight chunks): each starts with its own share, so
    consecutive launches over the same data find it in the same core's
    cache. Both first chunks wait for each other, so neither thread can run
    the other's share first."""
    _, parallel_for, _ = pool
    both_started = threading.Barrier(2, timeout=60)
    first: dict[int, tuple[int, int]] = {}
    lock = threading.Lock()

    def chunk(ctx: int | None, start: int, stop: int) -> None:
        with lock:
            is_first = threading.get_ident() not in first
            first.setdefault(threading.get_ident(), (start, stop))
        if is_first:
            both_started.wait()

    task = TASK(chunk)
    parallel_for(task, None, 8, 2)
    assert first[threading.get_ident()] == (0, 1)
    assert sorted(first.values()) == [(0, 1), (4, 5)]


def test_sleeping_workers_join_and_wake_a_blocked_caller(pool: tuple) -> None:
    """After a pause far longer than the spin the worker sleeps: the next
    launch wakes it (both chunks wait for each other, so the launch needs
    two threads at once). The worker's chunk then outlasts the caller's
    spin, so the caller blocks, and the last worker out must wake it."""
    _, parallel_for, _ = pool
    for _ in range(3):
        time.sleep(0.05)
        assert _threads_of_a_launch_whose_worker_is_slow(parallel_for) == 2


def _threads_of_a_launch_whose_worker_is_slow(parallel_for: Callable[..., None]) -> int:
    """Runs two chunks that wait for each other, the worker's (the second)
    then sleeping 20 ms; returns how many threads ran them (fails the test
    if the launch does not return)."""
    both_started = threading.Barrier(2, timeout=60)
    threads: set[int] = set()

    def chunk(ctx: int | None, start: int, stop: int) -> None:
        threads.add(threading.get_ident())
        both_started.wait()
        if start == 1:
            time.sleep(0.02)

    task = TASK(chunk)
    caller = threading.Thread(target=parallel_for, args=(task, None, 2, 2))
    caller.start()
    caller.join(timeout=60)
    assert not caller.is_alive() and not both_started.broken
    return len(threads)


def test_nested_launch_runs_serially(pool: tuple) -> None:
    """A launch from inside a chunk finds the pool busy and runs its whole
    range on its own thread instead of waiting for workers (no deadlock)."""
    _, parallel_for, _ = pool
    inner_ranges: list[tuple[int, int]] = []
    outer_ranges: list[tuple[int, int]] = []
    lock = threading.Lock()

    def inner(ctx: int | None, start: int, stop: int) -> None:
        with lock:
            inner_ranges.append((start, stop))

    inner_task = TASK(inner)

    def outer(ctx: int | None, start: int, stop: int) -> None:
        with lock:
            outer_ranges.append((start, stop))
        parallel_for(inner_task, None, 10, 2)

    outer_task = TASK(outer)
    parallel_for(outer_task, None, 4, 2)
    assert sorted(i for a, b in outer_ranges for i in range(a, b)) == list(range(4))
    assert inner_ranges == [(0, 10)] * len(outer_ranges)


def test_concurrent_launches_from_two_threads(launch: Callable[..., None]) -> None:
    """Two application threads launching at once: one gets the pool, the
    other runs alone; both cover their ranges."""
    arrays = [np.zeros(20_000, np.int64) for _ in range(2)]

    def work(counts: np.ndarray) -> None:
        for _ in range(200):
            launch(counts, 2)

    runners = [threading.Thread(target=work, args=(a,)) for a in arrays]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join(timeout=120)
    assert not any(runner.is_alive() for runner in runners)
    for counts in arrays:
        np.testing.assert_array_equal(counts, np.full(counts.size, 200))


def test_set_threads_overrides_the_count(pool: tuple) -> None:
    _, parallel_for, set_threads = pool
    threads: list[int] = []

    def chunk(ctx: int | None, start: int, stop: int) -> None:
        threads.append(threading.get_ident())

    task = TASK(chunk)
    set_threads(1)
    try:
        parallel_for(task, None, 64, 4)
    finally:
        set_threads(0)
    assert set(threads) == {threading.get_ident()} and len(threads) == 1


def _affinities_of_a_two_thread_launch(parallel_for: Callable[..., None]) -> dict[int, set[int]]:
    """Each thread's CPU affinity during a launch on two threads (both
    chunks wait for each other, so two threads run it)."""
    both_started = threading.Barrier(2, timeout=60)
    seen: dict[int, set[int]] = {}

    def chunk(ctx: int | None, start: int, stop: int) -> None:
        seen[threading.get_ident()] = os.sched_getaffinity(0)
        both_started.wait()

    task = TASK(chunk)
    parallel_for(task, None, 2, 2)
    return seen


needs_two_cpus = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="binding workers needs Linux and two CPUs",
)


@needs_two_cpus
def test_a_worker_binds_to_one_cpu_of_the_process(pool: tuple) -> None:
    if os.environ.get("EMBER_BIND_THREADS", "").startswith("0"):
        pytest.skip("EMBER_BIND_THREADS=0 in this environment")
    _, parallel_for, _ = pool
    allowed = os.sched_getaffinity(0)
    seen = _affinities_of_a_two_thread_launch(parallel_for)
    worker = next(cpus for ident, cpus in seen.items() if ident != threading.get_ident())
    assert len(worker) == 1 and worker <= allowed
    assert seen[threading.get_ident()] == allowed  # the caller is left as it was


# A pool of its own in a fresh process (binding is decided at the first
# launch): prints the worker's affinity and the caller's during a launch.
_FRESH_POOL = f"""
import ctypes, json, os, sys, threading
import llvmlite.binding as llvm
from ember.targets.cpu import JitModule
from ember.targets.cpu.runtime import runtime_module
sys.path.insert(0, {os.path.dirname(__file__)!r})
from test_runtime import TASK, PARALLEL_FOR, _affinities_of_a_two_thread_launch
cpus = json.loads(sys.argv[1])
if cpus:
    os.sched_setaffinity(0, cpus)
module = JitModule(str(runtime_module(llvm.get_process_triple())))
parallel_for = module.function(PARALLEL_FOR, None, [TASK, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64])
seen = _affinities_of_a_two_thread_launch(parallel_for)
caller = seen.pop(threading.get_ident())
print(json.dumps([sorted(caller), sorted(seen.popitem()[1])]))
"""


def _fresh_pool_affinities(cpus: list[int], bind: str | None) -> tuple[set[int], set[int]]:
    env = {k: v for k, v in os.environ.items() if k != "EMBER_BIND_THREADS"}
    if bind is not None:
        env["EMBER_BIND_THREADS"] = bind
    run = subprocess.run([sys.executable, "-c", _FRESH_POOL, json.dumps(cpus)], env=env,
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    caller, worker = json.loads(run.stdout)
    return set(caller), set(worker)


@needs_two_cpus
def test_workers_stay_unbound_when_told_to() -> None:
    allowed = os.sched_getaffinity(0)
    assert _fresh_pool_affinities([], "0") == (allowed, allowed)
    caller, worker = _fresh_pool_affinities([], "1")
    assert caller == allowed and len(worker) == 1 and worker <= allowed


@needs_two_cpus
def test_workers_stay_unbound_without_a_cpu_each() -> None:
    """Allowed one CPU, the process still runs two threads (the worker
    inherits the caller's affinity and is not bound elsewhere)."""
    cpu = min(os.sched_getaffinity(0))
    assert _fresh_pool_affinities([cpu], None) == ({cpu}, {cpu})


def test_runtime_verifies_and_exports_only_its_api() -> None:
    module = parse_ir(str(runtime_module(llvm.get_process_triple(), "m_set_threads")))
    exported = {f.name for f in module.functions
                if not f.is_declaration and f.linkage == llvm.Linkage.external}  # fmt: skip
    assert exported == {PARALLEL_FOR, "m_set_threads"}
    assert all(g.linkage == llvm.Linkage.internal for g in module.global_variables)
