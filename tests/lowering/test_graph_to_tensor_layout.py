"""convert-graph-to-tensor keeps the meaning of Ember's layout ops.

Each case is one layout op on function arguments (its result type from the
op's shape rule): the `graph` reference interpreter runs it, the lowering
turns it into tensor ops, and the tensor-level interpreter must agree. The
data are random and laid out with the layout helpers, so a lowering that
reads the wrong element of a block fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.rewriter import InsertPoint

import ember
from ember.dialects.graph import IMPORTABLE_OPS, OPS_BY_TYPE
from ember.dialects.graph.layouts import convert_array
from ember.dialects.graph.types import attribute_from_value
from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass, lowerable_op_types
from ember.reference.tensor_level import run_tensor_module
from tests.lowering.test_graph_to_tensor import leftover_graph_ops, randn


def single_op_module(op_type: str, operands: list[np.ndarray | None], attrs: dict[str, Any]
                     ) -> ModuleOp:  # fmt: skip
    """`@main(args...)` returning one `op_type` op of the (non-None) operands;
    None is an absent optional operand."""
    op_class = OPS_BY_TYPE[op_type]
    arg_types = [TensorType(f32, a.shape) for a in operands if a is not None]
    func = FuncOp("main", (arg_types, []))
    args = iter(func.body.block.args)
    groups = [[] if a is None else next(args) for a in operands]
    properties = {name: attribute_from_value(op_class.SPEC.attribute(name).kind, value)
                  for name, value in attrs.items()}  # fmt: skip
    probe = op_class.build(operands=groups, result_types=[TensorType(f32, [1])],
                           properties=properties)  # fmt: skip
    result_type = probe.infer_result_types()[0]
    op = op_class.build(operands=groups, result_types=[result_type], properties=properties)
    builder = Builder(InsertPoint.at_end(func.body.block))
    builder.insert(op)
    builder.insert(ReturnOp(op.results[0]))
    func.function_type = FunctionType.from_lists(arg_types, [result_type])
    return ModuleOp([func])


def nchwc(x: np.ndarray, block: int = 8) -> np.ndarray:
    return convert_array(x, "NCHW", f"NCHW{block}c")


def nhwc(x: np.ndarray) -> np.ndarray:
    return convert_array(x, "NCHW", "NHWC")


def blocked_weight(w: np.ndarray, c: int = 8, k: int = 8) -> np.ndarray:
    return convert_array(w, "OIHW", f"OIHW{c}i{k}o")


def hwio(w: np.ndarray) -> np.ndarray:
    return convert_array(w, "OIHW", "HWIO")


X = randn(2, 16, 9, 11, key="x")
W = randn(24, 16, 3, 3, scale=0.2, key="w")
B = randn(24, key="b")

CASES = [
    ("LayoutTransform", [X], {"source": "NCHW", "target": "NCHW8c"}, "to-nchw8c"),
    ("LayoutTransform", [nchwc(X)], {"source": "NCHW8c", "target": "NCHW"}, "to-nchw"),
    ("LayoutTransform", [nchwc(X)], {"source": "NCHW8c", "target": "NHWC"}, "nchwc-to-nhwc"),
    ("LayoutTransform", [nchwc(X, 4)], {"source": "NCHW4c", "target": "NCHW16c"}, "reblock"),
    ("LayoutTransform", [W], {"source": "OIHW", "target": "OIHW8i8o"}, "weight"),
    ("LayoutTransform", [B], {"source": "O", "target": "O8o"}, "bias"),
    ("ConvNCHWc", [nchwc(X), blocked_weight(W), convert_array(B, "O", "O8o")],
     {"pads": [1, 1, 1, 1]}, "bias-pads"),
    ("ConvNCHWc", [nchwc(X), blocked_weight(W), None],
     {"strides": [2, 2], "dilations": [2, 1], "pads": [2, 0, 1, 1]}, "strided-dilated"),
    ("ConvNCHWc", [nchwc(X, 4), blocked_weight(W, 4, 8), None],
     {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, "other-blocks-same-upper"),
    ("ConvNHWC", [nhwc(X), hwio(W), B], {"pads": [1, 1, 1, 1], "strides": [1, 2]}, "bias"),
    ("ConvNHWC", [nhwc(X), hwio(randn(24, 4, 3, 3, key="grouped")), None],
     {"group": 4, "dilations": [2, 2]}, "grouped"),
    ("ConvNHWC", [nhwc(X), hwio(randn(16, 1, 3, 3, key="dw")), None],
     {"group": 16, "pads": [1, 1, 1, 1]}, "depthwise"),
    ("MaxPoolNCHWc", [nchwc(X)],
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}, "ceil"),
    ("MaxPoolNHWC", [nhwc(X)], {"kernel_shape": [2, 3], "dilations": [2, 1]}, "dilated"),
    ("AveragePoolNCHWc", [nchwc(X)],
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, "counts"),
    ("AveragePoolNHWC", [nhwc(X)],
     {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 2], "count_include_pad": 1},
     "include-pad"),
]  # fmt: skip


@pytest.mark.parametrize(("op_type", "operands", "attrs"),
                         [pytest.param(*c[:3], id=f"{c[0]}-{c[3]}") for c in CASES])  # fmt: skip
def test_layout_op(op_type: str, operands: list[np.ndarray | None], attrs: dict[str, Any]) -> None:
    module = single_op_module(op_type, operands, attrs)
    module.verify()
    feeds = [a for a in operands if a is not None]
    expected = ember.reference.run(module, feeds)
    ConvertGraphToTensorPass().apply(Context(), module)
    module.verify()
    assert leftover_graph_ops(module) == []
    got = run_tensor_module(module, feeds)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-5)


def test_every_layout_op_is_tested() -> None:
    ember_ops = lowerable_op_types() - {op_type for _, op_type in IMPORTABLE_OPS}
    assert ember_ops - {c[0] for c in CASES} == set()


def test_laid_out_conv_matches_conv() -> None:
    """The reference kernels define the laid-out convolution as Conv on NCHW."""
    conv = ember.reference.run(single_op_module("Conv", [X, W, B], {"pads": [1, 1, 1, 1]}),
                               [X, W, B])[0]  # fmt: skip
    bias = convert_array(B, "O", "O8o")
    blocked = ember.reference.run(
        single_op_module("ConvNCHWc", [nchwc(X), blocked_weight(W), bias], {"pads": [1, 1, 1, 1]}),
        [nchwc(X), blocked_weight(W), bias],
    )[0]  # fmt: skip
    np.testing.assert_allclose(convert_array(blocked, "NCHW8c", "NCHW"), conv, rtol=1e-6)
