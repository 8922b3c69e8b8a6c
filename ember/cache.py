"""The persistent compile cache: a model compiled once is loaded after.

`ember.compile`, `ember run`, `ember bench` and the ONNX backend (CPU
target) look a model up here before compiling it. The key is a SHA-256 over
the model's bytes, every option that changes the code (opt level, layout,
disabled passes, threads, input shapes, dims, `specialize`, and for
`ember run` the sizes a symbolic model was pinned to; the schedules the
tuning records give it: `BestSchedules.digest`, read once with the
compile's `Options.schedules`) and the build of
`ember.load.build_identity` (Ember's version and source hash, llvmlite,
LLVM, target triple, CPU name and features). An entry is what `ember
compile` writes (library, header, weights, manifest with the checksums), so
a hit only checks, loads and maps it (`ember.load`).

Where: `$EMBER_CACHE_DIR`, else the user's cache directory (`$XDG_CACHE_HOME`
or `~/.cache` on Linux, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on
Windows) under `ember`. `$EMBER_CACHE=0` (or `cache=False`, `--no-cache`)
turns it off; `$EMBER_CACHE_SIZE` caps its size (bytes, or with a K, M, G
suffix; default `DEFAULT_SIZE`), the least recently used entries evicted
past it.

Safety: an entry is built in a temporary directory and renamed into place
(a rename is atomic, and one onto an existing entry fails, so two writers
leave one entry); a per-key lock file (`flock`) makes a second process
compiling the same model wait for the first and load its entry. An entry
whose files fail their checksums, or whose manifest cannot be read, is
reported in one warning, removed and rebuilt. A cache directory that cannot
be written (read-only, full) gives one warning and the model compiles
without the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from ember.errors import EmberError
from ember.frontends.onnx.loader import ModelSource, describe_source, load_model
from ember.load_back import (
    build_identity,
    load_checked,
    read_manifest,
    stamp_manifest,
)
from ember.options import Options
from ember.report import CompileReport

DEFAULT_SIZE = 4 * 2**30
"""The default cap on the cache's size: 4 GiB (ResNet-50's entry is about 100 MB)."""
LAYOUT = "v1"
"""The cache's layout version: a folder of its own under the cache directory."""
NAME = "model"
"""The name of every entry's files (`libmodel.so`, `model.json`, ...)."""
USED = "used"
"""A file in each entry whose modification time is its last use (for eviction)."""
_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


class CacheWarning(UserWarning):
    """The cache could not be used or held a corrupted entry (compiling went on)."""


def cache_enabled(cache: bool | None = None) -> bool:
    """`cache` if given, else whether `$EMBER_CACHE` is not `0`."""
    if cache is not None:
        return cache
    return os.environ.get("EMBER_CACHE", "1").strip().lower() not in ("0", "no", "off", "false")


