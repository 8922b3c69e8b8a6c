"""graph-fuse's grouping: the linear-time `grow` finds exactly the groups of
its definition (add the earliest joinable user, keep the longest closed
prefix), checked against that definition written out the slow way on
random graphs, and `max-group-ops` caps groups without breaking the rules."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from xdsl.context import Context
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation

import ember
from ember.dialects.graph import FusedOp
from ember.passes.graph.fuse import FusePass, _may_join, anchor_kind, form_groups
from ember.reference import entry_function

SHAPE = [2, 3]
KINDS = ["Sin", "Relu", "Add", "Mul", "Softmax", "MatMul", "Flatten"]
"""Elementwise (unary, binary), a reduction, a contraction and an op that
never joins a group, all keeping the shape."""


def _chain_model(nodes: list[onnx.NodeProto], outputs: list[str]) -> onnx.ModelProto:
    weight = helper.make_tensor("w", TensorProto.FLOAT, [3, 3], np.eye(3).ravel().tolist())
    graph = helper.make_graph(
        nodes, "groups", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, SHAPE) for o in outputs], [weight],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@st.composite
def random_dags(draw: st.DrawFn) -> onnx.ModelProto:
    """Up to 40 nodes, each reading one or two earlier values; some values are
    also graph outputs (uses that no group can take)."""
    values, nodes = ["x"], []
    for index in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(KINDS))
        operand = draw(st.sampled_from(values[-6:]))  # mostly recent values: long chains
        out = f"v{index}"
        if kind in ("Add", "Mul"):
            inputs = [operand, draw(st.sampled_from(values))]
        elif kind == "MatMul":
            inputs = [operand, "w"]
        else:
            inputs = [operand]
        attributes = {"axis": 1} if kind in ("Softmax", "Flatten") else {}
        nodes.append(helper.make_node(kind, inputs, [out], **attributes))
        values.append(out)
    extra = draw(st.lists(st.sampled_from(values[1:]), max_size=3, unique=True))
    outputs = list(dict.fromkeys([values[-1], *extra]))
    return _chain_model(nodes, outputs)


def reference_grow(anchor: Operation, taken: set[Operation], position: dict[Operation, int],
                   max_ops: int) -> list[Operation]:  # fmt: skip
    """`grow` as defined, recomputing candidates and closedness at every step."""
    members, best = [anchor], [anchor]
    while len(members) < max_ops:
        users = {use.operation for m in members for use in m.results[0].uses}
        candidates = [u for u in users if u not in members and _may_join(u, anchor, taken)]
        if not candidates:
            break
        members.append(min(candidates, key=position.__getitem__))
        last = max(members, key=position.__getitem__)
        if all(use.operation in members for m in members if m is not last
               for use in m.results[0].uses):  # fmt: skip
            best = list(members)
    return sorted(best, key=position.__getitem__)


def reference_groups(block: Block, max_ops: int) -> list[list[Operation]]:
    position = {op: index for index, op in enumerate(block.ops)}
    groups, taken = [], set()
    for op in block.ops:
        kind = anchor_kind(op)
        if kind is None or op in taken:
            continue
        members = reference_grow(op, taken, position, max_ops)
        if len(members) > 1 or kind != "elementwise":
            groups.append(members)
            taken.update(members)
    return groups


def _block(model: onnx.ModelProto) -> Block:
    return entry_function(ember.import_onnx(model)).body.block


SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@SETTINGS
@given(random_dags(), st.sampled_from([1, 2, 3, 5, 256]))
def test_groups_match_the_definition(model: onnx.ModelProto, max_ops: int) -> None:
    block = _block(model)
    groups = [group.members for group in form_groups(block, max_ops)]
    assert groups == reference_groups(block, max_ops)
    position = {op: index for index, op in enumerate(block.ops)}
    for members in groups:
        assert len(members) <= max_ops
        assert members == sorted(members, key=position.__getitem__)
        inside = set(members)
        assert all(use.operation in inside for m in members[:-1] for use in m.results[0].uses)


def _sin_chain(length: int) -> onnx.ModelProto:
    nodes = [helper.make_node("Sin", [f"v{i}"], [f"v{i + 1}"]) for i in range(length)]
    nodes[0].input[0], nodes[-1].output[0] = "x", "y"
    return _chain_model(nodes, ["y"])


def test_a_long_chain_is_split_at_the_cap() -> None:
    module = ember.import_onnx(_sin_chain(10))
    FusePass(max_group_ops=4).apply(Context(), module)
    func = entry_function(module)
    assert isinstance(func, FuncOp)
    fused = [op for op in func.body.block.ops if isinstance(op, FusedOp)]
    assert [len(list(op.block.ops)) - 1 for op in fused] == [4, 4, 2]


def test_a_chain_longer_than_the_default_cap_compiles_to_the_same_values() -> None:
    """600 elementwise ops: three groups at -O2, each one merged loop."""
    model = _sin_chain(600)
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    (expected,) = ember.reference.run(ember.import_onnx(model), {"x": x})
    (got,) = ember.compile(model).run({"x": x})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
