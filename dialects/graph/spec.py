"""Declarative op specifications for the `graph` dialect.

A `graph` op is described by an `OpSpec`: the ONNX operator it models, its
operands and results (single, optional or variadic), its attributes with
their kinds and ONNX defaults, and its shape rule. `define_op` turns a spec
into an IRDL operation class, so a family of ops is a table of specs rather
than a file of copied classes.

Attribute kinds map ONNX attribute types onto builtin attributes:

| kind     | ONNX type          | IR attribute                 | Python value        |
|----------|--------------------|------------------------------|---------------------|
| `INT`    | INT                | `3 : i64`                    | `int`               |
| `INTS`   | INTS               | `array<i64: 1, 2>`           | `list[int]`         |
| `FLOAT`  | FLOAT              | `1.0e-05 : f32`              | `float`             |
| `FLOATS` | FLOATS             | `array<f32: 1.0, 2.0>`       | `list[float]`       |
| `STRING` | STRING             | `"NOTSET"`                   | `str`               |
| `STRINGS`| STRINGS            | `["Sigmoid", "Tanh"]`        | `list[str]`         |
| `TENSOR` | TENSOR             | `dense<...> : tensor<...>`   | `numpy.ndarray`     |
| `TYPE`   | data type enum     | `f32`                        | element type        |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdsl.dialects.builtin import TensorType

    from ember.dialects.graph.shapes import ShapeContext


class Arity(Enum):
    SINGLE = "single"
    OPTIONAL = "optional"
    VARIADIC = "variadic"


@dataclass(frozen=True)
class ValueSpec:
    """An operand or result: its name (the ONNX name) and arity."""

    name: str
    arity: Arity = Arity.SINGLE


def one(name: str) -> ValueSpec:
    return ValueSpec(name, Arity.SINGLE)


def opt(name: str) -> ValueSpec:
    return ValueSpec(name, Arity.OPTIONAL)


def many(name: str) -> ValueSpec:
    return ValueSpec(name, Arity.VARIADIC)


class AttrKind(Enum):
    INT = "int"
    INTS = "ints"
    FLOAT = "float"
    FLOATS = "floats"
    STRING = "string"
    STRINGS = "strings"
    TENSOR = "tensor"
    TYPE = "type"


@dataclass(frozen=True)
class AttrSpec:
    """An ONNX attribute: name, kind and default (None: no default)."""

    name: str
    kind: AttrKind
    default: Any = None
    required: bool = False


def int_attr(name: str, default: int | None = None, *, required: bool = False) -> AttrSpec:
    return AttrSpec(name, AttrKind.INT, default, required)


def ints_attr(name: str, default: list[int] | None = None, *, required: bool = False) -> AttrSpec:
    return AttrSpec(name, AttrKind.INTS, default, required)


def float_attr(name: str, default: float | None = None, *, required: bool = False) -> AttrSpec:
    return AttrSpec(name, AttrKind.FLOAT, default, required)


def floats_attr(name: str, default: list[float] | None = None) -> AttrSpec:
    return AttrSpec(name, AttrKind.FLOATS, default)


def string_attr(name: str, default: str | None = None, *, required: bool = False) -> AttrSpec:
    return AttrSpec(name, AttrKind.STRING, default, required)


def strings_attr(name: str, default: list[str] | None = None) -> AttrSpec:
    return AttrSpec(name, AttrKind.STRINGS, default)


def tensor_attr(name: str, *, required: bool = False) -> AttrSpec:
    return AttrSpec(name, AttrKind.TENSOR, None, required)


def type_attr(name: str) -> AttrSpec:
    return AttrSpec(name, AttrKind.TYPE, None, required=True)


ShapeRule = Callable[["ShapeContext"], "list[TensorType]"]

ONNX_DOMAIN = "ai.onnx"
"""ONNX's default domain (spelled `""` or `"ai.onnx"` in a model)."""

ML_DOMAIN = "ai.onnx.ml"
"""ONNX's classical machine-learning operators (Binarizer, ArrayFeatureExtractor)."""

TRAINING_DOMAIN = "ai.onnx.preview.training"
"""ONNX's optimiser update rules (Adagrad, Adam, Momentum)."""

IMPORTED_DOMAINS: dict[str, tuple[int, int]] = {
    ML_DOMAIN: (1, 5),
    TRAINING_DOMAIN: (1, 1),
}
"""The domains besides ai.onnx whose ops the importer reads, with the range of
their opset versions it accepts. An op of such a domain is modelled as its
newest schema defines it; a model whose opset of the domain gives the op an
older schema is refused."""

EMBER_DOMAIN = "ember"
"""Ops of Ember's own (layout changes, laid-out convolutions): never imported from
ONNX, and not checked against ONNX's schemas."""

ORT_DOMAIN = "com.microsoft"
"""onnxruntime's contrib ops that Ember's own passes form (QGemm): not imported
from ONNX files, and checked against onnxruntime's schemas."""

_MNEMONIC_OVERRIDES = {
    "Col2Im": "col2im",
    "MatMul": "matmul",
    "QLinearMatMul": "qlinear_matmul",
    "MatMulInteger": "matmul_integer",
    "PRelu": "prelu",
    "LRN": "lrn",
    "IsNaN": "is_nan",
}


def mnemonic_of(onnx_type: str) -> str:
    """`GlobalAveragePool` -> `global_average_pool` (the op's name after `graph.`)."""
    if onnx_type in _MNEMONIC_OVERRIDES:
        return _MNEMONIC_OVERRIDES[onnx_type]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", onnx_type).lower()


@dataclass(frozen=True)
class OpSpec:
    """Everything Ember knows about one `graph` op, in one place. `onnx_type` is
    the op's type in its `domain`: an ONNX operator, or one of Ember's own."""

    onnx_type: str
    operands: Sequence[ValueSpec]
    results: Sequence[ValueSpec]
    infer: ShapeRule
    attributes: Sequence[AttrSpec] = ()
    summary: str = ""
    mnemonic: str = field(default="")
    domain: str = ONNX_DOMAIN

    def __post_init__(self) -> None:
        if not self.mnemonic:
            object.__setattr__(self, "mnemonic", mnemonic_of(self.onnx_type))

    @property
    def op_name(self) -> str:
        return f"graph.{self.mnemonic}"

    def attribute(self, name: str) -> AttrSpec:
        for attr in self.attributes:
            if attr.name == name:
                return attr
        raise KeyError(f"{self.op_name} has no attribute '{name}'")
