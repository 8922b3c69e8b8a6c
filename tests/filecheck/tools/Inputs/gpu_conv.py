"""Writes the convolution example of docs/gpu.md to the path given: one
Conv (1x8x10x10 input, 32 3x3 filters, pads 1) with its bias, then Relu;
seeded weights."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
           for name, shape in (("w", (32, 8, 3, 3)), ("b", (32,)))]  # fmt: skip
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"])]  # fmt: skip
graph = helper.make_graph(nodes, "conv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 10, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 10, 10])],
                          weights)  # fmt: skip
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
