"""The `graph` dialect: ONNX-level operators on value tensors.

Ops follow ONNX opset-21 semantics (the importer upgrades older opsets).
Each op is declared by an `OpSpec` row in one of the family modules:

- `ops_elementwise`: unary, binary, variadic, Where, Cast, Clip, Dropout
- `ops_nn`: Conv, pooling, normalisation, Gemm/MatMul, Softmax, Flatten
- `ops_tensor`: Constant, shape ops, Reshape, Slice, Gather, Pad, Concat, Split
- `ops_reduce`: ReduceX and ArgMax/ArgMin
- `ops_layout`: Ember's own layout ops (domain `ember`, not importable from
  ONNX): LayoutTransform and Conv/MaxPool/AveragePool in NCHWc and NHWC

`fused` adds the structural `graph.fused` (a group of ops that becomes one
kernel) and its terminator `graph.yield`.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from ember.dialects.graph import ops_elementwise, ops_layout, ops_nn, ops_reduce, ops_tensor
from ember.dialects.graph.base import GraphOp, define_ops
from ember.dialects.graph.fused import FusedOp, YieldOp
from ember.dialects.graph.ops_tensor import ConstantOp, constant_value_of
from ember.dialects.graph.spec import ONNX_DOMAIN, OpSpec

ALL_SPECS: list[OpSpec] = [
    *ops_elementwise.SPECS,
    *ops_nn.SPECS,
    *ops_tensor.SPECS,
    *ops_reduce.SPECS,
    *ops_layout.SPECS,
]

OPS: list[type[GraphOp]] = [ConstantOp, *define_ops(ALL_SPECS)]

OPS_BY_TYPE: dict[str, type[GraphOp]] = {op.SPEC.onnx_type: op for op in OPS}
"""The op class for each op type, Ember's own included."""

OPS_BY_ONNX_TYPE: dict[str, type[GraphOp]] = {
    name: op for name, op in OPS_BY_TYPE.items() if op.SPEC.domain == ONNX_DOMAIN
}
"""The op class for each supported ONNX op type (what the importer may create)."""

Graph = Dialect("graph", [*OPS, FusedOp, YieldOp], [])

__all__ = ["ALL_SPECS", "OPS", "OPS_BY_ONNX_TYPE", "ConstantOp", "FusedOp", "Graph", "GraphOp",
           "OPS_BY_TYPE", "YieldOp", "constant_value_of"]  # fmt: skip
