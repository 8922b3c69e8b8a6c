"""Models that are large in one direction (a chain thousands of ops deep, a
Concat of hundreds of branches, a fused fan with hundreds of values live at
once) compile at every level to the values of the reference interpreter,
and the deep chain becomes a handful of shared kernels, not one huge one or
thousands. (How compile time scales: benchmarks/compile_time.py.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from xdsl.dialects.func import FuncOp

import ember
from benchmarks.compile_time import chain, fan, wide
from ember.compiler import Options
from ember.fusion_report import count_kernel_calls
from ember.passes.graph.fuse import MAX_GROUP_OPS
from ember.passes.loop.outline_kernels import KERNEL_ATTR


def _matches_reference(model: onnx.ModelProto, level: int) -> None:
    x = np.random.default_rng(0).standard_normal([64]).astype(np.float32)
    (expected,) = ember.reference.run(ember.import_onnx(model), {"x": x})
    (got,) = ember.compile(model, opt_level=level).run({"x": x})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "level", [pytest.param(0, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]
)
def test_a_deep_chain_compiles(level: int) -> None:
    _matches_reference(chain(2000), level)


def test_a_deep_chain_is_a_few_capped_groups_sharing_one_kernel() -> None:
    module = ember.import_onnx(chain(2000))
    calls = count_kernel_calls(module, Options(opt_level=2))
    assert calls == -(-2000 // MAX_GROUP_OPS)
    kernels = [op for op in module.ops if isinstance(op, FuncOp) and KERNEL_ATTR in op.attributes]
    assert len(kernels) == 2  # one shared by the full groups, one for the rest


@pytest.mark.slow
def test_a_wide_concat_compiles() -> None:
    _matches_reference(wide(400), 2)


@pytest.mark.slow
def test_a_wide_fused_fan_compiles() -> None:
    _matches_reference(fan(1200), 2)
