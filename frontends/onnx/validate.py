"""Checking that an ONNX model obeys ONNX's own rules before it is imported.

A model that breaks ONNX's rules is refused here with one line naming the
node, tensor or attribute, instead of surfacing later as a Python exception
or, worse, being imported with a meaning the exporter never gave it (a value
written by two nodes, `Concat` with a float `axis`).

Two layers, in this order:

- Ember's own checks, for what `onnx.checker` lets through or words poorly:
  every name Ember reads is valid UTF-8 (protobuf hands invalid bytes over as
  `bytes`, and the C++ checker accepts them); every value is written once
  (no node redefines a graph input, an initializer or another node's output)
  and defined before it is read.
- `onnx.checker.check_model` (without `full_check`): attribute kinds and
  required attributes against the schema of the model's own opset (so old
  opsets are checked by their own rules, before `upgrade` rewrites them),
  tensor data sizes against their dims, UNDEFINED data types, IR-version
  rules. It costs well under a millisecond to 10 ms on the light models (the
  import itself takes 17-740 ms), and it rejects none of the 801 ONNX node
  conformance cases Ember passes, nor any light model (all opset 9).
  `full_check` (ONNX shape inference) is left out: Ember's own shape rules
  run during import and name the node.
  One rule is waived: IR versions below 4 want every initializer listed among
  the graph inputs too. ONNX Runtime runs such models, Ember treats
  initializers as weights either way, and the light models (IR version 3)
  with weights stored as initializers break it; the checker sees them as IR
  version 4.

What neither catches (shape-level rules such as MaxPool pads smaller than the
kernel, sizes) is checked by the `graph` shape rules during import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import onnx
from onnx import ModelProto, NodeProto

from ember.errors import InvalidModelError, ModelLoadError


def node_label(node: NodeProto, index: int) -> str:
    """How diagnostics name a node: by name, else by position and first output."""
    if node.name:
        return f"node '{node.name}' ({node.op_type})"
    first = node.output[0] if node.output else ""
    return f"node #{index} ({node.op_type} -> '{first}')"


def _not_utf8(values: Iterable[object]) -> object | None:
    """The first value protobuf could not decode (it returns those as bytes)."""
    return next((v for v in values if not isinstance(v, str)), None)


def check_names(model: ModelProto, where: str) -> None:
    """Every name Ember reads is valid UTF-8 (checked before any is used)."""
    graph = model.graph
    graph_names = (
        ("graph input", [i.name for i in graph.input]),
        ("graph output", [o.name for o in graph.output]),
        ("initializer", [t.name for t in graph.initializer]),
        ("opset domain", [o.domain for o in model.opset_import]),
    )
    for what, names in graph_names:
        bad = _not_utf8(names)
        if bad is not None:
            raise InvalidModelError(f"{where}: {what} name {bad!r} is not valid UTF-8")
    for index, node in enumerate(graph.node):
        op_type = node.op_type if isinstance(node.op_type, str) else "?"
        fields = (
            ("op type", [node.op_type, node.domain]),
            ("name", [node.name]),
            ("input name", list(node.input)),
            ("output name", list(node.output)),
            ("attribute name", [a.name for a in node.attribute]),
        )
        for what, names in fields:
            bad = _not_utf8(names)
            if bad is not None:
                raise InvalidModelError(
                    f"{where}: node #{index} ({op_type}): {what} {bad!r} is not valid UTF-8"
                )


def check_single_assignment(model: ModelProto, where: str) -> None:
    """Each value is defined once, before any node reads it."""
    graph = model.graph
    defined: dict[str, str] = {i.name: f"graph input '{i.name}'" for i in graph.input}
    for tensor in graph.initializer:
        # Old exporters list initializers among the inputs too: that is one value.
        defined.setdefault(tensor.name, f"initializer '{tensor.name}'")
    for index, node in enumerate(graph.node):
        label = node_label(node, index)
        for name in node.input:
            if name and name not in defined:
                raise InvalidModelError(
                    f"{where}: {label}: input '{name}' is not produced by any earlier node, "
                    "input or initializer"
                )
        for name in node.output:
            if not name:
                continue  # an optional output left out
            if name in defined:
                raise InvalidModelError(
                    f"{where}: {label}: output '{name}' is already defined by {defined[name]} "
                    "(an ONNX value is written once)"
                )
            defined[name] = label
    for output in graph.output:
        if output.name not in defined:
            raise InvalidModelError(
                f"{where}: graph output '{output.name}' is not produced by any node, input "
                "or initializer"
            )


_NODE_CONTEXT = re.compile(r"Bad node spec for node\. Name: (.*?) OpType: (\S+)")


def _checker_message(where: str, message: str) -> str:
    """onnx.checker's multi-line message as one line, naming the node as Ember does."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    context = _NODE_CONTEXT.search(message)
    problem = next((line for line in lines if not line.startswith("==>")), "invalid model")
    if context:
        name, op_type = context.groups()
        node = f"node '{name}' ({op_type})" if name else f"a {op_type} node"
        return f"{where}: {node}: {problem}"
    return f"{where}: invalid ONNX model: {' '.join(lines)}"


def check_with_onnx(model: ModelProto, where: str, path: Path | None) -> None:
    """Runs `onnx.checker` on the model (external data already loaded in memory)."""
    try:
        try:
            data = model.SerializeToString()
            if model.ir_version < 4:
                # Protobuf lets a later field override an earlier one: the checker
                # sees IR version 4 without copying the model.
                data += ModelProto(ir_version=4).SerializeToString()
            onnx.checker.check_model(data)
        except ValueError:
            # Over protobuf's 2 GiB once external data is loaded: the checker reads
            # the file itself (its external data already passed Ember's checks).
            if path is None:
                raise
            onnx.checker.check_model(str(path))
    except onnx.checker.ValidationError as error:
        raise InvalidModelError(_checker_message(where, str(error))) from None
    except ValueError as error:
        raise ModelLoadError(f"{where}: cannot check the model: {error}") from None


def validate(model: ModelProto, where: str, path: Path | None = None) -> None:
    """All of the above; raises `InvalidModelError` naming the first broken rule."""
    check_single_assignment(model, where)
    check_with_onnx(model, where, path)


__all__ = ["check_names", "node_label", "validate"]
