"""Compiled models that can be kept: what `ember compile` wrote, loaded back.

`ember compile MODEL -o DIR` (CPU target) writes a shared library, a C
header, the weights and a manifest, `NAME.json` (`targets/cpu/deploy.py`).
`stamp_manifest` adds what loading it back needs to know: `build`, who
compiled it (Ember's version and a hash of its source files, llvmlite's
and LLVM's versions, the target triple, the CPU name and features the code
was compiled for), and `checksums`, the size and CRC-32 of the library and
the weights. `load(DIR)` checks both and returns the object `ember.compile`
returns (`targets/cpu/load.py`); a directory built by another Ember, LLVM or
for another CPU is an `IncompatibleBuildError` naming what differs, a file
whose size or checksum is not the manifest's a `CorruptedModelError`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import zlib
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from ember.errors import EmberError
from ember.output_files import write_text
from ember.report import CompileReport

SOURCE_PACKAGES = ("ember", "ember.dialects", "ember.passes", "ember.lowering", "ember.targets",
                   "ember.frontends")  # fmt: skip
"""The packages whose source files make `ember_source` (pyproject's package-dir)."""
SOURCE_SUFFIXES = (".py", ".c", ".h")

BUILD_FIELDS = ("ember", "ember_source", "llvmlite", "llvm", "triple", "cpu", "cpu_features")
"""What `build` records, in the order a difference is reported."""


class IncompatibleBuildError(EmberError):
    """A compiled model built by another Ember, llvmlite or LLVM, or for another CPU."""


class CorruptedModelError(EmberError):
    """A compiled model's file that is not what its manifest says (truncated,
    changed, missing) or a manifest that cannot be read."""


@functools.cache
def source_hash() -> str:
    """A hash of Ember's source files (their paths and bytes): a build of
    another checkout differs even where the version number does not."""
    digest = hashlib.sha256()
    for package in SOURCE_PACKAGES:
        spec = find_spec(package)
        for root in (spec.submodule_search_locations or []) if spec else []:
            for folder, subfolders, files in os.walk(root):
                subfolders[:] = sorted(s for s in subfolders if s != "__pycache__")
                for name in sorted(f for f in files if f.endswith(SOURCE_SUFFIXES)):
                    path = Path(folder, name)
                    digest.update(f"{package}/{path.relative_to(root)}\0".encode())
                    digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def build_identity() -> dict[str, str]:
    """This process's `build` fields (see the module docstring)."""
    import llvmlite.binding as llvm

    from ember.targets.cpu.machine import initialize

    initialize()
    features = llvm.get_host_cpu_features().flatten()
    return {
        "ember": _version("ember"), "ember_source": source_hash(),
        "llvmlite": _version("llvmlite"), "llvm": ".".join(map(str, llvm.llvm_version_info)),
        "triple": llvm.get_process_triple(), "cpu": llvm.get_host_cpu_name(),
        "cpu_features": ",".join(sorted(features.split(","))),
    }  # fmt: skip


def file_checksum(data: Any) -> dict[str, Any]:
    """The size and CRC-32 of a file's bytes (a buffer)."""
    view = memoryview(data)
    return {"bytes": view.nbytes, "crc32": f"{zlib.crc32(view):08x}"}


def stamp_manifest(manifest: Path) -> dict[str, Any]:
    """Adds `build` and `checksums` to the manifest `ember compile` wrote
    (its library and weights lie beside it); returns its contents."""
    contents = json.loads(manifest.read_text())
    contents["build"] = build_identity()
    contents["checksums"] = {
        contents[role]: file_checksum((manifest.parent / contents[role]).read_bytes())
        for role in ("library", "weights")
    }
    write_text(manifest, json.dumps(contents, indent=2) + "\n")
    return contents


def find_manifest(directory: Path) -> Path:
    """The one `NAME.json` of a compiled model's directory beside its `libNAME.so`."""
    if not directory.is_dir():
        raise EmberError(f"{directory}: not a directory of a compiled model (`ember compile -o`)")
    found = [
        p for p in sorted(directory.glob("*.json")) if (directory / f"lib{p.stem}.so").exists()
    ]
    if len(found) != 1:
        what = "no NAME.json beside a libNAME.so" if not found else "several models"
        raise EmberError(f"{directory}: {what}; not a directory `ember compile` wrote")
    return found[0]


def read_manifest(manifest: Path) -> dict[str, Any]:
    try:
        contents = json.loads(manifest.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptedModelError(f"{manifest}: cannot read the manifest ({error})") from None
    if not isinstance(contents, dict) or "library" not in contents or "inputs" not in contents:
        raise CorruptedModelError(f"{manifest}: not the manifest of a compiled model")
    return contents


def check_build(manifest: Path, contents: dict[str, Any]) -> None:
    """An IncompatibleBuildError naming the first field of `build` that
    differs from this process's (or saying that there is none)."""
    built = contents.get("build")
    if not isinstance(built, dict):
        raise IncompatibleBuildError(f"{manifest}: no build record (written by an Ember from "
                                     "before load-back); compile the model again")  # fmt: skip
    here = build_identity()
    for field in BUILD_FIELDS:
        if built.get(field) != here[field]:
            raise IncompatibleBuildError(
                f"{manifest}: {_difference(field, built.get(field), here[field])}; "
                "compile the model again here"
            )


def _difference(field: str, theirs: Any, ours: str) -> str:
    if field == "cpu_features" and isinstance(theirs, str):
        old, new = set(theirs.split(",")), set(ours.split(","))
        changed = sorted(old ^ new, key=lambda f: f.lstrip("+-"))
        shown = ", ".join(changed[:6]) + (", ..." if len(changed) > 6 else "")
        return f"compiled for other CPU features than this CPU's (differing: {shown})"
    what = {"ember": "by Ember", "ember_source": "by Ember with source hash",
            "llvmlite": "with llvmlite", "llvm": "with LLVM", "triple": "for the target",
            "cpu": "for the CPU"}[field]  # fmt: skip
    return f"compiled {what} {theirs}, this is {ours}"


def map_checked(directory: Path, contents: dict[str, Any], role: str) -> np.ndarray:
    """The file of `role` (library, weights) checked against the manifest's
    size and CRC-32, as a read-only mapping (a CorruptedModelError if not)."""
    name = contents[role]
    path = directory / name
    expected = contents.get("checksums", {}).get(name)
    try:
        size = path.stat().st_size
        data = np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
    except (OSError, ValueError) as error:
        raise CorruptedModelError(f"{path}: cannot read: {error}") from None
    if expected is None:
        raise CorruptedModelError(f"{path}: the manifest has no checksum for it")
    if expected != file_checksum(data):
        raise CorruptedModelError(
            f"{path}: {size} bytes with CRC-32 {file_checksum(data)['crc32']}, the manifest "
            f"says {expected['bytes']} bytes with CRC-32 {expected['crc32']} (truncated or "
            "changed)"
        )
    return data


def load_checked(directory: Path, manifest: Path, contents: dict[str, Any],
                 report: CompileReport, threads: int | None = None) -> Any:  # fmt: skip
    """The model of a directory whose manifest was read: build and checksums
    checked, the library loaded, the weights mapped."""
    from ember.targets.cpu.load import load_library

    check_build(manifest, contents)
    map_checked(directory, contents, "library")
    weights = map_checked(directory, contents, "weights")
    report.weights_bytes = int(weights.size)
    model = load_library(directory, contents, weights, report)
    if threads is not None:
        model.set_threads(threads)
    return model


def load(directory: str | os.PathLike[str], threads: int | None = None,
         report: CompileReport | None = None) -> Any:  # fmt: skip
    """The model `ember compile MODEL -o DIR` (CPU target) wrote to
    `directory`, as `ember.compile` returns it: call it with arrays; a model
    with symbolic dims runs at every size, the version its `--specialize`
    compiled for the inputs' sizes where there is one. `threads` overrides
    the thread count it was compiled with (`model.set_threads` changes it
    later). An IncompatibleBuildError if another Ember, llvmlite or LLVM
    built it, or for another CPU; a CorruptedModelError if a file is not
    what the manifest says."""
    folder = Path(directory)
    report = report or CompileReport()
    with report.stage("load"):
        manifest = find_manifest(folder)
        return load_checked(folder, manifest, read_manifest(manifest), report, threads)


__all__ = [
    "CorruptedModelError",
    "IncompatibleBuildError",
    "build_identity",
    "load",
    "source_hash",
    "stamp_manifest",
]
