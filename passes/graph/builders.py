"""Building `graph` ops inside rewrite patterns.

Graph passes replace an op by new ops built in front of it: constants
computed at compile time, and ops of a given class. These helpers
insert them before an anchor op, so a rewrite's new ops always dominate the
uses of the value they replace.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, LocationAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from ember.dialects.graph import ConstantOp, GraphOp
from ember.dialects.graph.types import dense_from_array


def constant_op(attr: DenseIntOrFPElementsAttr) -> ConstantOp:
    """A `graph.constant` holding `attr` (not inserted anywhere)."""
    return ConstantOp.build(result_types=[attr.get_type()], properties={"value": attr})


def insert_constant(rewriter: PatternRewriter, anchor: Operation, array: np.ndarray) -> SSAValue:
    """A `graph.constant` holding `array`, inserted before `anchor`."""
    constant = constant_op(dense_from_array(array))
    rewriter.insert(constant, InsertPoint.before(anchor))
    return constant.results[0]


def insert_op(rewriter: PatternRewriter, anchor: Operation, op_class: type[GraphOp],
              operands: list, result_type: TensorType,
              properties: dict | None = None,
              location: LocationAttr | None = None) -> SSAValue:  # fmt: skip
    """An `op_class` op, inserted before `anchor`, with `anchor`'s location
    (its source names) unless `location` is given. An optional operand is
    passed as a list of zero or one value."""
    new = op_class.build(operands=operands, result_types=op_class.group_result_types([result_type]),
                         properties=properties or {})  # fmt: skip
    new.location = anchor.location if location is None else location
    rewriter.insert(new, InsertPoint.before(anchor))
    return new.results[0]
