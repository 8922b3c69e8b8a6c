"""Writes a small MLP to the path given: MatMul + bias Add + Relu, MatMul
(4 x 20 -> 24 -> 8), seeded weights; every op runs on the NPU."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
           for name, shape in (("w1", (20, 24)), ("b1", (24,)), ("w2", (24, 8)))]  # fmt: skip
nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["a"]),
         helper.make_node("Relu", ["a"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])]  # fmt: skip
graph = helper.make_graph(nodes, "two_layers",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 20])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], weights)  # fmt: skip
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
