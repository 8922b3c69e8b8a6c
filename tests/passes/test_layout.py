"""graph-layout keeps the meaning of real networks and converts only at
layout boundaries; the laid-out networks compile and agree with onnxruntime.

Every light model (random weights, constants and BatchNormalization folded)
runs through the reference interpreter before and after `graph-layout` +
`graph-fold-constants` + `graph-canonicalize` + `dce`, in both layouts. The
activation conversions left must be real boundaries (each value converted at
most once per layout, never a conversion of a conversion) and no more than
the boundaries that a simple model of the layout computes on the original
graph; no conversion of a constant survives folding. SqueezeNet and a
ResNet-50 bottleneck (its 56x56 convolutions) are compiled for the CPU in
both layouts and checked against onnxruntime; the whole ResNet-50 is `slow`.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import ember
from ember.compiler import compile_module
from ember.dialects.graph import ConstantOp, GraphOp, ops_elementwise
from ember.dialects.graph.types import DYNAMIC, is_float, shape_of
from ember.passes.graph.canonicalize import CanonicalizePass
from ember.passes.graph.fold_batchnorm import FoldBatchNormPass
from ember.passes.graph.fold_constants import FoldConstantsPass
from ember.passes.graph.layout import LayoutPass
from tests.support.models import (
    SLOW_IN_PASS_TESTS,
    light_model_params,
    light_model_path,
    random_inputs,
    run_onnxruntime,
    with_random_weights,
)

LAYOUTS = ("NCHWc", "NHWC")
BLOCK = 8
"""Plain conv chains with 60-140 MB of fully-connected weights: slow to load
and interpret, and structurally covered by the others."""


def lay_out(module: ModuleOp, layout: str) -> None:
    ctx = Context()
    for graph_pass in (LayoutPass(layout=layout, block=BLOCK), FoldConstantsPass(),
                       CanonicalizePass(), DeadCodeElimination()):  # fmt: skip
        graph_pass.apply(ctx, module)
    module.verify()


def conversions(module: ModuleOp) -> list[GraphOp]:
    return [op for op in module.walk()
            if isinstance(op, GraphOp) and op.SPEC.onnx_type == "LayoutTransform"]  # fmt: skip


# ------------------------------------------------- boundaries, independently

ELEMENTWISE = {spec.onnx_type for spec in ops_elementwise.SPECS}


def _activation(value: SSAValue, layout: str) -> bool:
    """A static 4-D value that has a form in the layout."""
    shape = shape_of(value.type)
    return (len(shape) == 4 and DYNAMIC not in shape
            and (layout == "NHWC" or shape[1] % BLOCK == 0))  # fmt: skip


def _conv_moves(op: GraphOp, layout: str) -> bool:
    x = op.operands[0]
    return (_activation(x, layout) and _activation(op.results[0], layout)
            and is_float(x.type.element_type)  # type: ignore[attr-defined]
            and (layout == "NHWC" or op.attr("group") == 1))  # fmt: skip


def boundaries(module: ModuleOp, layout: str) -> int:
    """The conversions a simple model of the layout needs: convolutions that
    can move do, and pools, Concat and element-wise ops follow any input that
    is available laid out. A value is available in the layout it is made in
    and, once converted, in the other one too; every activation read in a
    layout where it is not available yet costs one conversion (so do
    returned laid-out values)."""
    available: dict[SSAValue, set[bool]] = {}
    count = 0

    def need(value: SSAValue, laid: bool) -> None:
        nonlocal count
        layouts = available.setdefault(value, {False})  # inputs are NCHW
        if laid not in layouts:
            layouts.add(laid)
            count += 1

    for op in module.walk():
        if op.name == "func.return":
            for value in op.operands:
                need(value, False)
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
            continue
        kind = op.SPEC.onnx_type
        follows = kind in ("MaxPool", "AveragePool", "Concat") or kind in ELEMENTWISE
        moves = (_conv_moves(op, layout) if kind == "Conv"
                 else follows and any(True in available.get(v, ()) for v in op.operands))  # fmt: skip
        moves = moves and all(_activation(r, layout) for r in op.results)
        for value in op.operands:
            if not isinstance(value.owner, ConstantOp) and _activation(value, layout):
                need(value, moves)
        for value in op.results:
            available[value] = {moves}
    return count


# ------------------------------------------------------------- light models


@cache
def _light(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    model = with_random_weights(onnx.load(light_model_path(name)), seed=2)
    return model, random_inputs(model, seed=3)


def _imported(model: onnx.ModelProto) -> ModuleOp:
    """The graph as the graph pipeline leaves it before layout: weights folded,
    BatchNormalization folded into convolutions (or per-channel Mul + Add)."""
    module = ember.import_onnx(model)
    ctx = Context()
    for graph_pass in (FoldConstantsPass(), FoldBatchNormPass(), DeadCodeElimination()):
        graph_pass.apply(ctx, module)
    return module


@pytest.mark.parametrize(
    "name",
    light_model_params(SLOW_IN_PASS_TESTS),
)
def test_light_models_unchanged_with_conversions_at_boundaries(name: str) -> None:
    model, inputs = _light(name)
    module = _imported(model)
    before = ember.reference.run(module, inputs)
    for layout in LAYOUTS:
        laid_out = module.clone()
        lay_out(laid_out, layout)
        after = ember.reference.run(laid_out, inputs)
        for a, b in zip(before, after, strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
        converted = conversions(laid_out)
        assert all(not isinstance(op.operands[0].owner, ConstantOp) for op in converted)
        keys = [(op.operands[0], op.attr("target")) for op in converted]
        assert len(set(keys)) == len(keys), "a value is converted twice to one layout"
        assert not any(isinstance(op.operands[0].owner, GraphOp)
                       and op.operands[0].owner.SPEC.onnx_type == "LayoutTransform"
                       for op in converted), "a conversion of a conversion"  # fmt: skip
        assert len(converted) <= boundaries(module, layout), layout


@pytest.mark.parametrize(
    ("name", "layouts"),
    [
        ("squeezenet", LAYOUTS),
        pytest.param("resnet50", LAYOUTS, marks=pytest.mark.slow),
        ("shufflenet", ("NHWC",)),
    ],  # fmt: skip
)
def test_whole_networks_convert_twice(name: str, layouts: tuple[str, ...]) -> None:
    """SqueezeNet and ResNet-50 convert once into the layout (NCHWc: after the
    stem, whose 3 input channels are not a block) and once back before the
    classifier head; everything in between stays laid out. So does
    ShuffleNet in NHWC, its channel shuffles included (NCHWc has no grouped
    convolutions)."""
    model, _ = _light(name)
    for layout in layouts:
        module = _imported(model)
        lay_out(module, layout)
        pairs = [(op.attr("source"), op.attr("target")) for op in conversions(module)]
        data = "NHWC" if layout == "NHWC" else f"NCHW{BLOCK}c"
        assert pairs == [("NCHW", data), (data, "NCHW")], layout
        suffix = layout.lower()
        assert f"graph.conv_{suffix}" in {op.name for op in module.walk()}


# ------------------------------------------------------- compiled, end to end


def _check_compiled(model: onnx.ModelProto, inputs: dict[str, np.ndarray], layout: str) -> None:
    module = _imported(model)
    lay_out(module, layout)
    got = compile_module(module).run(inputs)
    for g, e in zip(got, run_onnxruntime(model, inputs), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)


def bottleneck(size: int = 56, channels: int = 256, width: int = 64, seed: int = 0
               ) -> onnx.ModelProto:  # fmt: skip
    """ResNet-50's first bottleneck block at full size: 1x1 reduce, 3x3, 1x1
    expand (biases as BatchNorm folds them), a residual Sum and ReLUs, then a
    stride-2 1x1 projection."""
    rng = np.random.default_rng(seed)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        scale = 1 / np.sqrt(np.prod(shape[1:]))
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                       name)  # fmt: skip

    inits = [weight("w1", width, channels, 1, 1), weight("b1", width),
             weight("w2", width, width, 3, 3), weight("b2", width),
             weight("w3", channels, width, 1, 1), weight("b3", channels),
             weight("w4", 2 * channels, channels, 1, 1)]  # fmt: skip
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"]), n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]), n("Relu", ["c2"], ["r2"]),
        n("Conv", ["r2", "w3", "b3"], ["c3"]), n("Sum", ["c3", "x"], ["s"]),
        n("Relu", ["s"], ["r3"]), n("Conv", ["r3", "w4"], ["y"], strides=[2, 2]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "bottleneck",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_compiled_squeezenet_agrees_with_onnxruntime(layout: str) -> None:
    _check_compiled(*_light("squeezenet"), layout)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_compiled_resnet50_bottleneck_agrees_with_onnxruntime(layout: str) -> None:
    model = bottleneck()
    x = np.random.default_rng(1).standard_normal((1, 256, 56, 56)).astype(np.float32)
    _check_compiled(model, {"x": x}, layout)


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
def test_compiled_resnet50_agrees_with_onnxruntime(layout: str) -> None:
    _check_compiled(*_light("resnet50"), layout)


@pytest.mark.parametrize("size", [5, 3])
def test_compiled_lrn_between_convolutions_stays_channels_last(size: int) -> None:
    """Conv, LRN (windows of 5 and 3, over 12 channels), Conv: in NHWC the
    LRN runs on the pixels viewed as a batch, so the only conversions are
    the two at the boundaries, and the result is onnxruntime's."""
    rng = np.random.default_rng(size)
    weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
               for name, shape in (("w1", (12, 3, 3, 3)), ("w2", (8, 12, 1, 1)))]  # fmt: skip
    n = helper.make_node
    nodes = [n("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
             n("LRN", ["c"], ["l"], size=size, alpha=0.5, beta=0.75, bias=2.0),
             n("Conv", ["l", "w2"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "lrn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], weights,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = _imported(model)
    lay_out(module, "NHWC")
    assert len(conversions(module)) == 2
    x = rng.standard_normal((1, 3, 9, 7)).astype(np.float32)
    _check_compiled(model, {"x": x}, "NHWC")
