"""`graph-infer-shapes`: recomputes every `graph` result type from its operands.

Walks each function in order, runs each op's shape rule with the values of
small integer tensors known at compile time (constants, and shape arithmetic
computed from them), and sets each result to the inferred type; the function
signature follows its `func.return`. Use it after changing an input type
(e.g. a batch size) or after a pass that builds ops with unknown dims.
Symbolic dims (`#graph.dims`) are computed with the ranges the function's
`graph.symbols` gives, which a rule's requirement may narrow (a window
must fit its input: `H >= 3`); the attribute is updated.
The bodies of `graph.if`, `graph.loop` and `graph.scan` are inferred too
(a loop's carried arguments widened until their types settle), then their
results. Other non-`graph` ops are left alone. A broken shape rule is reported as an error
naming the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ember.dialects.graph import ConstantOp, GraphOp, IfOp, LoopOp, ScanOp
from ember.dialects.graph.control_flow import (
    MAX_BODY_TYPE_ROUNDS,
    initial_arguments,
    static_trip_count,
    widened_arguments,
)
from ember.dialects.graph.dims import SYMBOLS_ATTR, symbol_ranges, symbols_attribute
from ember.dialects.graph.ops_tensor import constant_value_of
from ember.dialects.graph.shapes import ShapeError, infer_types
from ember.dialects.graph.symbolic import in_ranges
from ember.dialects.graph.types import array_from_dense
from ember.passes.graph.fold_constants import static_element_count
from ember.reference.evaluate import PROPAGATION_LIMIT, propagate_value


def infer_function_shapes(func: FuncOp) -> None:
    ranges = symbol_ranges(func.attributes.get(SYMBOLS_ATTR))  # type: ignore[arg-type]
    with in_ranges(ranges):
        _infer_in_order(func)
    if ranges:
        # A rule's requirement may have narrowed a range (a window must fit).
        func.attributes[SYMBOLS_ATTR] = symbols_attribute(ranges)


def _infer_in_order(func: FuncOp) -> None:
    known: dict[SSAValue, np.ndarray] = {}
    _infer_block(func.body.block, known)
    returns = [op for op in func.body.walk() if isinstance(op, ReturnOp)]
    if returns:
        outputs = [v.type for v in returns[0].operands]
        func.function_type = FunctionType.from_lists(func.function_type.inputs.data, outputs)


def _infer_block(block: Block, known: dict[SSAValue, np.ndarray]) -> None:
    for op in block.ops:
        if isinstance(op, ConstantOp):
            value = op.properties["value"]
            count = static_element_count(value.get_type())  # type: ignore[attr-defined]
            if isinstance(value, DenseIntOrFPElementsAttr) and (count or 0) <= PROPAGATION_LIMIT:
                known[op.results[0]] = array_from_dense(value)
        elif isinstance(op, GraphOp):
            _infer_op(op, known)
        elif isinstance(op, IfOp | LoopOp | ScanOp):
            try:
                _infer_control_flow(op, known)
            except VerifyException as error:
                raise DiagnosticException(str(error)) from error
        else:
            for region in op.regions:
                for inner in region.blocks:
                    _infer_block(inner, known)


def _infer_op(op: GraphOp, known: dict[SSAValue, np.ndarray]) -> None:
    context = op.shape_context(known)
    try:
        inferred = infer_types(context)
    except ShapeError as error:
        raise DiagnosticException(f"{op.name}: {error}") from error
    if len(inferred) != len(op.results):
        raise DiagnosticException(
            f"{op.name}: the shape rule gives {len(inferred)} results, the op has {len(op.results)}"
        )
    _set_result_types(op, inferred)
    # The context holds operand types and values, which the new result types do not change.
    for result, array in zip(op.results, propagate_value(op, context) or ()):
        known[result] = array


def _set_result_types(op: Operation, types: Sequence[Attribute]) -> None:
    for result, new_type in zip(list(op.results), types):
        if result.type != new_type:
            Rewriter.replace_value_with_new_type(result, new_type)


def _infer_control_flow(op: IfOp | LoopOp | ScanOp, known: dict[SSAValue, np.ndarray]) -> None:
    """Infers the regions (a loop body with its carried arguments widened
    until their types settle), then the op's results."""
    if isinstance(op, IfOp):
        _infer_block(op.then_branch.block, known)
        _infer_block(op.else_branch.block, known)
        _set_result_types(op, op.infer_result_types())
        return
    block = op.body.block
    arg_types = initial_arguments(op)
    for _ in range(MAX_BODY_TYPE_ROUNDS):
        for arg, arg_type in zip(list(block.args), arg_types):
            if arg.type != arg_type:
                Rewriter.replace_value_with_new_type(arg, arg_type)
        _infer_block(block, known)
        widened = widened_arguments(op, arg_types)
        if widened == arg_types:
            break
        arg_types = widened
    else:
        raise DiagnosticException(f"{op.name}: the carried values' types do not settle")
    if isinstance(op, LoopOp):
        count = static_trip_count(op, lambda v: known.get(v, constant_value_of(v)))
        _set_result_types(op, op.infer_result_types(count))
    else:
        _set_result_types(op, op.infer_result_types())


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    """Recomputes `graph` result types (and function results) from operands."""

    name = "graph-infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp) and not func.is_declaration:
                infer_function_shapes(func)
