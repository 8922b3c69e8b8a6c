"""Ember as an ONNX backend (`onnx.backend.base.Backend`), so ONNX's own
conformance tests run against it unchanged:

    import ember.onnx_backend as backend
    outputs = backend.run_model(model_proto, [x])

`prepare` compiles for the CPU; `run_node` wraps one node in a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, namedtupledict

import ember
from ember.frontends.onnx.upgrade import MAX_OPSET


class EmberRep(BackendRep):
    """A compiled model; `run` takes inputs in order (or by name in a dict)."""

    def __init__(self, compiled: ember.CompiledModel):
        self.compiled = compiled

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, dict):
            outputs = self.compiled.run(inputs)
        else:
            arrays = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            outputs = self.compiled(*arrays)
        return namedtupledict("Outputs", [s.name for s in self.compiled.outputs])(*outputs)


class EmberBackend(Backend):
    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return device == "CPU"

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> EmberRep:
        if not cls.supports_device(device):
            raise ember.EmberError(f"Ember's ONNX backend runs on CPU, not {device}")
        return EmberRep(ember.compile(model, input_shapes=kwargs.get("input_shapes")))

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Sequence[np.ndarray],
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[np.ndarray, ...]:
        names = [n for n in node.input if n]
        graph_inputs = [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in zip(names, inputs)
        ]
        graph_outputs = [helper.make_empty_tensor_value_info(n) for n in node.output if n]
        graph = helper.make_graph([node], "node", graph_inputs, graph_outputs)
        opset = kwargs.get("opset_version", MAX_OPSET)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        return cls.run_model(model, list(inputs), device)


prepare = EmberBackend.prepare
run_model = EmberBackend.run_model
run_node = EmberBackend.run_node
supports_device = EmberBackend.supports_device

__all__ = ["EmberBackend", "EmberRep", "prepare", "run_model", "run_node", "supports_device"]
