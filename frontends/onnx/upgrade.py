"""Rewriting ONNX nodes of older opsets into the opset-21 form `graph` models.

Between opsets, ONNX moved several attributes into inputs (Split's `split`,
Slice's `starts`/`ends`, Squeeze/Unsqueeze's and the reductions' `axes`,
Pad's `pads`, Clip's bounds) and changed Softmax from "flatten at axis" to a
single axis. Each rule here takes a node as written at the model's opset and
returns the equivalent opset-21 nodes, plus the constants it introduced.
Attributes that older opsets carried and that no longer mean anything in
inference (`is_test`, `consumed_inputs`, ...) are dropped here, so the
importer can reject any attribute it does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType

from ember.errors import UnsupportedModelError

MIN_OPSET = 7
MAX_OPSET = 28


@dataclass
class Node:
    """An ONNX node with attributes as Python values; '' marks a missing input."""

    op_type: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any]
    label: str = ""  # how diagnostics name the node

    def input(self, index: int) -> str:
        return self.inputs[index] if index < len(self.inputs) else ""


@dataclass
class Upgraded:
    nodes: list[Node]
    constants: dict[str, np.ndarray] = field(default_factory=dict)


TypeOf = Callable[[str], TensorType]
"""The type of an already imported tensor, by ONNX name."""
Rule = Callable[[Node, int, TypeOf], Upgraded]

# Attributes of older opsets that carry no meaning for inference.
_OBSOLETE = {"consumed_inputs", "is_test"}
# Attributes newer opsets added that ask for wider internal precision than
# the opset-21 semantics (Range's stash_type).
_IGNORED_NEWER = {"Range": {"stash_type"}}


def _with_inputs_from_attrs(
    node: Node, moves: list[tuple[str, int, Any]], dtype: type = np.int64
) -> Upgraded:
    """Moves attributes into inputs at the given positions, as new constants."""
    inputs = list(node.inputs)
    attrs = dict(node.attrs)
    constants: dict[str, np.ndarray] = {}
    for attr, position, default in moves:
        value = attrs.pop(attr, default)
        while len(inputs) <= position:
            inputs.append("")
        if value is None:
            continue
        name = f"{node.outputs[0]}__{attr}"
        constants[name] = np.asarray(value, dtype=dtype)
        inputs[position] = name
    return Upgraded([replace(node, inputs=inputs, attrs=attrs)], constants)


def _axes_to_input(since: int) -> Rule:
    def rule(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
        if opset >= since:
            return Upgraded([node])
        return _with_inputs_from_attrs(node, [("axes", 1, None)])

    return rule


def _split(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    if opset >= 13:
        return Upgraded([node])
    return _with_inputs_from_attrs(node, [("split", 1, None)])


def _slice(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    if opset >= 10:
        return Upgraded([node])
    return _with_inputs_from_attrs(node, [("starts", 1, []), ("ends", 2, []), ("axes", 3, None)])


def _pad(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    if opset >= 11:
        return Upgraded([node])
    upgraded = _with_inputs_from_attrs(node, [("pads", 1, [])])
    value = upgraded.nodes[0].attrs.pop("value", 0.0)
    if value != 0.0:
        name = f"{node.outputs[0]}__value"
        upgraded.constants[name] = np.asarray(value, dtype=np.float32)
        upgraded.nodes[0].inputs.append(name)
    return upgraded


def _clip(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    if opset >= 11:
        return Upgraded([node])
    attrs = dict(node.attrs)
    low, high = attrs.pop("min", None), attrs.pop("max", None)
    inputs, constants = [node.inputs[0], "", ""], {}
    for position, bound, value in ((1, "min", low), (2, "max", high)):
        if value is not None:
            name = f"{node.outputs[0]}__{bound}"
            constants[name] = np.asarray(value, dtype=np.float32)
            inputs[position] = name
    return Upgraded([replace(node, inputs=inputs, attrs=attrs)], constants)


def _softmax(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """Before opset 13, Softmax(axis) worked on the input flattened to 2-D at axis."""
    if opset >= 13:
        return Upgraded([node])
    rank = len(type_of(node.inputs[0]).get_shape())
    axis = node.attrs.get("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return Upgraded([replace(node, attrs={"axis": -1})])
    x, y = node.inputs[0], node.outputs[0]
    flat, shape, soft = f"{y}__flat", f"{y}__shape", f"{y}__2d"
    return Upgraded([
        Node("Shape", node.name, [x], [shape], {}, node.label),
        Node("Flatten", node.name, [x], [flat], {"axis": axis}, node.label),
        Node(node.op_type, node.name, [flat], [soft], {"axis": -1}, node.label),
        Node("Reshape", node.name, [soft, shape], [y], {}, node.label),
    ])  # fmt: skip


def _dropout(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """Without a training_mode input Dropout is the identity: the ratio does
    not apply, and the optional mask output keeps every element (all true,
    of the data's shape). With one, the node stays whole: whether it drops
    is known at run time."""
    if node.input(2):
        return Upgraded([node])
    x, y = node.inputs[0], node.outputs[0]
    nodes = [replace(node, inputs=[x], outputs=[y], attrs={})]
    mask = node.outputs[1] if len(node.outputs) > 1 else ""
    if mask:
        shape = f"{mask}__shape"
        nodes += [
            Node("Shape", node.name, [x], [shape], {}, node.label),
            Node("ConstantOfShape", node.name, [shape], [mask],
                 {"value": np.array([True])}, node.label),
        ]  # fmt: skip
    return Upgraded(nodes)


def _batch_norm(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """Before opset 14 training mode was implied by the outputs: one that
    gives its running statistics (mean, var) is in training mode."""
    attrs = dict(node.attrs)
    if attrs.pop("spatial", 1) != 1:
        raise UnsupportedModelError(f"{node.label}: BatchNormalization with spatial=0")
    if opset < 14 and any(node.outputs[1:3]):
        attrs["training_mode"] = 1
    return Upgraded([replace(node, attrs=attrs)])


def _cast_like(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """CastLike(x, like) is Cast(x) to like's element type, which is known here."""
    from ember.dialects.graph.types import onnx_type_of

    target = onnx_type_of(type_of(node.inputs[1]).element_type)
    attrs = {**node.attrs, "to": target}  # saturate (opset 19) carries over
    return Upgraded([replace(node, op_type="Cast", inputs=[node.inputs[0]], attrs=attrs)])


def _scatter(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """Scatter (opsets 9 and 10) is ScatterElements under its old name."""
    return Upgraded([replace(node, op_type="ScatterElements")])


def _resize(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """Upsample (opsets 7-9) and Resize-10 take (X, scales) and sample
    asymmetrically, nearest rounding down: Resize with those attributes."""
    if node.op_type == "Resize" and opset >= 11:
        return Upgraded([node])
    upgraded = _with_inputs_from_attrs(node, [("scales", 1, None)], np.float32)
    old = upgraded.nodes[0]
    attrs = {"mode": old.attrs.get("mode", "nearest"),
             "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}  # fmt: skip
    inputs = [old.inputs[0], "", old.input(1)]
    return Upgraded([replace(old, op_type="Resize", inputs=inputs, attrs=attrs)],
                    upgraded.constants)  # fmt: skip


def _dft(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """DFT-17's `axis` attribute (default 1) is DFT-20's third input."""
    if opset >= 20:
        return Upgraded([node])
    return _with_inputs_from_attrs(node, [("axis", 2, 1)])


def _grid_sample(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """GridSample-16's modes `bilinear` and `bicubic` are GridSample-20's
    `linear` and `cubic`."""
    modes = {"bilinear": "linear", "bicubic": "cubic"}
    mode = node.attrs.get("mode", "bilinear" if opset < 20 else "linear")
    return Upgraded([replace(node, attrs={**node.attrs, "mode": modes.get(mode, mode)})])


def _constant(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    attrs = node.attrs
    forms = {
        "value": lambda v: np.asarray(v),
        "value_float": lambda v: np.asarray(v, dtype=np.float32),
        "value_floats": lambda v: np.asarray(v, dtype=np.float32),
        "value_int": lambda v: np.asarray(v, dtype=np.int64),
        "value_ints": lambda v: np.asarray(v, dtype=np.int64),
    }
    for key, convert in forms.items():
        if key in attrs:
            return Upgraded([replace(node, attrs={"value": convert(attrs[key])})])
    raise UnsupportedModelError(
        f"{node.label}: Constant with {', '.join(attrs) or 'no value'} is not supported"
    )


RULES: dict[str, Rule] = {
    "Split": _split,
    "Slice": _slice,
    "Squeeze": _axes_to_input(13),
    "Unsqueeze": _axes_to_input(13),
    "ReduceSum": _axes_to_input(13),
    "Pad": _pad,
    "Clip": _clip,
    "Softmax": _softmax,
    "LogSoftmax": _softmax,
    "Dropout": _dropout,
    "BatchNormalization": _batch_norm,
    "Constant": _constant,
    "CastLike": _cast_like,
    "DFT": _dft,
    "GridSample": _grid_sample,
    "Scatter": _scatter,
    "Resize": _resize,
    "Upsample": _resize,
} | {
    name: _axes_to_input(18)
    for name in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                 "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp")
}  # fmt: skip


REWRITTEN_OPS = {"CastLike", "Scatter", "Upsample"}
"""ONNX ops with no `graph` op of their own, rewritten here into ops that have one."""


def upgrade(node: Node, opset: int, type_of: TypeOf) -> Upgraded:
    """`node` rewritten into opset-21 form (one or more nodes)."""
    ignored = _OBSOLETE | _IGNORED_NEWER.get(node.op_type, set())
    node = replace(node, attrs={k: v for k, v in node.attrs.items() if k not in ignored})
    rule = RULES.get(node.op_type)
    return rule(node, opset, type_of) if rule else Upgraded([node])
