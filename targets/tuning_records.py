"""The tuning database: every measured schedule, in one SQLite table.

One row per measurement: the task's key (`ember.targets.cpu.schedule.tasks`), the
schedule's text, the median seconds and spread (`ember.tuning.measure`),
or the error that kept it from being timed, the threads it ran on, the
Ember build that compiled it (`version`: Ember's version and LLVM's), the
CPU that ran it (`cpu`: LLVM's name for it and a hash of its features), the date, and what the task is (op, extents, the model's
node names) for people reading the table.

A record counts only for the build and the CPU that made it: `best` looks
at the rows of this process's `identity()`; rows of another CPU are
ignored and rows of another Ember build are stale (`stale_count`: `ember
tune` and the apply pass say how many they pass over). Each row is
committed as it is added, in SQLite's WAL mode with a generous busy
timeout, so several `ember tune` processes can write one file at once and
a killed one loses at most the candidate it was measuring.

Where: `--records FILE`, else `$EMBER_RECORDS`, else the user's data
directory (`platformdirs.user_data_dir("ember")/records.sqlite`); a path
of `none` (or `$EMBER_RECORDS=0`) turns records off. `sqlite3` is imported
only where a file is opened: a compile without records never loads it.

A compile reads its file once (`best_schedules`): the fastest schedule
per task and a digest of them (`BestSchedules`), which the compile cache's
key hashes and the apply pass applies.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import statistics
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from ember.errors import EmberError

if TYPE_CHECKING:
    import sqlite3

    from ember.options import Options

FILE_NAME = "records.sqlite"
BUSY_TIMEOUT_S = 60.0
"""How long a writer waits for another's transaction to end."""
OFF = ("0", "none", "off", "no", "false")
MARGIN = 0.03
"""How much faster than the default (by median) a schedule must be to
replace it: a gain within the noise of one machine is no reason to leave
the default, whose behaviour inside the whole model is the known one."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    task TEXT NOT NULL,
    schedule TEXT NOT NULL,
    is_default INTEGER NOT NULL,
    seconds REAL,
    spread REAL,
    error TEXT NOT NULL,
    threads INTEGER NOT NULL,
    version TEXT NOT NULL,
    cpu TEXT NOT NULL,
    date TEXT NOT NULL,
    op TEXT NOT NULL,
    extents TEXT NOT NULL,
    names TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_task ON records (task, cpu, version);
"""


@dataclass(frozen=True)
class Identity:
    """Which build measured (`version`) and on which CPU (`cpu`)."""

    version: str
    cpu: str


@functools.cache
def identity() -> Identity:
    """This process's build and CPU (see the module docstring)."""
    import llvmlite.binding as llvm

    from ember.targets.cpu.machine import initialize

    initialize()
    try:
        ember = metadata.version("ember")
    except metadata.PackageNotFoundError:
        ember = "unknown"
    llvm_version = ".".join(map(str, llvm.llvm_version_info))
    features = ",".join(sorted(llvm.get_host_cpu_features().flatten().split(",")))
    digest = hashlib.sha256(features.encode()).hexdigest()[:8]
    return Identity(f"ember {ember}, llvm {llvm_version}", f"{llvm.get_host_cpu_name()}/{digest}")


@dataclass(frozen=True)
class Record:
    """One measured schedule of a task (a row of the table)."""

    task: str
    schedule: str
    is_default: bool
    seconds: float | None
    spread: float | None
    error: str
    threads: int
    op: str = ""
    extents: tuple[int, ...] = ()
    names: tuple[str, ...] = ()


def default_path() -> Path | None:
    """`$EMBER_RECORDS`, else the user's data directory's file; None where
    records are turned off."""
    given = os.environ.get("EMBER_RECORDS")
    if given is not None:
        return None if given.strip().lower() in OFF else Path(given).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("ember")) / FILE_NAME


def resolve_path(records: str | os.PathLike[str] | bool | None) -> Path | None:
    """The records file a compile reads: `records` (a path; False or `none`:
    none), or with None the default (`default_path`) where it exists."""
    if records is False or (isinstance(records, str) and records.strip().lower() in OFF):
        return None
    if records is None or records is True:
        path = default_path()
        return path if path is not None and path.exists() else None
    return Path(records).expanduser()


