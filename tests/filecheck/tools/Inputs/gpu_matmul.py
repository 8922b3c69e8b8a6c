"""Writes the matmul example of docs/gpu.md to the path given: one MatMul,
128x64 by a 64x96 constant; seeded weights."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((64, 96)).astype(np.float32), "w")
graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [128, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [128, 96])], [w])  # fmt: skip
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
