"""Epilogues in registers (`loop-fuse-epilogues`, `ember.passes.loop.epilogue`)
through `ember.compile`: a contraction followed by a bias, an activation and
a residual add gives bit for bit what the unfused pipeline gives (the same
float ops in the same order per element), and matches onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.context import make_context
from ember.passes.loop.epilogue import EPILOGUE_ATTR
from ember.passes.loop.fuse_epilogues import FuseEpiloguesPass
from ember.targets.cpu.pipeline import cpu_passes
from ember.targets.cpu.schedule.cpu_target import host_target
from tests.support.models import run_onnxruntime

RNG = np.random.default_rng(7)


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]],
           weights: dict[str, np.ndarray]) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(
        nodes, "epilogue",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weights(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _conv(kernel: int, pad: int, tail: list[onnx.NodeProto], size: int = 20) -> onnx.ModelProto:
    """Conv with a bias (16 channels, so the residual input `x` has the
    output's shape) and then `tail`, which reads `y` and writes `out`."""
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[kernel, kernel],
                            pads=[pad] * 4)  # fmt: skip
    weights = {"w": _weights(16, 16, kernel, kernel), "b": _weights(16)}
    return _model([conv, *tail], {"x": [1, 16, size, size]}, weights)


def _relu(source: str, target: str = "out") -> onnx.NodeProto:
    return helper.make_node("Relu", [source], [target])


MODELS = {
    "conv + bias + relu": _conv(3, 1, [_relu("y")]),
    "conv + bias + residual add + relu": _conv(
        3, 1, [helper.make_node("Add", ["y", "x"], ["s"]), _relu("s")]
    ),
    "1x1 conv + bias + clip": _conv(
        1, 0, [helper.make_node("Clip", ["y", "low", "high"], ["out"])], size=24
    ),
    # The grouped convolution's bias is a view (split into groups) that the
    # blocks read once it moves before them; Relu runs on the output
    # reshaped back to NCHW, a loop of its own.
    "grouped 1x1 conv + bias + relu": _model(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[1, 1], group=4),
            _relu("y"),
        ],
        {"x": [1, 32, 14, 14]},
        {"w": _weights(32, 8, 1, 1), "b": _weights(32)},
    ),  # fmt: skip
    "matmul + bias + relu": _model(
        [
            helper.make_node("MatMul", ["a", "b"], ["y"]),
            helper.make_node("Add", ["y", "c"], ["z"]),
            _relu("z"),
        ],
        {"a": [10, 64]},
        {"b": _weights(64, 48), "c": _weights(48)},
    ),  # fmt: skip
    "matmul + scale - shift": _model(
        [
            helper.make_node("MatMul", ["a", "b"], ["y"]),
            helper.make_node("Mul", ["y", "c"], ["z"]),
            helper.make_node("Sub", ["z", "d"], ["out"]),
        ],
        {"a": [7, 32]},
        {"b": _weights(32, 40), "c": _weights(40), "d": _weights(7, 40)},
    ),  # fmt: skip
}
MODELS["1x1 conv + bias + clip"].graph.initializer.extend(
    [
        numpy_helper.from_array(np.float32(-0.5), "low"),
        numpy_helper.from_array(np.float32(1.0), "high"),
    ]
)


def _feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    weights = {w.name for w in model.graph.initializer}
    return {
        i.name: RNG.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            np.float32
        )
        for i in model.graph.input
        if i.name not in weights
    }


def _marks(model: onnx.ModelProto, layout: str) -> list[int]:
    """The `loop.epilogue` of each contraction after `loop-fuse-epilogues`."""
    module = ember.import_onnx(model)
    for _, compiler_pass in cpu_passes(ember.options.Options(layout=layout)):
        compiler_pass.apply(make_context(), module)
        if isinstance(compiler_pass, FuseEpiloguesPass):
            break
    return [op.attributes[EPILOGUE_ATTR].value.data  # type: ignore[attr-defined]
            for op in module.walk() if EPILOGUE_ATTR in op.attributes]  # fmt: skip


@pytest.mark.parametrize("layout", ["none", "NHWC"])
@pytest.mark.parametrize("name", list(MODELS))
def test_an_epilogue_in_registers_is_bit_identical_to_the_unfused_code(
    name: str, layout: str
) -> None:
    model = MODELS[name]
    feeds = _feeds(model)
    (fused,) = ember.compile(model, threads=1, layout=layout).run(feeds)
    (unfused,) = ember.compile(model, threads=1, layout=layout,
                               disabled=("loop-fuse-epilogues",)).run(feeds)  # fmt: skip
    (theirs,) = run_onnxruntime(model, feeds)
    np.testing.assert_array_equal(fused, unfused)
    np.testing.assert_allclose(fused, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


FUSED = {"conv + bias + relu": 2, "conv + bias + residual add + relu": 3,
         "1x1 conv + bias + clip": 1, "grouped 1x1 conv + bias + relu": 1,
         "matmul + bias + relu": 2, "matmul + scale - shift": 2}  # fmt: skip
"""How many generics each model's contraction applies in its blocks: every
op after it (a Conv's bias is a generic of its own), but Clip (a compare and
a select, which have no vector form here)."""


@pytest.mark.parametrize("name", list(MODELS))
def test_the_host_pipeline_fuses_the_epilogue(name: str) -> None:
    if not host_target().has_micro_kernels:
        pytest.skip("the host has no vector unit with an fma")
    assert _marks(MODELS[name], "none") == [FUSED[name]]
