"""Reading an ONNX model from a path, bytes or a `ModelProto`, safely.

A path must name a regular file no larger than protobuf's 2 GiB limit (which
ONNX models obey; larger weights go to external data): a FIFO would block
forever and `/dev/zero` would be read until memory runs out, so both are
refused before a byte is read.

External data (weights stored beside the model) is only read from inside the
model's directory: a location that is absolute or escapes the directory
(`../../etc/passwd`, or a symlink pointing out) is refused. A model given as
bytes or a `ModelProto` has no directory, so external data there is refused
too (rather than read relative to the process's working directory).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx import ModelProto, TensorProto
from onnx.external_data_helper import (
    load_external_data_for_model,
    uses_external_data,
)

from ember.errors import ModelLoadError

ModelSource = str | os.PathLike[str] | bytes | ModelProto

MAX_MODEL_BYTES = 2**31 - 1
"""Protobuf cannot parse a message larger than this (ONNX's 2 GiB limit)."""


def describe_source(source: ModelSource) -> str:
    if isinstance(source, bytes):
        return "<bytes>"
    if isinstance(source, ModelProto):
        name = source.graph.name
        return name if isinstance(name, str) and name else "<ModelProto>"
    return str(source)


def load_model(source: ModelSource) -> ModelProto:
    """The `ModelProto` for a path, serialized bytes or an existing proto."""
    if isinstance(source, ModelProto):
        _refuse_external_data(source, describe_source(source))
        return source
    if isinstance(source, bytes):
        model = _parse(source, "<bytes>")
        _refuse_external_data(model, "<bytes>")
        return model
    if not isinstance(source, (str, os.PathLike)):
        raise ModelLoadError(
            f"expected a model path, serialized bytes or an onnx.ModelProto, "
            f"got {type(source).__name__}"
        )
    path = Path(source)
    model = _parse(_read_model_file(path), str(path))
    _load_external_data(model, path)
    return model


def _read_model_file(path: Path) -> bytes:
    """The file's bytes, refusing anything but a regular file within the size limit."""
    try:
        # Non-blocking, so that opening a FIFO returns at once and is refused below.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ModelLoadError(f"{path}: no such file") from None
    except OSError as error:
        raise ModelLoadError(f"{path}: cannot read: {error.strerror}") from None
    problem = _not_a_model_file(os.fstat(fd))
    if problem is not None:
        os.close(fd)
        raise ModelLoadError(f"{path}: {problem}")
    with os.fdopen(fd, "rb") as file:
        try:
            return file.read(MAX_MODEL_BYTES + 1)
        except OSError as error:
            raise ModelLoadError(f"{path}: cannot read: {error.strerror}") from None


def _not_a_model_file(info: os.stat_result) -> str | None:
    """Why a file with this status cannot be a model, or None."""
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not an ONNX model"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a device, FIFO or socket); refusing to read it"
    if info.st_size > MAX_MODEL_BYTES:
        return (f"is {info.st_size} bytes, over ONNX's 2 GiB protobuf limit (larger models "
                "keep their weights in external data files)")  # fmt: skip
    return None


def _parse(data: bytes, where: str) -> ModelProto:
    if len(data) > MAX_MODEL_BYTES:
        raise ModelLoadError(f"{where}: {len(data)} bytes, over ONNX's 2 GiB protobuf limit")
    if not data:
        raise ModelLoadError(f"{where}: file is empty, not an ONNX model")
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as error:
        raise ModelLoadError(f"{where}: not a valid ONNX protobuf ({error})") from error
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise ModelLoadError(f"{where}: not a valid ONNX model (no graph)")
    return model


def _external_tensors(model: ModelProto) -> list[TensorProto]:
    tensors = [t for t in model.graph.initializer if uses_external_data(t)]
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.HasField("t") and uses_external_data(attr.t):
                tensors.append(attr.t)
    return tensors


def _refuse_external_data(model: ModelProto, where: str) -> None:
    tensors = _external_tensors(model)
    if tensors:
        location = next((e.value for e in tensors[0].external_data if e.key == "location"), "")
        raise ModelLoadError(
            f"{where}: tensor '{tensors[0].name}' keeps its data in external file "
            f"'{location}', but a model given as bytes or a ModelProto has no directory to "
            "read it from; pass the model's path instead"
        )


def _load_external_data(model: ModelProto, path: Path) -> None:
    tensors = _external_tensors(model)
    if not tensors:
        return
    base = path.parent.resolve()
    for tensor in tensors:
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        target = (base / location).resolve()
        if not location or Path(location).is_absolute() or not target.is_relative_to(base):
            raise ModelLoadError(
                f"{path}: initializer '{tensor.name}' refers to external data "
                f"'{location}' outside the model's directory; refusing to read it"
            )
        if not target.exists():
            raise ModelLoadError(
                f"{path}: initializer '{tensor.name}': external data file '{location}' is missing"
            )
        if not target.is_file():
            raise ModelLoadError(
                f"{path}: initializer '{tensor.name}': external data '{location}' is not a "
                "regular file; refusing to read it"
            )
    try:
        load_external_data_for_model(model, str(base))
    except (OSError, ValueError, onnx.checker.ValidationError) as error:
        raise ModelLoadError(f"{path}: cannot load external data: {error}") from error
