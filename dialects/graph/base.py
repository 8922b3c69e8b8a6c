"""The `graph` op base class and the factory that builds ops from specs.

All `graph` ops share one readable assembly format:

    %y = graph.conv %x, %w, B %b {strides = array<i64: 2, 2>} : (tensor<...>, ...) -> tensor<...>

Required and variadic operands are positional; an optional operand, when
present, is preceded by its ONNX name so that any subset can be written
(`graph.clip %x, max %hi`). Attributes are ONNX's, under ONNX's names, with
only the ones that were set shown. The trailing function type lists every
operand and result type.

The verifier checks required attributes and re-runs the op's shape rule:
declared result types must agree with the inferred ones (same element type
and rank, every dim equal or unknown on one side), and no result may exceed
Ember's per-tensor size limit (`types.MAX_TENSOR_BYTES`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ember.dialects.graph.dims import encoding_problem
from ember.dialects.graph.shapes import ShapeContext, ShapeError, infer_types, types_compatible
from ember.dialects.graph.spec import Arity, OpSpec
from ember.dialects.graph.types import (
    attribute_constraint,
    type_size_problem,
    value_from_attribute,
)


class GraphOp(IRDLOperation):
    """Base of every `graph` op; `SPEC` holds its declarative description."""

    SPEC: ClassVar[OpSpec]
    FIELD_NAMES: ClassVar[dict[str, str]]
    """ONNX operand/result/attribute name -> Python field name."""

    # ------------------------------------------------------------ accessors
    def operand_group(self, name: str) -> list[SSAValue]:
        """The SSA values bound to one spec operand (0 or 1 for optional)."""
        value = getattr(self, self.FIELD_NAMES[name])
        if value is None:
            return []
        if isinstance(value, SSAValue):
            return [value]
        return list(value)

    def attr(self, name: str) -> Any:
        """The Python value of an ONNX attribute, with the ONNX default applied."""
        attr_spec = self.SPEC.attribute(name)
        if name in self.properties:
            return value_from_attribute(attr_spec.kind, self.properties[name])
        return attr_spec.default

    def attribute_values(self) -> dict[str, Any]:
        """Every attribute that is set or has a default, as Python values."""
        values: dict[str, Any] = {}
        for attr_spec in self.SPEC.attributes:
            value = self.attr(attr_spec.name)
            if value is not None:
                values[attr_spec.name] = value
        return values

    def shape_context(self, known_values: dict[SSAValue, np.ndarray] | None = None) -> ShapeContext:
        from ember.dialects.graph.ops_tensor import constant_value_of

        types: dict[str, list[TensorType]] = {}
        values: dict[str, list[np.ndarray | None]] = {}
        for operand in self.SPEC.operands:
            group = self.operand_group(operand.name)
            types[operand.name] = [v.type for v in group]  # type: ignore[misc]
            values[operand.name] = [
                (known_values or {}).get(v, constant_value_of(v)) for v in group
            ]
        return ShapeContext(self.SPEC, types, values, self.attribute_values(), len(self.results))

    def infer_result_types(
        self, known_values: dict[SSAValue, np.ndarray] | None = None
    ) -> list[TensorType]:
        """Runs the op's shape rule (raises ShapeError)."""
        return infer_types(self.shape_context(known_values))

    # ------------------------------------------------------------- verifier
    def verify_(self) -> None:
        for attr_spec in self.SPEC.attributes:
            if attr_spec.required and attr_spec.name not in self.properties:
                raise VerifyException(f"{self.name}: attribute '{attr_spec.name}' is required")
        for value in self.operands:
            if not isinstance(value.type, TensorType):
                raise VerifyException(f"{self.name}: operands must be ranked tensors")
        for value in (*self.operands, *self.results):
            problem = encoding_problem(value.type)
            if problem:
                raise VerifyException(f"{self.name}: {problem}")
        try:
            inferred = self.infer_result_types()
        except ShapeError as error:
            raise VerifyException(f"{self.name}: {error}") from error
        if len(inferred) != len(self.results):
            raise VerifyException(
                f"{self.name}: expected {len(inferred)} results, found {len(self.results)}"
            )
        for index, result_type in enumerate(self.result_types):
            problem = type_size_problem(result_type)
            if problem:
                raise VerifyException(f"{self.name}: result #{index}: {problem}")
        for index, (declared, expected) in enumerate(zip(self.result_types, inferred)):
            if not isinstance(declared, TensorType) or not types_compatible(declared, expected):
                raise VerifyException(
                    f"{self.name}: result #{index} has type {declared}, "
                    f"but the operands imply {expected}"
                )

    # ------------------------------------------------------ assembly format
    def print(self, printer: Printer) -> None:
        first = True
        for operand in self.SPEC.operands:
            for value in self.operand_group(operand.name):
                printer.print_string(" " if first else ", ")
                first = False
                if operand.arity is Arity.OPTIONAL:
                    printer.print_string(f"{operand.name} ")
                printer.print_operand(value)
        properties = {k: v for k, v in self.properties.items() if k not in _SEGMENTS}
        printer.print_op_attributes(properties | self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)

    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        start = parser.pos
        positional: list[UnresolvedOperand] = []
        named: dict[str, UnresolvedOperand] = {}
        optional_names = {o.name for o in cls.SPEC.operands if o.arity is Arity.OPTIONAL}
        order: list[tuple[str | None, UnresolvedOperand]] = []
        expect_operand = False
        while True:
            keyword_start = parser.pos
            keyword = parser.parse_optional_identifier()
            operand = (
                parser.parse_unresolved_operand()
                if keyword is not None or expect_operand
                else parser.parse_optional_unresolved_operand()
            )
            if operand is None:
                break
            if keyword is not None:
                if keyword not in optional_names:
                    parser.raise_error(
                        f"'{keyword}' is not an optional operand of {cls.SPEC.op_name}",
                        keyword_start,
                        keyword_start + len(keyword),
                    )
                if keyword in named:
                    parser.raise_error(
                        f"optional operand '{keyword}' given twice",
                        keyword_start,
                        keyword_start + len(keyword),
                    )
                named[keyword] = operand
            else:
                positional.append(operand)
            order.append((keyword, operand))
            if parser.parse_optional_punctuation(",") is None:
                break
            expect_operand = True
        attributes_start = parser.pos
        attributes = parser.parse_optional_attr_dict()
        unknown = [k for k in attributes if k not in cls._property_names() and "." not in k]
        if unknown:
            # Discardable attributes carry a dialect prefix (`onnx.name`); a bare
            # unknown name is a typo of an ONNX attribute and must not be ignored.
            parser.raise_error(
                f"{cls.SPEC.op_name} has no attribute '{unknown[0]}'", attributes_start, parser.pos
            )
        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        operand_types = function_type.inputs.data
        if len(operand_types) != len(order):
            parser.raise_error(
                f"{cls.SPEC.op_name} has {len(order)} operands but the type lists "
                f"{len(operand_types)}",
                start,
                parser.pos,
            )
        resolved = {
            id(unresolved): parser.resolve_operand(unresolved, value_type)
            for (_, unresolved), value_type in zip(order, operand_types)
        }
        end = parser.pos
        try:
            operands = cls._assign_operands(positional, named, resolved)
            results = cls.group_result_types(list(function_type.outputs.data))
        except ValueError as error:
            parser.raise_error(str(error), start, end)
        properties = {k: v for k, v in attributes.items() if k in cls._property_names()}
        discardable = {k: v for k, v in attributes.items() if k not in properties}
        return cls.build(
            operands=operands,
            result_types=results,
            properties=properties,
            attributes=discardable,
        )

    @classmethod
    def _property_names(cls) -> set[str]:
        return {a.name for a in cls.SPEC.attributes}

    @classmethod
    def _assign_operands(
        cls,
        positional: list[UnresolvedOperand],
        named: dict[str, UnresolvedOperand],
        resolved: dict[int, SSAValue],
    ) -> list[SSAValue | list[SSAValue] | None]:
        singles = sum(1 for o in cls.SPEC.operands if o.arity is Arity.SINGLE)
        has_variadic = any(o.arity is Arity.VARIADIC for o in cls.SPEC.operands)
        if len(positional) < singles or (not has_variadic and len(positional) != singles):
            raise ValueError(
                f"{cls.SPEC.op_name} expects {singles} positional operand(s), got {len(positional)}"
            )
        variadic_count = len(positional) - singles
        operands: list[SSAValue | list[SSAValue] | None] = []
        cursor = 0
        for spec in cls.SPEC.operands:
            if spec.arity is Arity.SINGLE:
                operands.append(resolved[id(positional[cursor])])
                cursor += 1
            elif spec.arity is Arity.VARIADIC:
                group = positional[cursor : cursor + variadic_count]
                operands.append([resolved[id(u)] for u in group])
                cursor += variadic_count
            else:
                unresolved = named.get(spec.name)
                operands.append([resolved[id(unresolved)]] if unresolved else [])
        return operands

    @classmethod
    def group_result_types(cls, result_types: list[Attribute]) -> list[Attribute | list[Attribute]]:
        """`result_types` grouped as `build` takes them: a variadic result
        takes every type past the single ones; optional results (several
        of them: BatchNormalization's running statistics) take one type
        each, in order, while types remain."""
        results = cls.SPEC.results
        fixed = sum(1 for r in results if r.arity is Arity.SINGLE)
        variadic = any(r.arity is Arity.VARIADIC for r in results)
        optional = sum(1 for r in results if r.arity is Arity.OPTIONAL)
        most = math.inf if variadic else fixed + optional
        if not fixed <= len(result_types) <= most:
            raise ValueError(
                f"{cls.SPEC.op_name} has {fixed} result(s)"
                + (f" and {optional} optional one(s)" if optional and not variadic else "")
                + f", the type lists {len(result_types)}"
            )
        grouped: list[Attribute | list[Attribute]] = []
        extra = len(result_types) - fixed
        cursor = 0
        for spec in results:
            if spec.arity is Arity.SINGLE:
                grouped.append(result_types[cursor])
                cursor += 1
                continue
            count = extra if spec.arity is Arity.VARIADIC else min(extra, 1)
            grouped.append(result_types[cursor : cursor + count])
            cursor += count
            extra -= count
        return grouped


