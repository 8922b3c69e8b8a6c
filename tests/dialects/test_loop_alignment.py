"""The arena and the weights blob start at a multiple of `ALIGNMENT`: their
buffers' offsets are aligned relative to the base, so the base must be too."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.dialects.loop import ALIGNMENT, aligned_zeros


def test_aligned_zeros_whatever_numpy_returns() -> None:
    # Allocations of many sizes land at many addresses modulo 64.
    for nbytes in [1, 3, 64, 65, 4096, 10_000, 1 << 20]:
        for _ in range(4):
            array = aligned_zeros(nbytes)
            assert array.nbytes == nbytes and array.dtype == np.uint8
            assert array.ctypes.data % ALIGNMENT == 0
            assert not array.any()


def test_compiled_model_buffers_are_aligned() -> None:
    weight = numpy_helper.from_array(np.ones((8, 8), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = ember.compile(onnx.ModelProto.FromString(model.SerializeToString()), opt_level=0)
    assert compiled._arena.ctypes.data % ALIGNMENT == 0
    assert compiled._weights.ctypes.data % ALIGNMENT == 0
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 16
    np.testing.assert_array_equal(compiled(x)[0], np.maximum(x @ np.ones((8, 8), np.float32), 0))
