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
- `onnx.checker` on each node and initializer: attribute kinds, unknown and
  required attributes against the schema of the model's own opset (so old
  opsets are checked by their own rules, before `upgrade` rewrites them), and
  tensor data sizes and UNDEFINED data types. Measured: validation takes
  0.2-35 ms on the light models, under 5% of their import (17-740 ms), and
  0.12 s for all 801 ONNX node conformance cases Ember passes, rejecting
  none of them, nor any light model (opset 9, IR version 3).

  Ember does not run `onnx.checker.check_model` on the whole model: besides
  the checks above it demands a `shape` on every graph input and output type
  and, below IR version 4, every initializer among the graph inputs. ONNX
  Runtime runs models that break either rule, and Ember imports them with the
  same meaning (an unknown output shape is inferred; initializers are weights
  either way), so refusing them would turn away working models. Its
  `full_check` (ONNX shape inference) is left out too: Ember's own shape
  rules run during import and name the node.

What neither catches (shape-level rules such as MaxPool pads smaller than the
kernel, sizes) is checked by the `graph` shape rules during import.
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx
from onnx import ModelProto, NodeProto

from ember.errors import InvalidModelError


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


def check_declared_dims(model: ModelProto, where: str) -> None:
    """Every dimension a graph input, output or value info declares is a size
    (non-negative) or a name, as onnx.checker requires of a tensor's shape."""
    graph = model.graph
    declared = [("graph input", i) for i in graph.input]
    declared += [("graph output", o) for o in graph.output]
    declared += [("value", v) for v in graph.value_info]
    for what, info in declared:
        if not info.type.HasField("tensor_type"):
            continue
        for axis, dim in enumerate(info.type.tensor_type.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value < 0:
                raise InvalidModelError(
                    f"{where}: {what} '{info.name}' declares dimension {axis} as "
                    f"{dim.dim_value}; a dimension is a size (0 or more) or a name"
                )


def _first_line(message: str) -> str:
    """The problem in onnx.checker's message, without its `==> Context` lines."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return next((line for line in lines if not line.startswith("==>")), "invalid")


def check_with_onnx(model: ModelProto, where: str) -> None:
    """Runs `onnx.checker` on every initializer and node, against the model's opsets."""
    context = onnx.checker.C.CheckerContext()
    context.ir_version = model.ir_version or onnx.IR_VERSION
    context.opset_imports = {o.domain: o.version for o in model.opset_import}
    scope = onnx.checker.C.LexicalScopeContext()
    for tensor in model.graph.initializer:
        try:
            onnx.checker.check_tensor(tensor, context)
        except onnx.checker.ValidationError as error:
            raise InvalidModelError(
                f"{where}: initializer '{tensor.name}': {_first_line(str(error))}"
            ) from None
    _check_nodes(model.graph, context, scope, where)


def _check_nodes(graph: onnx.GraphProto, context: object, scope: object, where: str) -> None:
    """`onnx.checker.check_node` on each node of `graph`. The checker's
    lexical scope cannot be given the enclosing graphs' names, which a
    subgraph (of If, Loop, Scan) may read, so it would refuse every such
    subgraph: a node with subgraphs is checked with empty ones in their
    place (its inputs, attributes and their kinds), and its subgraphs' nodes
    one by one."""
    for index, node in enumerate(graph.node):
        subgraphs = [a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH]
        subgraphs += [g for a in node.attribute for g in a.graphs]
        checked = node
        if subgraphs:
            checked = NodeProto()
            checked.CopyFrom(node)
            for attr in checked.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    attr.g.CopyFrom(onnx.GraphProto(name=attr.g.name))
                for sub in attr.graphs:
                    sub.CopyFrom(onnx.GraphProto(name=sub.name))
        try:
            onnx.checker.check_node(checked, context, scope)  # type: ignore[arg-type]
        except onnx.checker.ValidationError as error:
            raise InvalidModelError(
                f"{where}: {node_label(node, index)}: {_first_line(str(error))}"
            ) from None
        for subgraph in subgraphs:
            _check_nodes(subgraph, context, scope, where)


def validate(model: ModelProto, where: str) -> None:
    """All of the above; raises `InvalidModelError` naming the first broken rule."""
    check_single_assignment(model, where)
    check_declared_dims(model, where)
    check_with_onnx(model, where)


__all__ = ["check_names", "node_label", "validate"]
