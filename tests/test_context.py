"""Ember's context and `ember-opt` know every op of xDSL's `tensor` and
`linalg` dialects (the tensor level is made of them), and none of Ember's
dialects takes the name of an xDSL dialect."""

from __future__ import annotations

import pytest
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.tensor import Tensor
from xdsl.ir import Dialect
from xdsl.xdsl_opt_main import xDSLOptMain

from ember.context import make_context
from ember.opt import EmberOptMain, ember_dialects


@pytest.mark.parametrize("dialect", [Tensor, Linalg], ids=lambda d: d.name)
def test_every_upstream_op_is_registered(dialect: Dialect) -> None:
    ctx = make_context()
    for op_class in dialect.operations:
        assert ctx.get_optional_op(op_class.name) is op_class, op_class.name


@pytest.mark.parametrize("dialect", [Tensor, Linalg], ids=lambda d: d.name)
def test_ember_opt_registers_the_upstream_dialect_itself(dialect: Dialect) -> None:
    tool = EmberOptMain(args=[])
    for op_class in dialect.operations:
        assert tool.ctx.get_optional_op(op_class.name) is op_class, op_class.name


def test_no_ember_dialect_shadows_an_xdsl_dialect() -> None:
    upstream = set(xDSLOptMain(args=[]).ctx.registered_dialect_names)
    assert upstream & set(ember_dialects()) == set()
