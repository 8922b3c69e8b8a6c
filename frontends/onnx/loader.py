"""Reading an ONNX model from a path, bytes or a `ModelProto`, safely.

External data (weights stored beside the model) is only read from inside the
model's directory: a location that is absolute or escapes the directory
(`../../etc/passwd`, or a symlink pointing out) is refused.
"""

from __future__ import annotations

import os
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


def describe_source(source: ModelSource) -> str:
    if isinstance(source, bytes):
        return "<bytes>"
    if isinstance(source, ModelProto):
        return source.graph.name or "<ModelProto>"
    return str(source)


def load_model(source: ModelSource) -> ModelProto:
    """The `ModelProto` for a path, serialized bytes or an existing proto."""
    if isinstance(source, ModelProto):
        return source
    if isinstance(source, bytes):
        return _parse(source, "<bytes>")
    path = Path(source)
    if not path.exists():
        raise ModelLoadError(f"{path}: no such file")
    if path.is_dir():
        raise ModelLoadError(f"{path}: is a directory, not an ONNX model")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ModelLoadError(f"{path}: cannot read: {error.strerror}") from error
    model = _parse(data, str(path))
    _load_external_data(model, path)
    return model


def _parse(data: bytes, where: str) -> ModelProto:
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
        if not target.is_file():
            raise ModelLoadError(
                f"{path}: initializer '{tensor.name}': external data file '{location}' is missing"
            )
    try:
        load_external_data_for_model(model, str(base))
    except (OSError, ValueError, onnx.checker.ValidationError) as error:
        raise ModelLoadError(f"{path}: cannot load external data: {error}") from error
