"""PyTorch models into Ember: an `nn.Module` with example inputs, a
`torch.export.ExportedProgram`, or a `.pt2` file that `torch.export.save`
wrote, go through `torch.onnx.export(dynamo=True)` into the ONNX importer.

Dynamic dims declared with `torch.export.Dim("batch", min=1, max=64)` arrive
as symbols named after the Dim (an `ExportedProgram` made elsewhere keeps
torch's own names, `s17`), with the range torch.export proved for them, so
the entry check holds inputs to what the export allows. torch is an optional
dependency (`pip install -e '.[torch]'`); without it these functions raise
an `EmberError` that says how to install it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from onnx import ModelProto

from ember.dialects.graph.symbolic import Range
from ember.errors import EmberError, ModelLoadError

OPSET = 20
"""The opset the exporter writes (its default in torch 2.13)."""

INSTALL = "pip install -e '.[torch]'"


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise EmberError(f"PyTorch models need torch ({INSTALL})") from None
    return torch


def is_torch_model(model: object) -> bool:
    """Whether `model` is an `nn.Module` or an `ExportedProgram` (without
    importing torch when the caller has not)."""
    torch = sys.modules.get("torch")
    if torch is None:  # not imported: nothing can be a torch object
        return False
    return isinstance(model, torch.nn.Module | torch.export.ExportedProgram)


def is_pt2_path(source: object) -> bool:
    return isinstance(source, str | os.PathLike) and Path(source).suffix == ".pt2"


def load_pt2(path: str | os.PathLike[str]) -> Any:
    """The `ExportedProgram` that `torch.export.save` wrote to `path`."""
    torch = _torch()
    if not Path(path).is_file():
        raise ModelLoadError(f"{path}: no such file")
    try:
        return torch.export.load(path)
    except Exception as error:  # torch raises many kinds for a bad archive
        raise ModelLoadError(f"{path}: not a torch.export archive ({error})") from None


_QUIET_LOCK = threading.Lock()
"""Held by `_quiet`, so that two exports at once do not restore each other's
logger levels and warning filters out of order."""


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The exporter's warnings (torchvision missing, deprecations) are not the
    user's concern here; errors still raise. (Its progress lines are off by
    `verbose=False`: stdout is left alone.) The logger levels and the
    warning filter are process-wide: while an export runs, other threads'
    warnings, and their records below ERROR on these loggers, are dropped
    too."""
    loggers = [logging.getLogger(name) for name in ("torch.onnx", "torch.export", "onnxscript")]
    with _QUIET_LOCK:
        levels = [logger.level for logger in loggers]
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            for logger, level in zip(loggers, levels):
                logger.setLevel(level)


def onnx_from_torch(
    model: Any,
    example_inputs: Sequence[Any] | None = None,
    dynamic_shapes: Mapping[str, Any] | Sequence[Any] | None = None,
) -> tuple[ModelProto, dict[str, Range]]:
    """The ONNX model `torch.onnx.export(dynamo=True)` makes of `model` (an
    `nn.Module` called with `example_inputs`, or an `ExportedProgram`), and
    the range of each of its symbols."""
    torch = _torch()
    if isinstance(model, torch.nn.Module):
        if example_inputs is None:
            raise EmberError("compiling an nn.Module needs example_inputs (a tuple of tensors)")
        args = tuple(example_inputs) if isinstance(example_inputs, list | tuple) else (
            example_inputs,)  # fmt: skip
        model.eval()
    elif isinstance(model, torch.export.ExportedProgram):
        if example_inputs is not None or dynamic_shapes is not None:
            raise EmberError("an ExportedProgram has its inputs and dynamic shapes already")
        args = ()
    else:
        raise EmberError(f"expected an nn.Module or ExportedProgram, got {type(model).__name__}")
    try:
        with _quiet():
            program = torch.onnx.export(model, args, dynamic_shapes=dynamic_shapes, dynamo=True,
                                        opset_version=OPSET, verbose=False)  # fmt: skip
    except Exception as error:  # the exporter's own errors: unsupported ops, guards
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise EmberError(f"torch.onnx.export failed: {first}") from None
    proto = program.model_proto
    return proto, _ranges(program.exported_program, proto)


def _ranges(exported: Any, proto: ModelProto) -> dict[str, Range]:
    """{ONNX dim name: range}: each named dim of an ONNX input is the same
    dim of that input's placeholder in the exported program, whose symbol
    torch.export bounded (`range_constraints`); an unbounded one has no
    upper bound."""
    from torch.export.graph_signature import InputKind

    placeholders = {node.name: node for node in exported.graph.nodes if node.op == "placeholder"}
    user_inputs = [spec.arg.name for spec in exported.graph_signature.input_specs
                   if spec.kind == InputKind.USER_INPUT]  # fmt: skip
    ranges: dict[str, Range] = {}
    for value, name in zip(proto.graph.input, user_inputs):
        fake = placeholders[name].meta.get("val")
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if not dim.dim_param or fake is None or axis >= fake.dim():
                continue
            size = fake.shape[axis]
            bounds = exported.range_constraints.get(getattr(size, "node", None) and size.node.expr)
            if bounds is None:
                continue
            low, high = int(bounds.lower), bounds.upper
            ranges[dim.dim_param] = (max(low, 0), int(high) if high.is_finite else None)
    return ranges


def resolve_source(
    model: Any,
    dims: Mapping[str, Range] | None,
    example_inputs: Sequence[Any] | None = None,
    dynamic_shapes: Mapping[str, Any] | Sequence[Any] | None = None,
) -> tuple[Any, dict[str, Range] | None]:
    """(the ONNX model, the dims) for any model source: a PyTorch one (an
    `nn.Module`, an `ExportedProgram`, a `.pt2` path) exported, its symbols'
    ranges under the caller's `dims` (which win); anything else as it is."""
    if is_pt2_path(model):
        model = load_pt2(model)
    elif not is_torch_model(model):
        if example_inputs is not None or dynamic_shapes is not None:
            raise EmberError("example_inputs and dynamic_shapes are for PyTorch models")
        return model, dict(dims) if dims is not None else None
    proto, ranges = onnx_from_torch(model, example_inputs, dynamic_shapes)
    return proto, {**ranges, **(dims or {})}


__all__ = [
    "OPSET",
    "is_pt2_path",
    "is_torch_model",
    "load_pt2",
    "onnx_from_torch",
    "resolve_source",
]