class Records:
    """The table in one SQLite file (created on first use)."""

    def __init__(self, path: str | os.PathLike[str]):
        import sqlite3

        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as connection:
                connection.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise EmberError(f"{self.path}: not a tuning records file ({error})") from None
        except OSError as error:
            raise EmberError(f"{self.path}: cannot open the tuning records ({error})") from None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        import sqlite3

        with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)) as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            with connection:  # one transaction: committed, or rolled back on an error
                yield connection

    def add(self, record: Record, who: Identity | None = None) -> None:
        """Stores one measurement (committed at once)."""
        who = who or identity()
        row = (record.task, record.schedule, int(record.is_default), record.seconds,
               record.spread, record.error, record.threads, who.version, who.cpu,
               time.strftime("%Y-%m-%d %H:%M:%S"), record.op,
               "x".join(map(str, record.extents)), ",".join(record.names))  # fmt: skip
        with self._connect() as connection:
            connection.execute(
                "INSERT INTO records (task, schedule, is_default, seconds, spread, error, threads,"
                " version, cpu, date, op, extents, names) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                row,
            )

    def of_task(self, task: str, who: Identity | None = None) -> list[Record]:
        """The task's records of this build and CPU, oldest first."""
        who = who or identity()
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT task, schedule, is_default, seconds, spread, error, threads, op, extents,"
                " names FROM records WHERE task = ? AND cpu = ? AND version = ? ORDER BY id",
                (task, who.cpu, who.version),
            ).fetchall()
        return [_record(row) for row in rows]

    def best(self, threads: int, who: Identity | None = None,
             margin: float = MARGIN) -> dict[str, Record]:  # fmt: skip
        """Per task, the fastest schedule measured by this build on this CPU:
        among those measured at `threads` threads where there are any, else
        among all; a schedule measured more than once counts by the median
        of its times (the record returned carries that median), and replaces
        the default only where it is `margin` faster (0 for a measurement
        without noise: the NPU's cycle model)."""
        who = who or identity()
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT task, schedule, is_default, seconds, spread, error, threads, op, extents,"
                " names FROM records WHERE cpu = ? AND version = ? AND error = ''"
                " AND seconds IS NOT NULL ORDER BY id",
                (who.cpu, who.version),
            ).fetchall()
        by_task: dict[str, list[Record]] = {}
        for record in map(_record, rows):
            by_task.setdefault(record.task, []).append(record)
        return {task: _fastest(found, threads, margin) for task, found in by_task.items()}

    def stale_count(self, who: Identity | None = None) -> int:
        """Rows of this CPU made by another Ember build (ignored)."""
        who = who or identity()
        with self._connect() as connection:
            (count,) = connection.execute(
                "SELECT COUNT(*) FROM records WHERE cpu = ? AND version != ?",
                (who.cpu, who.version),
            ).fetchone()
        return int(count)


@dataclass(frozen=True)
class BestSchedules:
    """The fastest schedule per task that the records file at `path` gives
    a compile at `threads` threads (`Records.best`), read once: `by_task`
    maps a task's key to its record, and `digest` hashes the (key,
    schedule) pairs (a new record that changes a choice changes it; the
    compile cache's key holds it)."""

    path: str
    threads: int
    by_task: Mapping[str, Record] = field(compare=False, repr=False)
    digest: str = ""


def best_schedules(path: str | os.PathLike[str], threads: int, who: Identity | None = None,
                   margin: float = MARGIN) -> BestSchedules:  # fmt: skip
    """The file's `Records.best` at `threads` threads, with its digest."""
    best = Records(path).best(threads, who, margin)
    chosen = sorted((key, record.schedule) for key, record in best.items())
    digest = hashlib.sha256(json.dumps(chosen).encode()).hexdigest()
    return BestSchedules(str(path), threads, best, digest)


def read_schedules(options: Options) -> BestSchedules | None:
    """`options.schedules` where they are those of its `records` file at its
    `threads` (options changed after the read are read again: None)."""
    schedules = options.schedules
    if schedules is None or (schedules.path, schedules.threads) != (options.records,
                                                                     options.threads):  # fmt: skip
        return None
    return schedules


def with_best_schedules(options: Options) -> Options:
    """`options` with the CPU's fastest schedules of its records file read
    (`Options.schedules`; as they are where read already, or where there
    is no file), so that the cache key and the compile share one read."""
    if not options.records or read_schedules(options) is not None:
        return options
    return replace(options, schedules=best_schedules(options.records, options.threads))


def _fastest(records: list[Record], threads: int, margin: float = MARGIN) -> Record:
    """The schedule of least median time among `records` (one task's), those
    at `threads` threads only where there are any; the default wherever no
    other is `margin` faster than it."""
    same = [r for r in records if r.threads == threads] or records
    times: dict[str, list[float]] = {}
    for record in same:
        times.setdefault(record.schedule, []).append(record.seconds or 0.0)
    median = {schedule: statistics.median(found) for schedule, found in times.items()}
    schedule = min(median, key=median.__getitem__)
    default = next((r.schedule for r in same if r.is_default), None)
    if default is not None and median[schedule] > (1 - margin) * median[default]:
        schedule = default
    first = next(r for r in same if r.schedule == schedule)
    return replace(first, seconds=median[schedule])


def _record(row: tuple[object, ...]) -> Record:
    task, schedule, is_default, seconds, spread, error, threads, op, extents, names = row
    return Record(str(task), str(schedule), bool(is_default),
                  None if seconds is None else float(seconds),  # type: ignore[arg-type]
                  None if spread is None else float(spread),  # type: ignore[arg-type]
                  str(error), int(threads), str(op),  # type: ignore[call-overload]
                  tuple(int(e) for e in str(extents).split("x") if e),
                  tuple(n for n in str(names).split(",") if n))  # fmt: skip


__all__ = ["BestSchedules", "Identity", "Record", "Records", "best_schedules", "default_path",
           "identity", "read_schedules", "resolve_path", "with_best_schedules"]  # fmt: skip
