"""Evaluating one `graph` op with the NumPy reference kernels.

This is where IR meets the kernels' contract: operands are flattened into
ONNX input order (None for an absent optional), attributes become
ONNX-native values with the op's defaults, and results are checked against
the op's declared result types, so that a wrong shape rule or a wrong
kernel shows up at the op that broke, not three ops later.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType

from ember.dialects.graph.base import GraphOp
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.ops_tensor import ShapeOp, SizeOp
from ember.dialects.graph.shapes import ShapeContext, has_symbols
from ember.dialects.graph.spec import Arity, AttrKind, OpSpec
from ember.dialects.graph.types import DYNAMIC, is_float, numpy_dtype, onnx_type_of
from ember.errors import EmberError
from ember.reference.kernels import KERNELS
from ember.reference.shape_values import settled, symbolic_values

PROPAGATION_LIMIT = 4096
"""Largest integer tensor whose value shape inference computes at compile time."""


class InterpreterError(EmberError):
    """The reference interpreter cannot run an op, or an op broke its types."""


def onnx_attributes(spec: OpSpec, values: dict[str, Any], num_results: int) -> dict[str, Any]:
    """Attribute values as the kernels expect them (ONNX-native, defaults filled)."""
    native: dict[str, Any] = {}
    for attr_spec in spec.attributes:
        value = values.get(attr_spec.name, attr_spec.default)
        if value is None:
            continue
        native[attr_spec.name] = onnx_type_of(value) if attr_spec.kind is AttrKind.TYPE else value
    if any(r.arity is not Arity.SINGLE for r in spec.results):
        # A variadic or optional result's count is not in the attributes
        # (Split's outputs, SoftmaxCrossEntropyLoss's log_prob).
        native["__num_results__"] = num_results
    return native


def flatten_operands(spec: OpSpec, groups: dict[str, Sequence[Any]]) -> list[Any]:
    flat: list[Any] = []
    for operand in spec.operands:
        group = list(groups.get(operand.name, ()))
        if operand.arity is Arity.OPTIONAL and not group:
            flat.append(None)
        else:
            flat.extend(group)
    return flat


def run_kernel(
    spec: OpSpec, inputs: list[np.ndarray | None], attrs: dict[str, Any], num_results: int
) -> list[np.ndarray]:
    kernel = KERNELS.get(spec.onnx_type)
    if kernel is None:
        raise InterpreterError(f"{spec.op_name}: no reference kernel")
    return kernel(inputs, onnx_attributes(spec, attrs, num_results))


def check_result(op_name: str, index: int, array: np.ndarray, declared: TensorType) -> np.ndarray:
    """`array` if it matches the declared type (cast scalars' dtype), else an error."""
    dtype = numpy_dtype(declared.element_type)
    shape = tuple(declared.get_shape())
    if array.dtype != dtype:
        raise InterpreterError(
            f"{op_name}: result #{index} has dtype {array.dtype}, the IR declares {dtype}"
        )
    if len(shape) != array.ndim or any(d != DYNAMIC and d != a for d, a in zip(shape, array.shape)):
        raise InterpreterError(
            f"{op_name}: result #{index} has shape {array.shape}, the IR declares {declared}"
        )
    return array


def evaluate(op: GraphOp, operand_values: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """Runs `op` on concrete operand arrays (flat, in operand order)."""
    groups: dict[str, list[np.ndarray | None]] = {}
    cursor = iter(operand_values)
    for operand in op.SPEC.operands:
        groups[operand.name] = [next(cursor) for _ in op.operand_group(operand.name)]
    inputs = flatten_operands(op.SPEC, groups)
    try:
        outputs = run_kernel(op.SPEC, inputs, op.attribute_values(), len(op.results))
    except InterpreterError:
        raise
    except (ValueError, IndexError, TypeError) as error:
        raise InterpreterError(f"{op.name}: {error}") from error
    if len(outputs) != len(op.results):
        raise InterpreterError(
            f"{op.name}: kernel produced {len(outputs)} results, the op has {len(op.results)}"
        )
    return [
        check_result(op.name, i, np.asarray(a), t)  # type: ignore[arg-type]
        for i, (a, t) in enumerate(zip(outputs, op.result_types))
    ]


def _is_propagated(value_type: Any) -> bool:
    """Small integer tensors, and float scalars: the float arithmetic that
    exporters build sizes with (`Range(0.0, Cast(size), 1.0)` in the window
    functions' expansions) decides shapes too."""
    if not isinstance(value_type, TensorType):
        return False
    shape = value_type.get_shape()
    if DYNAMIC in shape:
        return False
    if isinstance(value_type.element_type, IntegerType):
        return math.prod(shape) <= PROPAGATION_LIMIT
    return is_float(value_type.element_type) and math.prod(shape) <= 1


def propagate_value(op: GraphOp, context: ShapeContext) -> list[np.ndarray] | None:
    """Compile-time values of `op`'s results when they are small integer tensors
    or float scalars computable from known operands (or, for Shape/Size, from
    static types)."""
    if not all(_is_propagated(t) for t in op.result_types):
        return None
    if isinstance(op, ShapeOp | SizeOp):
        shape = symbolic_shape(context.type("data"))
        if isinstance(op, ShapeOp):
            shape = shape[context.attr("start") : context.attr("end")]
        if DYNAMIC in shape:
            return None
        count = math.prod(shape) if isinstance(op, SizeOp) else list(shape)
        return [settled(np.asarray(count, dtype=object))]
    values = context.operand_values
    if any(v is None for group in values.values() for v in group):
        return None
    inputs = flatten_operands(op.SPEC, values)
    if any(v is not None and has_symbols(v) for v in inputs):
        native = onnx_attributes(op.SPEC, dict(context.attributes), len(op.results))
        return symbolic_values(op, inputs, native)
    try:
        outputs = run_kernel(op.SPEC, inputs, dict(context.attributes), len(op.results))
        return [check_result(op.name, i, np.asarray(a), t)  # type: ignore[arg-type]
                for i, (a, t) in enumerate(zip(outputs, op.result_types))]  # fmt: skip
    except (EmberError, ValueError, IndexError, TypeError):
        # Leave the value unknown: the interpreter will report the problem at run time.
        return None
