"""A directory `ember compile` wrote, loaded back into this process.

`load_library` opens `libNAME.so` with ctypes, maps `NAME.weights`
read-only and wraps the library's C API (`deploy.py`) in the objects
`ember.compile` returns: a static model's `NAME_run(buffers, weights,
arena)` becomes a `LoadedModel` (a `CompiledModel`), a symbolic model's
`NAME_prepare` and `NAME_run(buffers, shapes, weights, arena,
arena_bytes)` a `LoadedGenericModel` (a `GenericModel`: the C entry check
picks the version compiled for the inputs' sizes, the generic one at other
sizes). Both keep the library and the mapping alive and add `set_threads`
(the library's `NAME_set_threads`). What the manifest says of the build
(Ember, LLVM, CPU) is checked above this level (`ember/load_back.py`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ember.dialects.graph.dims import parse_dim
from ember.dialects.graph.symbolic import Dim, Range
from ember.errors import EmberError
from ember.report import CompileReport
from ember.targets.calls import InputError, TensorSpec
from ember.targets.cpu.generic import GenericModel
from ember.targets.cpu.jit_entry_check import PREPARE, RUN
from ember.targets.cpu.model import CompiledModel
from ember.targets.versions import EntryCheck, SymbolicSpec


class LoadError(EmberError):
    """A compiled model's directory that cannot be loaded (a file missing,
    unreadable or not what the manifest says)."""


class _Threads:
    """`set_threads` for a model loaded from a library (needs `_set_threads`)."""

    _set_threads: Any

    def set_threads(self, threads: int) -> None:
        """The threads later calls split parallel loops among: 1 runs on the
        calling thread alone, 0 restores the count the library was compiled
        for (`NAME_set_threads`)."""
        self._set_threads(int(threads))


class LoadedModel(CompiledModel, _Threads):
    """A static model loaded from its library (see the module docstring)."""

    def __init__(self, inputs: list[TensorSpec], outputs: list[TensorSpec], library: Any,
                 manifest: Mapping[str, Any], weights: np.ndarray, report: CompileReport):  # fmt: skip
        function = _function(library, manifest["function"], None, 3)
        super().__init__(inputs, outputs, function, weights, manifest["arena_bytes"], report)
        self._library = library
        self._set_threads = _function(library, manifest["set_threads"], None, 0, [ctypes.c_int64])


class _Library:
    """A symbolic model's library as `GenericModel` reads a JIT module: its
    `NAME_prepare` and `NAME_run` under the JIT's names."""

    def __init__(self, library: Any, manifest: Mapping[str, Any]):
        self.library = library
        self.names = {PREPARE: manifest["prepare"], RUN: manifest["function"]}

    def function(self, name: str, restype: Any, argtypes: Sequence[Any]) -> Any:
        return _function(self.library, self.names[name], restype, 0, list(argtypes))


class LoadedGenericModel(GenericModel, _Threads):
    """A model with symbolic dims loaded from its library: sizes the C
    entry check refuses get its message (`NAME_error`) where the Python
    check finds nothing wrong (sizes with no version compiled)."""

    def __init__(self, check: EntryCheck, outputs: list[SymbolicSpec], library: Any,
                 manifest: Mapping[str, Any], weights: np.ndarray, report: CompileReport):  # fmt: skip
        arena = max(_arena_of(manifest), 64)
        super().__init__(check, outputs, _Library(library, manifest), weights, arena, report)
        self._error = _function(library, manifest["error"], ctypes.c_char_p, 0, [])
        self._set_threads = _function(library, manifest["set_threads"], None, 0, [ctypes.c_int64])

    def arena_bytes(self, sizes: Mapping[str, int]) -> int:
        return max(super().arena_bytes(sizes), 64)

    def _raise_entry_error(self, arrays: Sequence[np.ndarray]) -> None:
        self._check.bind(arrays)  # names the input, axis and symbol where it can
        message = self._error()
        raise InputError(message.decode() if message else "the entry check refused the inputs")


def _arena_of(manifest: Mapping[str, Any]) -> Dim:
    """The generic version's arena formula, or (static versions alone) the
    largest version's arena: `NAME_prepare` gives the exact size per call."""
    if manifest.get("arena_formula"):
        return parse_dim(manifest["arena_formula"])
    return max((v["arena_bytes"] for v in manifest.get("versions", [])), default=64)


def _function(library: Any, name: str, restype: Any, pointers: int,
              argtypes: list[Any] | None = None) -> Any:  # fmt: skip
    try:
        function = getattr(library, name)
    except AttributeError:
        raise LoadError(f"{library._name}: no function {name}, which the manifest names") from None
    function.restype = restype
    function.argtypes = [ctypes.c_void_p] * pointers if argtypes is None else argtypes
    return function


def _dim(value: int | str) -> Dim:
    return parse_dim(value) if isinstance(value, str) else int(value)


def _specs(entries: Sequence[Mapping[str, Any]]) -> list[SymbolicSpec]:
    return [SymbolicSpec(e["name"], tuple(_dim(d) for d in e["shape"]), np.dtype(e["dtype"]))
            for e in entries]  # fmt: skip


def load_library(directory: Path, manifest: Mapping[str, Any], weights: np.ndarray,
                 report: CompileReport) -> LoadedModel | LoadedGenericModel:  # fmt: skip
    """The model of `directory` (its manifest read, its weights mapped), as
    the object `ember.compile` returns for it."""
    path = directory / manifest["library"]
    try:
        library = ctypes.CDLL(str(path.resolve()))
    except OSError as error:
        raise LoadError(f"{path}: cannot load the library: {error}") from None
    inputs, outputs = _specs(manifest["inputs"]), _specs(manifest["outputs"])
    if "prepare" not in manifest:
        static = [[TensorSpec(s.name, tuple(int(d) for d in s.dims), s.dtype) for s in specs]
                  for specs in (inputs, outputs)]  # fmt: skip
        report.arena_bytes = manifest["arena_bytes"]
        return LoadedModel(static[0], static[1], library, manifest, weights, report)
    ranges: dict[str, Range] = {s["name"]: (s["range"][0], s["range"][1])
                                for s in manifest["symbols"]}  # fmt: skip
    report.arena_formula = manifest.get("arena_formula") or ""
    return LoadedGenericModel(EntryCheck(inputs, ranges), outputs, library, manifest, weights,
                              report)  # fmt: skip


__all__ = ["LoadError", "LoadedGenericModel", "LoadedModel", "load_library"]
