"""The `graph` op table agrees with ONNX's opset-21 schemas and the kernels."""

from __future__ import annotations

import onnx
import pytest

from ember.dialects.graph import OPS
from ember.dialects.graph.spec import Arity
from ember.reference.kernels import KERNELS, schema_defaults

# Inputs/outputs that Ember deliberately does not model (inference only).
NOT_MODELLED_INPUTS = {"Dropout": {"ratio", "training_mode"}}


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_spec_matches_onnx_schema(op) -> None:
    spec = op.SPEC
    schema = onnx.defs.get_schema(spec.onnx_type, 21)
    inputs = [
        i.name for i in schema.inputs if i.name not in NOT_MODELLED_INPUTS.get(spec.onnx_type, ())
    ]
    assert [o.name for o in spec.operands] == inputs
    assert [r.name for r in spec.results] == [o.name for o in schema.outputs][: len(spec.results)]
    for operand, formal in zip(spec.operands, schema.inputs):
        expected = {
            onnx.defs.OpSchema.FormalParameterOption.Single: Arity.SINGLE,
            onnx.defs.OpSchema.FormalParameterOption.Optional: Arity.OPTIONAL,
            onnx.defs.OpSchema.FormalParameterOption.Variadic: Arity.VARIADIC,
        }[formal.option]
        assert operand.arity is expected, operand.name
    defaults = schema_defaults(spec.onnx_type)
    for attr in spec.attributes:
        assert attr.name in schema.attributes, attr.name
        if attr.name in defaults and attr.kind.value != "tensor":
            assert attr.default == pytest.approx(defaults[attr.name]), attr.name
        if attr.required:
            assert attr.default is None


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_op_has_a_reference_kernel(op) -> None:
    assert op.SPEC.onnx_type in KERNELS
