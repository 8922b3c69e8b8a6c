"""Contractions through `ember.compile` with the host's default schedules
(vector micro-kernels where the CPU has vector registers and an fma), in
every convolution layout, against onnxruntime.

fma rounds once per term where onnxruntime's kernels may round twice or sum
in another order, so the comparison is relative to the output's magnitude,
not bit for bit.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import scf, vector

import ember
from ember.context import make_context
from ember.options import Options
from ember.passes.loop.generate import LoopGeneratePass
from ember.targets.cpu.pipeline import cpu_passes
from ember.targets.cpu.schedule.cpu_target import host_target
from tests.support.models import run_onnxruntime

RNG = np.random.default_rng(23)


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], output: str,
           weights: dict[str, np.ndarray]) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(
        nodes, "contraction",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weights(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _conv(channels: int, filters: int, kernel: int, stride: int, pad: int, size: int,
          relu: bool = False) -> tuple[onnx.ModelProto, dict[str, list[int]]]:  # fmt: skip
    """Conv (+ bias) (+ Relu) and a second 3x3 conv after it, so that
    graph-layout finds a layout change worth its conversions."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[kernel, kernel],
                              strides=[stride, stride], pads=[pad] * 4)]  # fmt: skip
    last = "y"
    if relu:
        nodes.append(helper.make_node("Relu", ["y"], ["r"]))
        last = "r"
    nodes.append(helper.make_node("Conv", [last, "w2"], ["out"], kernel_shape=[3, 3], pads=[1] * 4))
    weights = {"w": _weights(filters, channels, kernel, kernel), "b": _weights(filters),
               "w2": _weights(filters, filters, 3, 3)}  # fmt: skip
    inputs = {"x": [1, channels, size, size]}
    return _model(nodes, inputs, "out", weights), inputs


CONVS = {
    "3x3 stride 1 pad 1": _conv(8, 32, 3, 1, 1, 14),
    "3x3 stride 2 pad 1": _conv(8, 48, 3, 2, 1, 15),
    "1x1 stride 1": _conv(16, 64, 1, 1, 0, 7, relu=True),
    "1x1 stride 2": _conv(16, 32, 1, 2, 0, 9),
    "7x7 stride 2 pad 3": _conv(3, 16, 7, 2, 3, 20, relu=True),
    "wide rows": _conv(4, 16, 3, 1, 1, 37),
    # NCHW rows of 38, 34 and 35 output columns read at steps of 2 as vectors
    # (two loads and a shuffle), with a narrower or overlapping last block.
    "3x3 stride 2, wide rows": _conv(3, 24, 3, 2, 1, 75, relu=True),
    "5x5 stride 2 pad 2, wide rows": _conv(4, 20, 5, 2, 2, 67),
    "1x1 stride 2, wide rows": _conv(8, 16, 1, 2, 0, 70),
}


def _matmuls() -> dict[str, tuple[onnx.ModelProto, dict[str, list[int]]]]:
    models = {}
    inputs = {"a": [33, 100]}
    models["matmul, constant B"] = (_model([helper.make_node("MatMul", ["a", "b"], ["out"])],
                                           inputs, "out", {"b": _weights(100, 70)}), inputs)  # fmt: skip
    inputs = {"a": [2, 17, 9], "b": [2, 9, 40]}
    models["batched matmul"] = (_model([helper.make_node("MatMul", ["a", "b"], ["out"])],
                                       inputs, "out", {}), inputs)  # fmt: skip
    inputs = {"a": [7, 20]}
    gemm = helper.make_node("Gemm", ["a", "w", "c"], ["out"], transB=1, alpha=0.5, beta=2.0)
    models["gemm, transposed B"] = (_model([gemm], inputs, "out",
                                           {"w": _weights(50, 20), "c": _weights(50)}), inputs)  # fmt: skip
    # Classifiers whose columns are not whole vectors (1004: 4 past a multiple
    # of 8, 12 past one of 16): packed constant panels tiled by one block,
    # the last tile's vectors overlapping to end on the last column.
    for rows, columns in ((1, 1000), (1, 1004), (3, 1004)):
        inputs = {"a": [rows, 256]}
        gemm = helper.make_node("Gemm", ["a", "w", "c"], ["out"], transB=1)
        weights = {"w": _weights(columns, 256), "c": _weights(columns)}
        models[f"classifier, {rows}x{columns}"] = (_model([gemm], inputs, "out", weights), inputs)
    return models


def _check(model: onnx.ModelProto, inputs: dict[str, list[int]], **options: str) -> None:
    feeds = {name: RNG.standard_normal(shape).astype(np.float32) for name, shape in inputs.items()}
    (ours,) = ember.compile(model, threads=1, **options).run(feeds)  # type: ignore[arg-type]
    (theirs,) = run_onnxruntime(model, feeds)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


@pytest.mark.parametrize("layout", ["none", "NHWC", "NCHWc"])
@pytest.mark.parametrize("name", list(CONVS))
def test_a_convolution_matches_onnxruntime(name: str, layout: str) -> None:
    _check(*CONVS[name], layout=layout)


@pytest.mark.parametrize("name", list(_matmuls()))
def test_a_matmul_matches_onnxruntime(name: str) -> None:
    _check(*_matmuls()[name])


def test_the_host_pipeline_emits_vector_micro_kernels() -> None:
    """Where the host has vector registers and an fma, the CPU pipeline's
    default schedules run the matmul as vector code."""
    if not host_target().has_micro_kernels:
        pytest.skip("the host has no vector unit with an fma")
    model, _ = _matmuls()["matmul, constant B"]
    module = ember.import_onnx(model)
    for _, compiler_pass in cpu_passes():
        compiler_pass.apply(make_context(), module)
        if isinstance(compiler_pass, LoopGeneratePass):
            break
    ops = [op for op in module.walk()]
    assert any(isinstance(op, vector.FMAOp) for op in ops)
    assert any(isinstance(op, scf.ForOp) and op.results for op in ops)


def test_a_stride_2_nchw_convolution_reads_its_input_as_vectors() -> None:
    """In NCHW the input of a stride-2 convolution steps by 2 along the output
    column: its micro-kernels read it as pairs of vector loads and a shuffle."""
    if not host_target().has_micro_kernels:
        pytest.skip("the host has no vector unit with an fma")
    model, _ = CONVS["3x3 stride 2, wide rows"]
    module = ember.import_onnx(model)
    for _, compiler_pass in cpu_passes(Options(layout="none")):
        compiler_pass.apply(make_context(), module)
        if isinstance(compiler_pass, LoopGeneratePass):
            break
    shuffles = [op for op in module.walk() if isinstance(op, vector.ShuffleOp)]
    assert shuffles and all(op.v1.owner.name == "vector.load" for op in shuffles)
