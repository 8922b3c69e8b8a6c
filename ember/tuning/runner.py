"""Where candidates are measured: this process, a worker process, or a Dask cluster.

Every runner takes candidates one batch at a time and returns their
measurements in order (`measure` of `ember.tuning.measure`, a plain
function of picklable values).

- `InProcessRunner` measures here: the quickest to start (the tests use
  it), but a candidate whose code crashed would take `ember tune` with it.
- `ProcessRunner` (the default) measures in one worker process started
  with `spawn`, one candidate at a time (timings on one machine must not
  overlap). A candidate that kills its process is recorded as an error
  (`CRASHED`) and a new worker starts; one that runs past `timeout_s` is
  stopped the same way.
- `DaskRunner` sends candidates to the workers of a Dask cluster
  (`dask.distributed`): a scheduler's address (`tcp://HOST:8786`), or with
  none a `LocalCluster` of worker processes on this machine. Each worker
  runs one candidate at a time (`nthreads=1`); the candidates of a batch
  spread over the workers, and each measurement carries the build and the
  CPU of the worker that made it, so records from several kinds of machine
  land in one file, each applying to its own CPU. A worker that dies
  mid-measurement loses its candidate (recorded as `CRASHED`), not the
  batch.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from ember.errors import EmberError
from ember.tuning.measure import Candidate, Measurement, measure

CRASHED = "the measuring process died"
TIMEOUT_S = 600.0
"""The longest one candidate may take to compile and measure."""


class Runner(Protocol):
    """Measures candidates (see the module docstring)."""

    description: str

    def run(self, candidates: Sequence[Candidate]) -> list[Measurement]: ...

    def close(self) -> None: ...


def quiet_llvm() -> None:
    """Sends a measuring process's standard error to the null device: LLVM
    warns there, once per loop, where a candidate's vector width hint
    cannot be followed (the candidate then runs unvectorised, and is timed
    as such); a candidate's errors come back in its `Measurement`."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)


class InProcessRunner:
    """Measures in this process."""

    description = "this process"

    def run(self, candidates: Sequence[Candidate]) -> list[Measurement]:
        return [measure(c) for c in candidates]

    def close(self) -> None:
        pass


class ProcessRunner:
    """Measures in one worker process, restarted after a crash."""

    description = "a worker process"

    def __init__(self, timeout_s: float = TIMEOUT_S):
        self.timeout_s = timeout_s
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context,
                                             initializer=quiet_llvm)  # fmt: skip
        return self._pool

    def run(self, candidates: Sequence[Candidate]) -> list[Measurement]:
        results = []
        for candidate in candidates:
            future = self._executor().submit(measure, candidate)
            try:
                results.append(future.result(timeout=self.timeout_s))
            except BrokenProcessPool:
                self._restart()
                results.append(Measurement(candidate, candidate.schedule, error=CRASHED))
            except FutureTimeout:
                self._restart(kill=True)
                results.append(Measurement(
                    candidate, candidate.schedule,
                    error=f"took more than {self.timeout_s:.0f} s to compile and measure"))  # fmt: skip
        return results

    def _restart(self, kill: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self._restart()


class DaskRunner:
    """Measures on a Dask cluster's workers (see the module docstring)."""

    def __init__(self, address: str | None = None, workers: int = 2,
                 function: Callable[[Candidate], Measurement] = measure):  # fmt: skip
        self.function = function
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise EmberError(
                "measuring on a Dask cluster needs dask.distributed: pip install 'ember[tune]'"
            ) from None
        self._cluster: Any = None
        try:
            if address:
                self._client = Client(address, timeout="30s")
            else:
                # A candidate that kills its worker fails at once, not on every worker in turn.
                dask.config.set({"distributed.scheduler.allowed-failures": 0})
                self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                             processes=True, dashboard_address=None)  # fmt: skip
                self._client = Client(self._cluster)
        except (OSError, TimeoutError) as error:
            raise EmberError(f"cannot reach the Dask scheduler {address}: {error}") from None
        where = address or f"a LocalCluster of {workers} workers"
        self.description = f"Dask ({where})"

    def run(self, candidates: Sequence[Candidate]) -> list[Measurement]:
        futures = [self._client.submit(self.function, c, pure=False) for c in candidates]
        results = []
        for candidate, future in zip(candidates, futures, strict=True):
            try:
                results.append(future.result())
            except Exception as error:  # noqa: BLE001 - a lost worker surfaces as any error
                results.append(Measurement(candidate, candidate.schedule,
                                           error=f"{CRASHED} ({type(error).__name__})"))  # fmt: skip
        return results

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


__all__ = ["CRASHED", "DaskRunner", "InProcessRunner", "ProcessRunner", "Runner"]
