"""Writes a small ONNX model with a symbolic batch to the path given:
y[N, 3] = relu(a[N, 3] + b[N, 3])."""

import sys

from onnx import TensorProto, helper

graph = helper.make_graph(
    [helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Relu", ["sum"], ["y"])],
    "symbolic_add",
    [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", 3]) for name in ("a", "b")],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(sys.argv[1], "wb") as out:
    out.write(model.SerializeToString())
