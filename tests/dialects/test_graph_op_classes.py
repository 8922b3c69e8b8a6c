"""Every `graph` op is an importable class named after its `OpSpec` row, and
`graph.constant` is a constant to xDSL's own machinery."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.traits import ConstantLike
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

import ember.dialects.graph as graph
from ember.dialects.graph import (
    ALL_SPECS,
    OPS,
    AddOp,
    ConstantOp,
    ConvNHWCOp,
    ConvOp,
    GraphOp,
    MatMulOp,
    MaxPoolOp,
    constant_value_of,
    op_classes,
    ops_elementwise,
    ops_layout,
    ops_nn,
    ops_reduce,
    ops_tensor,
)
from ember.dialects.graph.base import class_name_of, graph_op
from ember.dialects.graph.ops_tensor import CONSTANT_SPEC
from ember.dialects.graph.types import dense_from_array

FAMILIES = (ops_elementwise, ops_nn, ops_tensor, ops_reduce, ops_layout)


def _classes_defined_in(module: object) -> dict[str, type[GraphOp]]:
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, GraphOp)
        and value.__module__ == getattr(module, "__name__", None)
    }


@pytest.mark.parametrize("family", FAMILIES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_each_row_of_a_family_has_its_class_and_no_class_lacks_a_row(family) -> None:
    specs = [*family.SPECS, *([CONSTANT_SPEC] if family is ops_tensor else [])]
    classes = _classes_defined_in(family)
    assert sorted(classes) == sorted(class_name_of(spec) for spec in specs)
    for spec in specs:
        op_class = classes[class_name_of(spec)]
        assert op_class.SPEC is spec
        assert op_class.name == spec.op_name


def test_the_package_exports_every_class_under_its_name() -> None:
    exported = {name for name in graph.__all__ if name.endswith("Op")}
    structural = {"FusedOp", "YieldOp", "GraphOp", "IfOp", "LoopOp", "ScanOp"}  # region ops
    assert exported - structural == {op.__name__ for op in OPS}
    for op in OPS:
        assert getattr(graph, op.__name__) is op
    assert len(OPS) == len(ALL_SPECS) + 1  # the rows and graph.constant


def test_class_names_follow_the_onnx_type() -> None:
    assert (ConvOp.name, MaxPoolOp.name, AddOp.name) == (
        "graph.conv",
        "graph.max_pool",
        "graph.add",
    )
    assert (MatMulOp.name, ConvNHWCOp.name) == ("graph.matmul", "graph.conv_nhwc")
    assert op_classes(ops_nn.SPECS)[0] is ConvOp


def test_a_class_that_no_row_names_is_refused() -> None:
    with pytest.raises(TypeError, match="ConvolutionOp: no OpSpec row"):

        @graph_op(ops_nn.SPECS)
        class ConvolutionOp(GraphOp): ...


def _constant(array: np.ndarray) -> ConstantOp:
    attr = dense_from_array(array)
    return ConstantOp.build(result_types=[attr.get_type()], properties={"value": attr})


def test_constant_is_constant_like_for_xdsl() -> None:
    constant = _constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert constant.has_trait(ConstantLike)
    assert ConstantLike.get_constant_value(constant.results[0]) == constant.properties["value"]
    np.testing.assert_array_equal(
        constant_value_of(constant.results[0]), np.arange(6, dtype=np.float32).reshape(2, 3)
    )


def test_xdsl_cse_merges_equal_constants() -> None:
    t = TensorType(f32, [3])
    func = FuncOp("main", ([], [t]))
    a, b = _constant(np.ones(3, np.float32)), _constant(np.ones(3, np.float32))
    add = AddOp.build(operands=[a.results[0], b.results[0]], result_types=[t])
    func.body.block.add_ops([a, b, add, ReturnOp(add.results[0])])
    module = ModuleOp([func])
    CommonSubexpressionElimination().apply(Context(), module)
    assert [type(op) for op in func.body.block.ops] == [ConstantOp, AddOp, ReturnOp]
    assert add.operands[0] is add.operands[1]
