"""Light CNNs compiled for the NPU at their full input size (random weights;
logits, before Softmax squashes an error), against onnxruntime and the
reference interpreter: slow (ResNet-50's program runs about 15 s in the
simulator)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import ember
from ember.targets.npu.compile import DeviceStep
from tests.support.models import (
    light_model_path,
    random_inputs,
    run_onnxruntime,
    with_logits,
    with_random_weights,
)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["squeezenet", "resnet50"])
def test_light_cnn_on_the_npu(name: str) -> None:
    """Every convolution, the Gemm, the pools, concatenations and residual
    sums on the NPU; only the classifier's reshapes and Softmax on the host."""
    model, _ = with_logits(with_random_weights(onnx.load(light_model_path(name)), seed=7))
    inputs = random_inputs(model, seed=8)
    compiled = ember.compile(model, target="npu")
    layers = [layer.ops.split()[0] for segment in compiled.report.segments
              for layer in segment.layers]  # fmt: skip
    on_the_npu = ("Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "Sum")
    assert len(layers) == sum(n.op_type in on_the_npu for n in model.graph.node)
    assert set(compiled.report.host_ops) <= {"graph.flatten", "graph.reshape", "graph.softmax"}
    assert any(isinstance(s, DeviceStep) for s in compiled.steps)
    got = compiled.run(inputs)[-1]
    want = run_onnxruntime(model, inputs)[-1]
    reference = ember.reference.run(ember.import_onnx(model), inputs)[-1]
    scale = float(np.abs(want).max())
    assert float(np.abs(got - want).max()) < 1e-4 * scale
    assert float(np.abs(got - reference).max()) < 1e-4 * scale
