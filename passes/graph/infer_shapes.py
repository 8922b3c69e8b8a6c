"""`graph-infer-shapes`: recomputes every `graph` result type from its operands.

Walks each function in order, runs each op's shape rule with the values of
small integer tensors known at compile time (constants, and shape arithmetic
computed from them), and sets each result to the inferred type; the function
signature follows its `func.return`. Use it after changing an input type
(e.g. a batch size) or after a pass that builds ops with unknown dims.
Symbolic dims (`#graph.dims`) are computed with the ranges the function's
`graph.symbols` gives, which a rule's requirement may narrow (a window
must fit its input: `H >= 3`); the attribute is updated.
Non-`graph` ops are left alone. A broken shape rule is reported as an error
naming the op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph import ConstantOp, GraphOp
from ember.dialects.graph.dims import SYMBOLS_ATTR, symbol_ranges, symbols_attribute
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
    for op in func.body.walk():
        if isinstance(op, ConstantOp):
            value = op.properties["value"]
            count = static_element_count(value.get_type())  # type: ignore[attr-defined]
            if isinstance(value, DenseIntOrFPElementsAttr) and (count or 0) <= PROPAGATION_LIMIT:
                known[op.results[0]] = array_from_dense(value)
            continue
        if not isinstance(op, GraphOp):
            continue
        context = op.shape_context(known)
        try:
            inferred = infer_types(context)
        except ShapeError as error:
            raise DiagnosticException(f"{op.name}: {error}") from error
        if len(inferred) != len(op.results):
            raise DiagnosticException(
                f"{op.name}: the shape rule gives {len(inferred)} results, the op has "
                f"{len(op.results)}"
            )
        for result, new_type in zip(list(op.results), inferred):
            if result.type != new_type:
                Rewriter.replace_value_with_new_type(result, new_type)
        # The context holds operand types and values, which the new result types do not change.
        for result, array in zip(op.results, propagate_value(op, context) or ()):
            known[result] = array
    returns = [op for op in func.body.walk() if isinstance(op, ReturnOp)]
    if returns:
        outputs = [v.type for v in returns[0].operands]
        func.function_type = FunctionType.from_lists(func.function_type.inputs.data, outputs)


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    """Recomputes `graph` result types (and function results) from operands."""

    name = "graph-infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp) and not func.is_declaration:
                infer_function_shapes(func)
