"""Writes a small ONNX model with If, Loop and Scan to the path it is given
(for import-control-flow.test)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


def info(name: str, elem: int, shape: list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


then_graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["then_y"])], "then", [], [info("then_y", F32, None)]
)
else_graph = helper.make_graph(
    [helper.make_node("Concat", ["x", "x"], ["else_y"], axis=0)],
    "else",
    [],
    [info("else_y", F32, None)],
)
loop_body = helper.make_graph(
    [
        helper.make_node("Add", ["acc_in", "w"], ["acc_out"]),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
    ],
    "loop_body",
    [
        info("i", TensorProto.INT64, []),
        info("cond_in", TensorProto.BOOL, []),
        info("acc_in", F32, [3]),
    ],
    [info("cond_out", TensorProto.BOOL, []), info("acc_out", F32, [3])],
)
scan_body = helper.make_graph(
    [
        helper.make_node("Add", ["sum_in", "row"], ["sum_out"]),
        helper.make_node("Identity", ["sum_out"], ["row_out"]),
    ],
    "scan_body",
    [info("sum_in", F32, [3]), info("row", F32, [3])],
    [info("sum_out", F32, [3]), info("row_out", F32, [3])],
)
nodes = [
    helper.make_node("If", ["cond"], ["y"], then_branch=then_graph, else_branch=else_graph),
    helper.make_node("Loop", ["M", "", "x"], ["acc"], body=loop_body),
    helper.make_node(
        "Scan",
        ["x", "rows"],
        ["total", "partial"],
        body=scan_body,
        num_scan_inputs=1,
        scan_input_directions=[1],
    ),
]
graph = helper.make_graph(
    nodes,
    "control_flow",
    [
        info("cond", TensorProto.BOOL, []),
        info("M", TensorProto.INT64, []),
        info("x", F32, [3]),
        info("rows", F32, [4, 3]),
    ],
    [
        info("y", F32, None),
        info("acc", F32, None),
        info("total", F32, None),
        info("partial", F32, None),
    ],
    [numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "w")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
model.ir_version = 10
onnx.save(model, sys.argv[1])
