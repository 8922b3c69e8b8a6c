"""`quick` (ember/dialects/quick_ops.py) makes the same ops as the
constructors it stands in for: the passes that build through it print the
same IR whether its cache hits or never does, for a convolution with a ReLU
and for a matmul that runs as a micro-kernel (`vector.fma`). Its cache keeps
a bounded number of keys."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Attribute

import ember.dialects.quick_ops as quick_ops
from ember.frontends.onnx import import_onnx
from ember.targets.cpu.pipeline import cpu_passes

PASSES = ["convert-graph-to-tensor", "convert-tensor-to-loop", "loop-generate"]
RNG = np.random.default_rng(3)


class _NeverHits(dict[Hashable, dict[str, Attribute]]):
    """A cache of `quick` that holds nothing: every op by its constructor."""

    def get(self, key: Hashable, default: object = None) -> None:  # type: ignore[override]
        return None

    def __setitem__(self, key: Hashable, value: dict[str, Attribute]) -> None:
        pass


def _weight(name: str, shape: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), name)


def conv_relu() -> onnx.ModelProto:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "conv_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 12])],
        [_weight("w", [16, 8, 3, 3])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def matmul() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [24, 40])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [24, 48])],
        [_weight("w", [40, 48])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _before(model: onnx.ModelProto, name: str) -> tuple[Context, ModuleOp, object]:
    """The module as the CPU pipeline has it just before the pass `name`."""
    module, ctx = import_onnx(model), Context()
    for _, compiler_pass in cpu_passes():
        if compiler_pass.name == name:
            return ctx, module, compiler_pass
        compiler_pass.apply(ctx, module)
    raise AssertionError(f"no pass {name} in the CPU pipeline")


@pytest.mark.parametrize("name", PASSES)
@pytest.mark.parametrize("model", [conv_relu, matmul])
def test_same_ir_with_and_without_quick(model, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, module, compiler_pass = _before(model(), name)
    quick_module = module.clone()
    compiler_pass.apply(ctx, quick_module)  # type: ignore[attr-defined]
    monkeypatch.setattr(quick_ops, "_PROPERTIES", _NeverHits())
    compiler_pass.apply(ctx, module)  # type: ignore[attr-defined]
    assert str(quick_module) == str(module)
    if model is matmul and name == "loop-generate":
        assert "vector.fma" in str(module)


def test_cache_starts_afresh_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quick_ops, "_PROPERTIES", {})
    monkeypatch.setattr(quick_ops, "_MOST_KEYS", 3)
    index = IndexType()
    for value in [*range(10), 7]:
        attr = IntegerAttr(value, index)
        op = quick_ops.quick(lambda attr=attr: arith.ConstantOp(attr), (arith.ConstantOp, value),
                             arith.ConstantOp, (), (index,))  # fmt: skip
        assert op.value == attr and op.result.type == index
        assert len(quick_ops._PROPERTIES) <= 3