OpT = TypeVar("OpT", bound=GraphOp)

_SEGMENTS = ("operandSegmentSizes", "resultSegmentSizes")
_RESERVED = set(dir(IRDLOperation)) | {"SPEC", "FIELD_NAMES", "name"}


def _field_name(name: str) -> str:
    return f"{name}_" if name in _RESERVED else name


def class_name_of(spec: OpSpec) -> str:
    """The Python name of the op class for `spec`: its type plus `Op` (`ConvOp`,
    `MatMulOp`, `ConvNHWCOp`), so the class is found by grepping the ONNX name."""
    return f"{spec.onnx_type}Op"


def define_op(spec: OpSpec, cls: type[OpT]) -> type[OpT]:
    """Completes the class `cls` into the IRDL operation `spec` describes: its
    name, operand/result/attribute fields and the shared assembly format.
    What `cls` declares itself (methods, traits, a docstring) is kept."""
    namespace: dict[str, Any] = {
        "name": spec.op_name,
        "SPEC": spec,
        "__doc__": spec.summary or f"ONNX {spec.onnx_type}.",
        "__annotations__": {"SPEC": ClassVar[OpSpec], "FIELD_NAMES": ClassVar[dict[str, str]]},
        # Graph ops are functions of their operands: xDSL's `dce` and `cse` apply.
        "traits": traits_def(Pure()),
    }
    field_names: dict[str, str] = {}
    for operand in spec.operands:
        field = _field_name(operand.name)
        field_names[operand.name] = field
        namespace[field] = {
            Arity.SINGLE: operand_def,
            Arity.OPTIONAL: opt_operand_def,
            Arity.VARIADIC: var_operand_def,
        }[operand.arity](TensorType)
    for res in spec.results:
        field = _field_name(res.name)
        field_names[res.name] = field
        namespace[field] = (
            result_def(TensorType) if res.arity is Arity.SINGLE else var_result_def(TensorType)
        )
    for attr_spec in spec.attributes:
        field = _field_name(attr_spec.name)
        field_names[attr_spec.name] = field
        constraint = attribute_constraint(attr_spec.kind)
        define = prop_def if attr_spec.required else opt_prop_def
        namespace[field] = define(constraint, prop_name=attr_spec.name)
    namespace["FIELD_NAMES"] = field_names
    options: list[Any] = []
    if sum(1 for o in spec.operands if o.arity is not Arity.SINGLE) > 1:
        options.append(AttrSizedOperandSegments(as_property=True))
    if sum(1 for r in spec.results if r.arity is not Arity.SINGLE) > 1:
        options.append(AttrSizedResultSegments(as_property=True))
    if options:
        namespace["irdl_options"] = tuple(options)
    own = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    if own.get("__doc__") is None:
        own.pop("__doc__", None)
    return irdl_op_definition(type(cls)(cls.__name__, cls.__bases__, namespace | own))


def graph_op(specs: Sequence[OpSpec]) -> Callable[[type[OpT]], type[OpT]]:
    """Class decorator: makes the class the op of the row in `specs` whose
    `class_name_of` is the class's name.

        @graph_op(SPECS)
        class ConvOp(GraphOp): ...

    The table stays the single description of the op; the class statement
    gives it a name that imports, greps and type-checks. A class that no row
    names is an error at import."""
    by_name = {class_name_of(spec): spec for spec in specs}

    def complete(cls: type[OpT]) -> type[OpT]:
        spec = by_name.get(cls.__name__)
        if spec is None:
            raise TypeError(f"{cls.__name__}: no OpSpec row of its family is named {cls.__name__}")
        return define_op(spec, cls)

    return complete
