"""Symbolic dims at import: ONNX `dim_param`s become symbols, and shape
inference on symbols agrees with shape inference on the sizes they stand for."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from benchmarks.conformance import node_cases
from ember.dialects.graph.dims import SYMBOLS_ATTR, symbol_ranges, symbolic_shape
from ember.dialects.graph.symbolic import SymExpr
from ember.dialects.graph.types import DYNAMIC
from ember.errors import EmberError
from ember.frontends.onnx import import_onnx
from ember.models import resolve_model
from ember.reference import entry_function


def _tensors(module: ModuleOp) -> Iterator[SSAValue]:
    for op in module.walk():
        for value in op.results:
            if isinstance(value.type, TensorType):
                yield value


def _disagreements(static: ModuleOp, symbolic: ModuleOp, sizes: dict[str, int]) -> list[str]:
    """Values whose symbolic shape, evaluated at `sizes`, is not the static one."""
    found = []
    for a, b in zip(_tensors(static), _tensors(symbolic), strict=True):
        dims = symbolic_shape(b.type)  # type: ignore[arg-type]
        evaluated = [d.evaluate(sizes) if isinstance(d, SymExpr) else d for d in dims]
        expected = a.type.get_shape()  # type: ignore[attr-defined]
        if any(e != DYNAMIC and e != s for e, s in zip(evaluated, expected, strict=True)):
            found.append(f"{b.name_hint}: {b.type} at {sizes} is not {a.type}")
    return found


def _symbolized(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]]:
    """The model with every input size above 1 named `d<size>` (equal sizes,
    one symbol, so that dims that must match still do)."""
    model = copy.deepcopy(model)
    sizes: dict[str, int] = {}
    weights = {t.name for t in model.graph.initializer}
    for info in model.graph.input:
        if info.name in weights:
            continue
        for dim in info.type.tensor_type.shape.dim:
            if dim.HasField("dim_value") and dim.dim_value > 1:
                sizes[f"d{dim.dim_value}"] = dim.dim_value
                dim.dim_param = f"d{dim.dim_value}"
    return model, sizes


def _model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "zero", "two"], ["batch_and_sequence"]),
        helper.make_node("Concat", ["batch_and_sequence", "heads"], ["split"], axis=0),
        helper.make_node("Reshape", ["y", "split"], ["out"]),
    ]
    weights = [
        numpy_helper.from_array(np.ones((16, 16), np.float32), "w"),
        numpy_helper.from_array(np.array([0]), "zero"),
        numpy_helper.from_array(np.array([2]), "two"),
        numpy_helper.from_array(np.array([4, -1]), "heads"),
    ]
    graph = helper.make_graph(
        nodes, "heads", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", None, 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], weights,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_dim_params_become_symbols() -> None:
    func = entry_function(import_onnx(_model()))
    assert str(func.args[0].type) == "tensor<?x?x16xf32, #graph.dims<batch, x_1>>"
    assert str(func.function_type.outputs.data[0]) == (
        "tensor<?x?x4x4xf32, #graph.dims<batch, x_1>>"
    )
    ranges = symbol_ranges(func.attributes[SYMBOLS_ATTR])  # type: ignore[arg-type]
    assert ranges == {"batch": (1, None), "x_1": (1, None)}


def test_dims_range_and_pin_symbols() -> None:
    func = entry_function(import_onnx(_model(), dims={"batch": (2, 2), "x_1": (1, 512)}))
    assert str(func.function_type.outputs.data[0]) == "tensor<2x?x4x4xf32, #graph.dims<x_1>>"
    assert symbol_ranges(func.attributes[SYMBOLS_ATTR]) == {"x_1": (1, 512)}  # type: ignore[arg-type]
    with pytest.raises(EmberError, match="--dim names unknown symbol"):
        import_onnx(_model(), dims={"N": (1, 2)})


@pytest.mark.parametrize("model", ["squeezenet", "densenet121"])
def test_light_models_with_a_symbolic_batch(model: str) -> None:
    proto = onnx.load(str(resolve_model(f"light:{model}")))
    static = import_onnx(proto)
    weights = {t.name for t in proto.graph.initializer}
    data = next(i for i in proto.graph.input if i.name not in weights)
    data.type.tensor_type.shape.dim[0].dim_param = "N"
    symbolic = import_onnx(proto)
    assert str(entry_function(symbolic).function_type.outputs.data[0]) == (
        "tensor<?x1000x1x1xf32, #graph.dims<N>>"
    )
    assert _disagreements(static, symbolic, {"N": 1}) == []


@functools.cache
def _passing_cases() -> list:
    names = (Path(__file__).parents[1] / "conformance" / "passing.txt").read_text().split()
    return [case for case in node_cases() if case.name in set(names)]


CHUNKS = 4


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_node_cases_agree_on_symbols(chunk: int) -> None:
    """Every passing ONNX node case, its input sizes made symbols: the import
    succeeds or names a contradiction, and every shape it infers is the
    static one at the sizes the symbols stand for."""
    checked = 0
    for case in _passing_cases()[chunk::CHUNKS]:
        try:
            static = import_onnx(case.model)
        except EmberError:
            continue  # shapes that depend on input values, found at the first run
        model, sizes = _symbolized(case.model)
        try:
            symbolic = import_onnx(model)
        except EmberError:
            continue  # e.g. a Reshape to a constant shape: the symbol must be one size
        assert _disagreements(static, symbolic, sizes) == [], case.name
        checked += 1
    assert checked > 150
