"""The `graph` op table agrees with ONNX's opset-21 schemas (the newest for the
ops that came later, and for the ops of ONNX's other domains, `ai.onnx.ml` and
`ai.onnx.preview.training`; onnxruntime's for
its contrib ops, domain `com.microsoft`) and the kernels. Ember's own ops
(domain `ember`) have no schema; neither they nor the contrib ops Ember's
passes form may be imported from ONNX."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

import ember
from ember.dialects.graph import IMPORTABLE_OPS, OPS, OPS_BY_ONNX_TYPE
from ember.dialects.graph.spec import (
    EMBER_DOMAIN,
    IMPORTED_DOMAINS,
    ONNX_DOMAIN,
    ORT_DOMAIN,
    Arity,
    OpSpec,
)
from ember.errors import UnsupportedModelError
from ember.reference.kernels import KERNELS, onnx_schema, schema_defaults

# Inputs that Ember deliberately does not model.
NOT_MODELLED_INPUTS: dict[str, set[str]] = {}


ONNX_OPS = [op for op in OPS if op.SPEC.domain == ONNX_DOMAIN]
EMBER_OPS = [op for op in OPS if op.SPEC.domain == EMBER_DOMAIN]
ORT_OPS = [op for op in OPS if op.SPEC.domain == ORT_DOMAIN]
DOMAIN_OPS = [op for op in OPS if op.SPEC.domain in IMPORTED_DOMAINS]
"""The ops of ONNX's domains besides ai.onnx (ai.onnx.ml, ai.onnx.preview.training)."""


def test_every_op_has_a_known_domain() -> None:
    assert len(ONNX_OPS) + len(DOMAIN_OPS) + len(EMBER_OPS) + len(ORT_OPS) == len(OPS)


def test_importable_ops_are_keyed_by_domain_and_type() -> None:
    assert set(IMPORTABLE_OPS.values()) == set(ONNX_OPS + DOMAIN_OPS)
    assert all(key == (op.SPEC.domain, op.SPEC.onnx_type) for key, op in IMPORTABLE_OPS.items())
    assert {d for d, _ in IMPORTABLE_OPS} == {ONNX_DOMAIN, *IMPORTED_DOMAINS}


def _schema(spec: OpSpec):  # noqa: ANN202 (onnx's or onnxruntime's schema class)
    if spec.domain == ORT_DOMAIN:
        from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema

        return next(s for s in get_all_operator_schema()
                    if s.name == spec.onnx_type and s.domain == ORT_DOMAIN)  # fmt: skip
    return onnx_schema(spec.onnx_type, domain="" if spec.domain == ONNX_DOMAIN else spec.domain)


@pytest.mark.parametrize("op", ONNX_OPS + DOMAIN_OPS + ORT_OPS, ids=lambda op: op.name)
def test_spec_matches_onnx_schema(op) -> None:
    spec = op.SPEC
    schema = _schema(spec)
    inputs = [
        i.name for i in schema.inputs if i.name not in NOT_MODELLED_INPUTS.get(spec.onnx_type, ())
    ]
    assert [o.name for o in spec.operands] == inputs
    assert [r.name for r in spec.results] == [o.name for o in schema.outputs][: len(spec.results)]
    for operand, formal in zip(spec.operands, schema.inputs):
        expected = {"Single": Arity.SINGLE, "Optional": Arity.OPTIONAL,
                    "Variadic": Arity.VARIADIC}[formal.option.name]  # fmt: skip
        assert operand.arity is expected, operand.name
    defaults = {} if spec.domain == ORT_DOMAIN else schema_defaults(spec.onnx_type, domain=(
        "" if spec.domain == ONNX_DOMAIN else spec.domain))  # fmt: skip
    newest = onnx_schema(spec.onnx_type, 10**4) if spec.domain == ONNX_DOMAIN else _schema(spec)
    for attr in spec.attributes:
        # An attribute a later opset added (SpaceToDepth's mode) is in the newest schema.
        assert attr.name in schema.attributes or attr.name in newest.attributes, attr.name
        if attr.name in defaults and attr.kind.value != "tensor":
            assert attr.default == pytest.approx(defaults[attr.name]), attr.name
        if attr.required:
            assert attr.default is None


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_op_has_a_reference_kernel(op) -> None:
    assert op.SPEC.onnx_type in KERNELS


@pytest.mark.parametrize("op", EMBER_OPS + ORT_OPS, ids=lambda op: op.name)
def test_ember_ops_are_not_importable(op) -> None:
    assert op not in OPS_BY_ONNX_TYPE.values()
    node = helper.make_node(op.SPEC.onnx_type, ["x"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(UnsupportedModelError, match=f"unsupported ops: {op.SPEC.onnx_type} "):
        ember.import_onnx(model)
