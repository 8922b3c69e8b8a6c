"""Optional outputs and training modes compiled end to end on the CPU: MaxPool's
Indices (also after a laid-out convolution, whose layout the MaxPool then
leaves) and BatchNormalization's running statistics in training mode, held
against onnxruntime; Dropout with training_mode given at run time, against
onnxruntime where it drops nothing and against the reference interpreter
(the same random masks) where it drops."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from tests.support.models import run_onnxruntime

F = TensorProto.FLOAT


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[str],
           initializers: list[np.ndarray] = (), opset: int = 15) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(
        nodes, "optional_outputs", inputs, [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(a, f"w{i}") for i, a in enumerate(initializers)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("layout", ["NCHWc", "NHWC"])
@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices_after_a_laid_out_conv(layout: str, storage_order: int) -> None:
    """Conv -> Relu -> Conv (laid out: two convolutions pay for the
    conversions) -> MaxPool (Y, Indices) -> MaxUnpool: the indices address the
    NCHW input, so the pool runs in NCHW, and MaxUnpool (whose default output
    shape is the 9 x 9 input's) puts each maximum back where it was."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Conv", ["r", "w1"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c2"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1], storage_order=storage_order),
        helper.make_node("MaxUnpool", ["y", "i"], ["u"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
    ]  # fmt: skip
    weights = [rng.standard_normal(s).astype(np.float32) for s in ((32, 8, 3, 3), (32, 32, 3, 3))]
    x_info = helper.make_tensor_value_info("x", F, [2, 8, 9, 9])
    model = _model(nodes, [x_info], ["y", "i", "u"], weights)
    x = rng.standard_normal((2, 8, 9, 9)).astype(np.float32)
    y, i, u = ember.compile(model, layout=layout)(x)
    want_y, want_i, want_u = run_onnxruntime(model, {"x": x})
    np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(i, want_i)
    if storage_order == 0:  # MaxUnpool reads row-major indices
        np.testing.assert_allclose(u, want_u, rtol=1e-4, atol=1e-3)


def test_max_pool_indices_on_a_symbolic_batch() -> None:
    """One compiled model for every batch size: each sample's indices count
    its planes from (n * C + c) times the plane size."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2],
                            storage_order=1)  # fmt: skip
    model = _model([node], [helper.make_tensor_value_info("x", F, ["N", 3, 6, 6])], ["y", "i"])
    compiled = ember.compile(model)
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 6, 6)).astype(np.float32)
        for got, want in zip(compiled.run({"x": x}), run_onnxruntime(model, {"x": x}), strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_batch_normalization_training_mode(dtype: type) -> None:
    """Y normalised with the batch's statistics, and the running statistics
    (opset 15); f16 computes in f32 (graph-widen-accumulators) and is held
    against the f32 result within f16's rounding of the outputs."""
    rng = np.random.default_rng(1)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                            training_mode=1, momentum=0.8, epsilon=1e-3)  # fmt: skip
    names = ["x", "s", "b", "m", "v"]
    shapes = [[2, 4, 5, 3], [4], [4], [4], [4]]
    inputs = [helper.make_tensor_value_info(n, elem, s) for n, s in zip(names, shapes)]
    model = _model([node], inputs, ["y", "rm", "rv"])
    values = [rng.standard_normal(s) * 2 + 1 for s in shapes[:4]] + [rng.uniform(0.5, 2, 4)]
    feeds = {n: v.astype(np.float32) for n, v in zip(names, values)}
    f32_model = _model([node], [helper.make_tensor_value_info(n, F, s)
                                for n, s in zip(names, shapes)], ["y", "rm", "rv"])  # fmt: skip
    expected = run_onnxruntime(f32_model, feeds)
    got = ember.compile(model).run({n: v.astype(dtype) for n, v in feeds.items()})
    # f16 inputs round once (relative 2^-11), the outputs once more
    tol = 1e-5 if dtype == np.float32 else 4e-3
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == dtype
        np.testing.assert_allclose(g.astype(np.float32), e, rtol=tol, atol=tol)


def _dropout_model() -> onnx.ModelProto:
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], seed=11)
    inputs = [helper.make_tensor_value_info("x", F, [4, 6, 5]),
              helper.make_tensor_value_info("r", F, []),
              helper.make_tensor_value_info("t", TensorProto.BOOL, [])]  # fmt: skip
    return _model([node], inputs, ["y", "mask"], opset=13)


@pytest.mark.parametrize(("ratio", "training"), [(0.5, False), (0.0, True)])
def test_dropout_training_mode_at_run_time_deterministic(ratio: float, training: bool) -> None:
    """No element dropped (not training, or a ratio of 0): as onnxruntime."""
    model = _dropout_model()
    x = np.random.default_rng(2).standard_normal((4, 6, 5)).astype(np.float32)
    feeds = {"x": x, "r": np.array(ratio, np.float32), "t": np.array(training)}
    y, mask = ember.compile(model).run(feeds)
    want_y, want_mask = run_onnxruntime(model, feeds)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(mask, want_mask)


def test_dropout_training_mode_at_run_time_drops() -> None:
    """Training with a ratio: the compiled code draws the reference's masks
    (SplitMix64 from the seed, bit for bit), and one compiled model follows
    training_mode and ratio from run to run."""
    model = _dropout_model()
    compiled = ember.compile(model)
    x = np.random.default_rng(3).standard_normal((4, 6, 5)).astype(np.float32)
    module = ember.import_onnx(model)
    for ratio, training in ((0.4, True), (0.4, False), (0.9, True)):
        feeds = {"x": x, "r": np.array(ratio, np.float32), "t": np.array(training)}
        y, mask = compiled.run(feeds)
        want_y, want_mask = ember.reference.run(module, feeds)
        np.testing.assert_array_equal(mask, want_mask)
        np.testing.assert_array_equal(y, want_y)
        assert mask.all() != training