def default_directory() -> Path:
    """The user's cache directory for Ember (see the module docstring)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ember"
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "ember" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "ember"


def cache_directory() -> Path:
    """`$EMBER_CACHE_DIR`, else `default_directory()`."""
    given = os.environ.get("EMBER_CACHE_DIR")
    return Path(given).expanduser() if given else default_directory()


def parse_size(text: str) -> int:
    """`500M` -> 524288000; bytes, or with a K, M, G or T suffix (binary)."""
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = value[-1:] if value[-1:] in _SUFFIXES and value[-1:] else ""
    try:
        number = float(value[: len(value) - len(unit)])
    except ValueError:
        raise EmberError(
            f"EMBER_CACHE_SIZE: '{text}' is not a size like 2G, 500M or 1000000"
        ) from None
    if number < 0:
        raise EmberError(f"EMBER_CACHE_SIZE: '{text}' is negative")
    return int(number * _SUFFIXES[unit])


def size_limit() -> int:
    given = os.environ.get("EMBER_CACHE_SIZE")
    return parse_size(given) if given else DEFAULT_SIZE


def model_digest(model: ModelSource) -> str | None:
    """SHA-256 of the model's bytes (a path's file, the bytes, a proto
    serialised); None where the cache does not apply: a file that cannot be
    read (the compile says why) or whose weights lie in external data files,
    which the cache does not follow."""
    if isinstance(model, (str, os.PathLike)):
        try:
            data = Path(model).read_bytes()
        except OSError:
            return None
        if _uses_external_data(data):
            return None
    elif isinstance(model, bytes):
        data = model
    else:
        data = load_model(model).SerializeToString(deterministic=True)
    return hashlib.sha256(data).hexdigest()


def _uses_external_data(data: bytes) -> bool:
    from onnx import ModelProto
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    try:
        proto = ModelProto.FromString(data)
    except Exception:  # noqa: BLE001 - not a model: the compile says why
        return False
    return any(uses_external_data(t) for t in _get_all_tensors(proto))


@dataclass(frozen=True)
class CacheRequest:
    """What is compiled: the model, `Options`, the importer's arguments and
    `specialize` (as `ember compile` takes it); `extra` adds anything else
    that shapes the code (for `ember run`, the sizes it pinned)."""

    model: ModelSource
    options: Options
    input_shapes: Mapping[str, Any] | None = None
    dims: Mapping[str, Any] | None = None
    specialize: Any = "none"
    extra: Mapping[str, Any] | None = None

    def key(self) -> str | None:
        """The entry's key (hex), or None where the model is not cacheable."""
        digest = model_digest(self.model)
        if digest is None:
            return None
        options = self.options
        material = {
            "model": digest, "target": "cpu", "opt_level": options.opt_level,
            "layout": options.layout, "disabled": sorted(options.disabled),
            "threads": options.threads, "input_shapes": _plain(self.input_shapes),
            "dims": _plain(self.dims), "specialize": _plain(self.specialize),
            "extra": _plain(self.extra), "build": build_identity(),
            "records": records_digest(options),
        }  # fmt: skip
        text = json.dumps(material, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def records_digest(options: Options) -> str | None:
    """A hash of the schedules the records file of `options` gives the
    compile (None without records): a new record changes the key. The
    schedules the compile read already (`Options.schedules`), else read
    here."""
    if not options.records:
        return None
    from ember.targets.tuning_records import with_best_schedules

    schedules = with_best_schedules(options).schedules
    assert schedules is not None
    return schedules.digest


def _plain(value: Any) -> Any:
    """A JSON-able, order-independent form of an argument (no mapping and an
    empty one are the same)."""
    if isinstance(value, Mapping) and not value:
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class CompileCache:
    """The cache at `directory` (see the module docstring)."""

    def __init__(self, directory: Path | None = None, limit: int | None = None):
        self.root = directory or cache_directory()
        self.directory = self.root / LAYOUT
        self.limit = size_limit() if limit is None else limit

    @property
    def entries(self) -> Path:
        return self.directory / "entries"

    def entry(self, key: str) -> Path:
        return self.entries / key

    def compiled(self, request: CacheRequest, build: Callable[[], ModuleOp],
                 report: CompileReport) -> Any | None:  # fmt: skip
        """The model of `request` from its entry, or compiled (`build`
        imports it; the compile and the load fill `report`) and stored; None
        where the cache cannot be used (the model is not cacheable or the
        directory cannot be written: then one warning), and the caller
        compiles as it would without a cache."""
        key = request.key()
        if key is None:
            return None
        report.cache_key = key
        hit = self._load(key, report)
        if hit is not None:
            return hit
        try:
            for folder in (self.entries, self.directory / "tmp", self.directory / "locks"):
                folder.mkdir(parents=True, exist_ok=True)
            with self._lock(key):
                hit = self._load(key, report)  # another process may have stored it meanwhile
                if hit is not None:
                    return hit
                self._store(key, request, build, report)
        except _Uncacheable:
            return None
        except OSError as error:
            _warn_once(f"the compile cache at {self.root} cannot be written "
                       f"({error.strerror or error}): compiling without it")  # fmt: skip
            return None
        self.evict(keep=key)
        with report.stage(f"cache store {key[:16]}"):
            return self._load(key, report, stored=True)

    def _load(self, key: str, report: CompileReport, stored: bool = False) -> Any | None:
        """The entry's model, or None if there is none (a corrupted one is
        removed, with one warning)."""
        entry = self.entry(key)
        manifest = entry / f"{NAME}.json"
        if not manifest.exists():
            return None
        try:
            if stored:
                return load_checked(entry, manifest, read_manifest(manifest), report)
            with report.stage(f"cache hit {key[:16]}"):
                model = load_checked(entry, manifest, read_manifest(manifest), report)
            report.cache_hit = True
        except EmberError as error:  # corrupted, or a library that does not load: rebuilt
            warnings.warn(f"corrupted compile cache entry {key}: {error}; rebuilding it",
                          CacheWarning, stacklevel=4)  # fmt: skip
            self._remove(entry)
            return None
        with contextlib.suppress(OSError):  # a read-only cache still loads
            (entry / USED).touch()
        return model

    def _store(self, key: str, request: CacheRequest, build: Callable[[], ModuleOp],
               report: CompileReport) -> None:  # fmt: skip
        from ember.targets.cpu.aot import find_c_compiler
        from ember.targets.cpu.deploy import deploy_module
        from ember.targets.cpu.errors import CodegenError

        try:
            find_c_compiler()  # the entry's library is linked by it
        except CodegenError as error:
            _warn_once(f"the compile cache needs a C compiler to link its libraries ({error}): "
                       "compiling without it")  # fmt: skip
            raise _Uncacheable from None
        scratch = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=self.directory / "tmp"))
        try:
            module = build()
            _check_deployable(module)
            deployed = deploy_module(module, scratch, NAME, request.options, report,
                                     request.specialize)  # fmt: skip
            stamp_manifest(deployed.manifest)
            about = {"key": key, "source": describe_source(request.model)}
            (scratch / "key.json").write_text(json.dumps(about) + "\n")
            (scratch / USED).touch()
            try:
                os.rename(scratch, self.entry(key))
            except OSError:
                if not self.entry(key).exists():
                    raise
                # another writer stored it first (without the lock): keep theirs
        finally:
            if scratch.exists():
                shutil.rmtree(scratch, ignore_errors=True)

    @contextlib.contextmanager
    def _lock(self, key: str) -> Iterator[None]:
        """Holds the key's lock file (where `flock` exists: elsewhere the
        atomic rename alone keeps one entry)."""
        try:
            import fcntl
        except ImportError:
            yield
            return
        with open(self.directory / "locks" / f"{key}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _remove(self, entry: Path) -> None:
        """Renames the entry away (atomic), then deletes it."""
        trash = self.directory / "tmp" / f"removed-{entry.name}-{os.getpid()}-{time.time_ns()}"
        try:
            (self.directory / "tmp").mkdir(parents=True, exist_ok=True)
            os.rename(entry, trash)
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def listing(self) -> list[CacheEntry]:
        """The entries, least recently used first."""
        found = []
        for entry in sorted(self.entries.iterdir()) if self.entries.is_dir() else []:
            size, used, about = 0, 0.0, {}
            with contextlib.suppress(OSError, ValueError):  # a broken entry is evicted first
                size = sum(p.stat().st_size for p in entry.iterdir())
                used = (entry / USED).stat().st_mtime
                about = json.loads((entry / "key.json").read_text())
            found.append(CacheEntry(entry.name, entry, size, used, str(about.get("source", "?"))))
        return sorted(found, key=lambda e: (e.used, e.key))

    def evict(self, keep: str | None = None) -> list[str]:
        """Removes the least recently used entries until the cache is within
        its limit (never `keep`, the one just stored); returns their keys."""
        entries = self.listing()
        total = sum(e.bytes for e in entries)
        removed = []
        for entry in entries:
            if total <= self.limit:
                break
            if entry.key == keep:
                continue
            self._remove(entry.path)
            total -= entry.bytes
            removed.append(entry.key)
        return removed

    def clear(self) -> int:
        """Removes every entry (and leftovers of interrupted writes); returns
        how many entries there were."""
        entries = self.listing()
        for entry in entries:
            self._remove(entry.path)
        shutil.rmtree(self.directory / "tmp", ignore_errors=True)
        return len(entries)


@dataclass(frozen=True)
class CacheEntry:
    key: str
    path: Path
    bytes: int
    used: float
    """When it was last used (seconds since the epoch)."""
    source: str
    """The model it was compiled from, as given (a path, `<bytes>`, a graph name)."""


class _Uncacheable(Exception):
    """The model compiles, but not into an entry (`_check_deployable`; no C compiler)."""


def _check_deployable(module: ModuleOp) -> None:
    """Raises _Uncacheable for a model `ember compile` cannot write but
    `ember.compile` runs (no outputs; an element type without a C type)."""
    from ember.reference import entry_function
    from ember.targets.cpu.deploy import C_TYPES
    from ember.targets.versions import symbolic_specs

    try:
        inputs, outputs = symbolic_specs(entry_function(module))
    except (AssertionError, EmberError, ValueError):  # UnsupportedTypeError is one
        raise _Uncacheable from None
    if not outputs or any(s.dtype not in C_TYPES for s in (*inputs, *outputs)):
        raise _Uncacheable


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    """One warning per message per process."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, CacheWarning, stacklevel=4)


def cached(request: CacheRequest, report: CompileReport, cache: bool | None = None) -> Any | None:
    """The model of `request` if the cache holds it (nothing is compiled or
    stored); None otherwise, or where the cache is off (`compile_cached`)."""
    if not cache_enabled(cache) or request.options.profile:
        return None
    key = request.key()
    if key is None:
        return None
    report.cache_key = key
    return CompileCache()._load(key, report)


def compile_cached(request: CacheRequest, build: Callable[[], ModuleOp], report: CompileReport,
                   cache: bool | None = None) -> Any | None:  # fmt: skip
    """The model of `request` through the cache at `cache_directory()`
    (`CompileCache.compiled`), or None where it is off (`cache`,
    `$EMBER_CACHE`), the options time kernels (`profile`), or it cannot be
    used: the caller then compiles without it."""
    if not cache_enabled(cache) or request.options.profile:
        return None
    return CompileCache().compiled(request, build, report)


__all__ = [
    "DEFAULT_SIZE",
    "CacheEntry",
    "CacheRequest",
    "CacheWarning",
    "CompileCache",
    "cache_directory",
    "cache_enabled",
    "cached",
    "compile_cached",
    "parse_size",
]
