"""Ember as an ONNX backend (`onnx.backend.base.Backend`), so ONNX's own
conformance tests run against it unchanged:

    import ember.onnx_backend as backend
    outputs = backend.run_model(model_proto, [x])

`prepare` compiles for the CPU (through `ember.compile`, so a model
compiled before is loaded from the compile cache: `ember/cache.py`);
`run_node` wraps one node in a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, namedtupledict

import ember
from ember.errors import InputDependentError
from ember.frontends.onnx.upgrade import MAX_OPSET
from ember.targets.registry import target_for_onnx_device

SPECIALIZE_LIMIT = 64
"""Integer inputs with at most this many elements may be baked in as constants."""

_FLOAT_SHAPE_OPERANDS = {
    "MelWeightMatrix": (3, 4), "OneHot": (1,), "Resize": (1, 2), "Upsample": (1,),
}  # fmt: skip
"""Float operands that decide shapes or sampling (Resize's roi and scales,
the edge frequencies that place MelWeightMatrix's filters, OneHot's depth):
baked in too when an input feeds them."""


class EmberRep(BackendRep):
    """A compiled model; `run` takes inputs in order (or by name in a dict).

    A model with symbolic dims is compiled once, at `prepare`, as its generic
    version (`ember.targets.cpu.generic.GenericModel`) where that lowers it. When a
    model's shapes depend on its input *values* (an `axes`, `shape`, `pads`,
    `repeats` or `sizes` input), or it has symbolic sizes on ops the generic
    version does not lower yet, compiling is deferred to `run`: the model is
    specialised to the shapes of the given arrays and to the values of its
    small integer inputs (and of float inputs that feed `_FLOAT_SHAPE_OPERANDS`),
    compiled, and cached for the next run with the same
    shapes and values.
    """

    def __init__(self, model: onnx.ModelProto, compiled: ember.CompiledModel | None,
                 target: str = "cpu"):  # fmt: skip
        self.model = model
        self.compiled = compiled
        self.target = target
        self._specialized: dict[tuple[Any, ...], tuple[ember.CompiledModel, list[str]]] = {}

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        names = _input_names(self.model)
        if isinstance(inputs, dict):
            feeds = {k: _as_array(v) for k, v in inputs.items()}
        else:
            arrays = (
                [inputs] if isinstance(inputs, (np.ndarray, onnx.TensorProto)) else list(inputs)
            )
            feeds = {n: _as_array(a) for n, a in zip(names, arrays)}
        if self.compiled is not None:
            compiled, kept = self.compiled, names
        else:
            compiled, kept = self._specialize(feeds)
        outputs = compiled.run({n: feeds[n] for n in kept})
        return namedtupledict("Outputs", [s.name for s in compiled.outputs])(*outputs)

    def _specialize(self, feeds: dict[str, np.ndarray]) -> tuple[ember.CompiledModel, list[str]]:
        shaping = _float_shape_inputs(self.model)
        baked = {
            n: a
            for n, a in feeds.items()
            if a.size <= SPECIALIZE_LIMIT and (a.dtype.kind in "iu" or n in shaping)
        }
        key = tuple(
            (n, a.shape, str(a.dtype), a.tobytes() if n in baked else b"")
            for n, a in sorted(feeds.items())
        )
        if key not in self._specialized:
            model = onnx.ModelProto.FromString(self.model.SerializeToString())
            kept_inputs = [i for i in model.graph.input if i.name not in baked]
            del model.graph.input[:]
            model.graph.input.extend(kept_inputs)
            model.graph.initializer.extend(numpy_helper.from_array(a, n) for n, a in baked.items())
            shapes = {i.name: list(feeds[i.name].shape) for i in kept_inputs if i.name in feeds}
            compiled = ember.compile(model, self.target, input_shapes=shapes)
            self._specialized[key] = (compiled, [i.name for i in kept_inputs])
        return self._specialized[key]


def _as_array(value: Any) -> np.ndarray:
    """An input as an array; a `TensorProto` (as ONNX's test cases hold some)
    read by `numpy_helper`, which gives the ml_dtypes arrays of the narrow
    types (bfloat16, float8, int4, ...)."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def _float_shape_inputs(model: onnx.ModelProto) -> set[str]:
    return {
        node.input[i]
        for node in model.graph.node
        for i in _FLOAT_SHAPE_OPERANDS.get(node.op_type, ())
        if i < len(node.input)
    }


def _input_names(model: onnx.ModelProto) -> list[str]:
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


class EmberBackend(Backend):
    """ONNX's devices are targets of the table (`targets/registry.py`) that
    name one (`Target.onnx_device`: `CPU` is the `cpu` target)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether Ember has a target for `device` (the model is checked when
        it is prepared)."""
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether an ONNX device name (`CPU`, `CUDA`) maps to an Ember target."""
        return target_for_onnx_device(device) is not None

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> EmberRep:
        """The model compiled for `device`'s target, ready to `run`."""
        target = target_for_onnx_device(device)
        if target is None:
            raise ember.EmberError(f"Ember's ONNX backend has no target for device {device}")
        try:
            compiled = ember.compile(model, target.name, input_shapes=kwargs.get("input_shapes"))
        except InputDependentError:
            compiled = None  # shapes depend on the inputs: compile when they are known
        return EmberRep(model, compiled, target.name)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any):
        """`prepare(model, device).run(inputs)`: the outputs, in the model's order."""
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
        """One node run as a model of its own (at `opset_version`, default
        the newest Ember takes) on `inputs`."""
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
