"""Property tests on small random graphs of supported ops (elementwise chains
and diamonds, reductions, Softmax, MatMul, Conv with bias): compiled for the
CPU they agree with the NumPy reference interpreter, and the level-2 graph
optimiser (layout, fusion) does not change what the interpreter computes."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from xdsl.context import Context

import ember
from ember.passes.graph.optimize import graph_passes

UNARY = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Softsign", "Erf"]
BINARY = ["Add", "Sub", "Mul", "Max", "Min"]
SHAPES = [(2, 3), (3, 4), (4,), (1, 3), (2, 3, 4), (1, 4, 5, 5)]


@st.composite
def random_graphs(draw: st.DrawFn):
    """A model of 1-6 nodes over two inputs; each node reads earlier values."""
    values: list[tuple[str, tuple[int, ...]]] = [("x", draw(st.sampled_from(SHAPES)))]
    values.append(("y", draw(st.sampled_from(SHAPES))))
    nodes = []
    for index in range(draw(st.integers(1, 6))):
        name, shape = values[draw(st.integers(0, len(values) - 1))]
        out = f"v{index}"
        kind = draw(
            st.sampled_from(["unary", "binary", "softmax", "reduce", "transpose", "matmul", "conv"])
        )
        if kind == "binary":
            partners = [v for v in values if _broadcastable(shape, v[1])]
            other = draw(st.sampled_from(partners))
            op = draw(st.sampled_from(BINARY))
            nodes.append(helper.make_node(op, [name, other[0]], [out]))
            shape = tuple(np.broadcast_shapes(shape, other[1]))
        elif kind == "softmax":
            nodes.append(helper.make_node("Softmax", [name], [out], axis=-1))
        elif kind == "reduce":
            keep = draw(st.booleans())
            axis = draw(st.integers(0, len(shape) - 1))
            nodes.append(
                helper.make_node("ReduceSum", [name, f"{out}_axes"], [out], keepdims=int(keep))
            )
            nodes.append(("axes", f"{out}_axes", axis))
            shape = tuple(1 if i == axis else d for i, d in enumerate(shape)) if keep else \
                tuple(d for i, d in enumerate(shape) if i != axis)  # fmt: skip
            if not shape:
                continue
        elif kind == "transpose" and len(shape) >= 2:
            perm = list(reversed(range(len(shape))))
            nodes.append(helper.make_node("Transpose", [name], [out], perm=perm))
            shape = tuple(shape[p] for p in perm)
        elif kind == "matmul" and len(shape) == 2:
            weight = f"{out}_w"
            nodes.append(helper.make_node("MatMul", [name, weight], [out]))
            nodes.append(("weight", weight, (shape[1], 5)))
            shape = (shape[0], 5)
        elif kind == "conv" and len(shape) == 4:
            kernel, filters = draw(st.sampled_from([1, 3])), draw(st.sampled_from([4, 8]))
            inputs = [name, f"{out}_w"] + ([f"{out}_b"] if draw(st.booleans()) else [])
            nodes.append(helper.make_node("Conv", inputs, [out], pads=[kernel // 2] * 4))
            nodes.append(("weight", f"{out}_w", (filters, shape[1], kernel, kernel)))
            if len(inputs) == 3:
                nodes.append(("weight", f"{out}_b", (filters,)))
            shape = (shape[0], filters, *shape[2:])
        else:
            nodes.append(helper.make_node(draw(st.sampled_from(UNARY)), [name], [out]))
        values.append((out, shape))
    return values, nodes


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _model(values, nodes):
    initializers, graph_nodes = [], []
    rng = np.random.default_rng(0)
    for node in nodes:
        if isinstance(node, tuple) and node[0] == "axes":
            initializers.append(helper.make_tensor(node[1], TensorProto.INT64, [1], [node[2]]))
        elif isinstance(node, tuple):
            data = rng.standard_normal(node[2]).astype(np.float32)
            initializers.append(
                helper.make_tensor(node[1], TensorProto.FLOAT, node[2], data.ravel())
            )
        else:
            graph_nodes.append(node)
    produced = {o for n in graph_nodes for o in n.output}
    outputs = [v for v in values if v[0] in produced] or values[:1]
    graph = helper.make_graph(
        graph_nodes, "random",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in values[:2]],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs[-2:]],
        initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(random_graphs())
def test_compiled_random_graph_matches_reference(graph) -> None:
    values, nodes = graph
    model = _model(values, nodes)
    rng = np.random.default_rng(1)
    inputs = {n: rng.standard_normal(s).astype(np.float32) for n, s in values[:2]}
    expected = ember.reference.run(ember.import_onnx(model), inputs)
    outputs = ember.compile(model).run(inputs)
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(random_graphs(), st.sampled_from(["NHWC", "NCHWc", "none"]))
def test_optimised_random_graph_means_the_same(graph, layout: str) -> None:
    values, nodes = graph
    model = _model(values, nodes)
    rng = np.random.default_rng(2)
    inputs = {n: rng.standard_normal(s).astype(np.float32) for n, s in values[:2]}
    module = ember.import_onnx(model)
    expected = ember.reference.run(module, inputs)
    for graph_pass in graph_passes(2, layout):
        graph_pass.apply(Context(), module)
    module.verify()
    for got, want in zip(ember.reference.run(module, inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
