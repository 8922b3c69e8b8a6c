"""QDQ models from onnxruntime's `quantize_static` on the NPU: their
DequantizeLinear -> Conv/Gemm -> QuantizeLinear chains run as int8
matrix-unit work (`graph-fuse-qdq`, then the partition). The NPU computes
what the quantised products mean bit for bit (the reference interpreter on
the fused graph); onnxruntime and the reference on the QDQ graph compute
the products in float, so an accumulator near a rounding boundary may
requantise to the neighbouring value there, in an order of summation that
depends on the machine's vectors: a quantum or two of the output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from xdsl.context import Context

import ember
from ember.passes.graph.fuse_qdq import FuseQdqPass
from ember.targets.npu.compile import DeviceStep, NpuModel
from tests.compiler.test_npu import _cnn, op_of
from tests.support.models import (
    light_model_path,
    mlp,
    random_inputs,
    transformer_encoder,
    with_logits,
    with_random_weights,
)
from tests.support.quantized import quantized


def _fused_reference(model: onnx.ModelProto, inputs: list[np.ndarray]) -> list[np.ndarray]:
    module = ember.import_onnx(model)
    FuseQdqPass().apply(Context(), module)
    return ember.reference.run(module, inputs)


def _quantum(model: onnx.ModelProto, output: str) -> float:
    """The scale of the DequantizeLinear that gives `output`."""
    node = next(n for n in model.graph.node if n.output[0] == output)
    if node.op_type != "DequantizeLinear":  # Softmax and the like: its input's Q/DQ pair
        node = next(n for n in model.graph.node if n.output[0] == node.input[0])
    scale = next(t for t in model.graph.initializer if t.name == node.input[1])
    return float(numpy_helper.to_array(scale).max())


def _check(path: Path, equal_share: float, quanta: int = 2,
           logits_only: bool = False) -> tuple[NpuModel, list[str]]:  # fmt: skip
    """Runs the QDQ model at `path` on the NPU: equal to the fused graph's
    reference, within `quanta` of onnxruntime (op by op and with its fused
    int8 kernels) and of the reference on the QDQ graph, and equal to them in
    at least `equal_share` of the elements (with `logits_only`, the last
    output: a Softmax turns a quantum of a logit into many of a probability)."""
    model = onnx.load(path)
    inputs = random_inputs(model, seed=8)
    compiled = ember.compile(str(path), target="npu")
    got = compiled.run(inputs)
    feed = list(inputs.values())
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    peers = [ort.InferenceSession(str(path), options).run(None, inputs),
             ort.InferenceSession(str(path)).run(None, inputs),
             ember.reference.run(ember.import_onnx(model), feed)]  # fmt: skip
    names = [o.name for o in model.graph.output]
    for index, (name, exact) in enumerate(zip(names, _fused_reference(model, feed), strict=True)):
        np.testing.assert_array_equal(got[index], exact)
        if logits_only and index + 1 < len(names):
            continue
        quantum = _quantum(model, name)
        for peer in peers:
            assert float(np.abs(got[index] - peer[index]).max()) <= quanta * quantum * 1.001
            assert np.mean(got[index] == peer[index]) >= equal_share
    layers = [layer for segment in compiled.report.segments for layer in segment.layers]
    return compiled, [op_of(layer.ops) for layer in layers]


def test_a_qdq_cnn_runs_its_convolutions_in_int8(tmp_path: Path) -> None:
    """Padding (asymmetric, with the zero point), dilation, biases and the
    absorbed Relus; the max pool between them, on dequantised values, runs
    in float32 on the vector unit."""
    compiled, layers = _check(quantized(_cnn(batch=1), tmp_path, per_channel=False), 0.95)
    assert layers == ["graph.qlinear_conv"] * 3 + ["graph.max_pool", "graph.qlinear_conv"]
    assert "graph.conv" not in compiled.report.host_ops
    assert all(layer.shape.endswith("int8") for s in compiled.report.segments
               for layer in s.layers if op_of(layer.ops).startswith("graph.qlinear"))  # fmt: skip


def test_a_qdq_mlp_runs_its_gemms_in_int8(tmp_path: Path) -> None:
    """Transposed weights and int32 biases (QGemm); the logits and the
    Softmax after them compared."""
    model, _ = with_logits(mlp(batch=4, sizes=(32, 64, 10)))
    _, layers = _check(quantized(model, tmp_path, per_channel=False), 0.8)
    assert layers == ["graph.qgemm"] * 2


def test_per_channel_scales_requantise_row_by_row(tmp_path: Path) -> None:
    """A convolution's weight scale per output channel: each output row is
    stored after a `config_store` of its own multiplier."""
    compiled, layers = _check(quantized(_cnn(batch=1), tmp_path, per_channel=True), 0.95)
    assert layers.count("graph.qlinear_conv") == 4
    program = [i for step in compiled.steps if isinstance(step, DeviceStep)
               for i in step.kernel.program]  # fmt: skip
    scales = {i["scale"] for i in program if i.mnemonic == "config_store"}
    assert len(scales) > 12  # the first convolution's 12 channels at least


def test_per_channel_gemms_stay_on_the_host(tmp_path: Path) -> None:
    """A Gemm's output channels are columns, and a store writes whole
    accumulator rows: per-channel Gemms run on the CPU, as the CPU runs
    the QDQ model."""
    path = quantized(mlp(batch=4, sizes=(32, 64, 10)), tmp_path, per_channel=True)
    compiled = ember.compile(str(path), target="npu")
    assert compiled.report.segments == []
    assert compiled.report.host_ops.count("graph.qgemm") == 2  # expanded for the CPU
    x = random_inputs(onnx.load(path), seed=3)
    np.testing.assert_array_equal(compiled.run(x)[0], ember.compile(str(path)).run(x)[0])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["squeezenet", "resnet50"])
def test_light_cnn_in_int8_on_the_npu(tmp_path: Path, name: str) -> None:
    """Full size, random weights, BatchNormalization folded by onnxruntime's
    `quant_pre_process` as its documentation advises: every Conv and Gemm
    an int8 NPU layer; the pools and residual sums between them (on
    dequantised values) float32 layers of the vector unit.
    Through ResNet-50's 54 layers a flipped rounding early on moves logits
    by two quanta (measured on AVX-512), and by as much between
    onnxruntime's own op by op and fused runs (about 1 in 3 logits differ
    there too); the bound leaves a quantum for another machine's rounding."""
    model, _ = with_logits(with_random_weights(onnx.load(light_model_path(name)), seed=7))
    path = quantized(model, tmp_path, per_channel=False, preprocess=True)
    compiled, layers = _check(path, 0.5, quanta=3, logits_only=True)
    products = sum(n.op_type in ("Conv", "Gemm") for n in model.graph.node)
    quantised = [layer for layer in layers if layer.startswith("graph.q")]
    assert len(quantised) == products
    assert set(quantised) <= {"graph.qlinear_conv", "graph.qgemm"}


def test_a_qdq_encoder_runs_its_projections_in_int8(tmp_path: Path) -> None:
    """MatMuls by constant weights become int8 NPU products
    (QLinearMatMul, A's leading dims its rows); attention's MatMuls of two
    activations (batched: rank 4), LayerNorm and Softmax stay on the host."""
    model = transformer_encoder(seq=16, hidden=32, heads=2, ffn=64)
    # quantize_static names the scale of tensor T "T_scale": the LayerNorm
    # weights "ln1_scale" would be taken for the scale of its output "ln1"
    # (a model Ember rightly refuses), so they get other names.
    for tensor in model.graph.initializer:
        if tensor.name.endswith("_scale"):
            for node in model.graph.node:
                node.input[:] = [f"{tensor.name}_gamma" if name == tensor.name else name
                                 for name in node.input]  # fmt: skip
            tensor.name = f"{tensor.name}_gamma"
    compiled, layers = _check(quantized(model, tmp_path, per_channel=False), 0.5)
    assert layers.count("graph.qlinear_matmul") == 6  # Q, K, V, the output and the FFN's two
    assert compiled.report.host_ops.count("graph.matmul") == 2  # attention: QK^T and by V
