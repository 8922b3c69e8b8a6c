"""What the explorer calls a graph op and a kernel, in one place.

An op is named by the model's nodes it came from: its location's source
names (`dialects/source_names.py`: the ONNX node name, or the PyTorch
module path, kept through optimisation and fusion; a BatchNorm folded into
a convolution names both), else an `onnx.name` attribute, else the ONNX
name of the first weight it reads (`fire2/squeeze1x1_w_0` names the
convolution that reads it), else the name of the value it defines, else
the op's kind.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue

from ember.dialects.graph import ConstantOp
from ember.dialects.source_names import describe_names, source_names

NODE_NAME_ATTR = "onnx.name"
"""An op attribute naming the ONNX node it came from, where present."""

_WEIGHT_SUFFIX = re.compile(r"(_(w|weight|W|kernel|b|bias|B))?(_0)?$")


def node_name(op: Operation) -> str:
    """The name the explorer shows for graph op `op` (see the module docstring)."""
    names = source_names(op)
    if names:
        return describe_names(names)
    attribute = op.attributes.get(NODE_NAME_ATTR)
    if isinstance(attribute, StringAttr) and attribute.data:
        return attribute.data
    for operand in op.operands:
        if isinstance(operand.owner, ConstantOp) and operand.name_hint:
            return _WEIGHT_SUFFIX.sub("", strip_rewrites(operand.name_hint)) or operand.name_hint
    if op.results and op.results[0].name_hint:
        return op.results[0].name_hint
    return op.name.split(".", 1)[-1]


_REWRITE_SUFFIXES = ("_hwio", "_packed", "_winograd", "_nhwc", "_nchw", "_t")


def strip_rewrites(name: str) -> str:
    """A value's name without the suffixes passes add to the values they
    derive (`conv1_w_hwio_packed` -> `conv1_w`), and without the `_1`,
    `_2` that make printed names unique."""
    name = re.sub(r"_\d+$", "", name)
    changed = True
    while changed:
        changed = False
        for suffix in _REWRITE_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def value_name(value: SSAValue) -> str:
    """A value's name hint, or `` where it has none."""
    return value.name_hint or ""


def short_kernel(name: str) -> str:
    """`ember_main_kernel3` -> `kernel 3`; other names as they are."""
    match = re.search(r"kernel(\d+)$", name)
    return f"kernel {match.group(1)}" if match else name


__all__ = ["NODE_NAME_ATTR", "short_kernel", "node_name", "strip_rewrites", "value_name"]
