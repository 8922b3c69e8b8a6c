"""graph-fuse and loop-fuse keep the meaning of real models, and fusion
reduces the kernels the compiled code runs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from xdsl.context import Context

import ember
from ember.compiler import Options
from ember.dialects.graph import ConstantOp, FusedOp, GraphOp
from ember.fusion_report import count_kernel_calls
from ember.passes.graph.fuse import anchor_kind
from ember.passes.graph.optimize import graph_passes
from tests.support.models import (
    LIGHT_MODELS,
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    transformer_encoder,
    with_random_weights,
)


def _models() -> dict[str, onnx.ModelProto]:
    models = {name: with_random_weights(onnx.load(light_model_path(name)), seed=5)
              for name in LIGHT_MODELS}  # fmt: skip
    models["mlp"] = mlp(batch=4)
    models["encoder"] = transformer_encoder(seq=16, hidden=64, heads=4, ffn=128)
    return models


MODELS = _models()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fused_graph_means_the_same(name: str) -> None:
    """After graph-optimize level 2 the reference interpreter (which runs fused
    regions) gives the unoptimised outputs, and no anchor is left unfused."""
    model = MODELS[name]
    inputs = random_inputs(model, seed=6)
    module = ember.import_onnx(model)
    before = ember.reference.run(module, inputs)
    for graph_pass in graph_passes(2):
        graph_pass.apply(Context(), module)
    module.verify()
    after = ember.reference.run(module, inputs)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    top_level = list(module.walk(region_first=False))
    assert any(isinstance(op, FusedOp) for op in top_level)
    for op in top_level:
        if (
            isinstance(op, GraphOp)
            and not isinstance(op, ConstantOp)
            and not isinstance(op.parent_op(), FusedOp)
        ):
            assert anchor_kind(op) in (None, "elementwise"), op.name


@pytest.mark.parametrize("name", ["squeezenet", "encoder", "mlp"])
def test_every_level_matches_onnxruntime(name: str) -> None:
    model = MODELS[name]
    inputs = random_inputs(model, seed=7)
    expected = run_onnxruntime(model, inputs)
    for level in (0, 1, 2):
        outputs = ember.compile(model, opt_level=level).run(inputs)
        for got, want in zip(outputs, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=f"-O{level}")


@pytest.mark.parametrize("name", ["resnet50", "encoder"])
def test_fusion_runs_fewer_kernels(name: str) -> None:
    module = ember.import_onnx(MODELS[name])
    unfused = count_kernel_calls(module.clone(), Options(opt_level=1))
    fused = count_kernel_calls(module.clone(), Options(opt_level=2))
    assert fused < unfused / 2, (fused, unfused)


def test_unknown_level_is_a_clear_error() -> None:
    with pytest.raises(ember.EmberError, match="level must be 0, 1 or 2"):
        ember.compile(MODELS["mlp"], opt_level=3)
