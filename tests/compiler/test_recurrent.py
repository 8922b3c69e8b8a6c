"""RNN, GRU and LSTM compiled end to end: compared with onnxruntime over
directions, sequence lengths, initial states, peepholes, biases, clip and
activations; batch first (which onnxruntime does not run) with the reference
interpreter; a symbolic number of steps and batch compiled once; and the
loop over time kept as one loop, whatever the number of steps."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import scf

import ember
from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass
from ember.passes.graph.fold_constants import FoldConstantsPass
from ember.passes.graph.infer_shapes import InferShapesPass
from ember.reference import run
from ember.targets.cpu.generic import GenericModel

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
HIDDEN, FEATURES = 5, 3


def _model(op_type: str, *, steps: int | str = 6, batch: int | str = 3, direction: str = "forward",
           layout: int = 0, lens: bool = False, states: bool = False, peepholes: bool = False,
           bias: bool = True, **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    """One recurrent node: X (and sequence_lens, initial states) inputs, the
    weights initializers."""
    rng = np.random.default_rng(sum(map(ord, op_type + direction)) + 7 * layout)
    directions = 2 if direction == "bidirectional" else 1
    width = GATES[op_type] * HIDDEN

    def weight(name: str, *shape: int) -> str:
        value = (rng.standard_normal(shape) * 0.5).astype(np.float32)
        inits.append(numpy_helper.from_array(value, name))
        return name

    def data(name: str, elem: int, shape: list[int | str]) -> str:
        inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    inits: list[onnx.TensorProto] = []
    inputs: list[onnx.ValueInfoProto] = []
    f = TensorProto.FLOAT
    state = [batch, directions, HIDDEN] if layout else [directions, batch, HIDDEN]
    names = [data("x", f, [batch, steps, FEATURES] if layout else [steps, batch, FEATURES]),
             weight("w", directions, width, FEATURES), weight("r", directions, width, HIDDEN),
             weight("b", directions, 2 * width) if bias else "",
             data("lens", TensorProto.INT32, [batch]) if lens else "",
             data("h0", f, state) if states else ""]  # fmt: skip
    if op_type == "LSTM":
        names += [data("c0", f, state) if states else "",
                  weight("p", directions, 3 * HIDDEN) if peepholes else ""]  # fmt: skip
    outputs = ["y", "y_h"] + (["y_c"] if op_type == "LSTM" else [])
    node = helper.make_node(op_type, names, outputs, hidden_size=HIDDEN, direction=direction,
                            layout=layout, **attrs)  # fmt: skip
    graph = helper.make_graph([node], op_type, inputs,
                              [helper.make_tensor_value_info(o, f, None) for o in outputs], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _feeds(model: onnx.ModelProto, steps: int = 6, batch: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(steps * 31 + batch)
    feeds = {}
    for value in model.graph.input:
        dims = [d.dim_value or {"T": steps, "N": batch}[d.dim_param]
                for d in value.type.tensor_type.shape.dim]  # fmt: skip
        if value.name == "lens":
            feeds["lens"] = rng.integers(1, steps + 1, dims).astype(np.int32)
            feeds["lens"][0] = steps
        else:
            feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def _close(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return ort.InferenceSession(model.SerializeToString()).run(None, feeds)


CASES = [
    ("RNN", {}),
    ("RNN", {"direction": "bidirectional", "lens": True, "states": True}),
    ("RNN", {"direction": "reverse", "activations": ["Relu"], "clip": 1.0, "bias": False}),
    ("GRU", {}),
    ("GRU", {"direction": "reverse", "lens": True}),
    ("GRU", {"direction": "bidirectional", "states": True, "linear_before_reset": 1}),
    ("GRU", {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.3],
             "activation_beta": [0.4], "clip": 2.0}),
    ("LSTM", {}),
    ("LSTM", {"direction": "bidirectional", "lens": True, "states": True, "peepholes": True}),
    ("LSTM", {"direction": "reverse", "input_forget": 1, "clip": 0.5}),
    ("LSTM", {"activations": ["Sigmoid", "Elu", "Softplus"], "activation_alpha": [0.7],
              "bias": False}),
    ("LSTM", {"activations": ["HardSigmoid", "LeakyRelu", "ThresholdedRelu"],
              "activation_alpha": [0.25, 0.1, 0.2], "activation_beta": [0.45]}),
]  # fmt: skip


@pytest.mark.parametrize("op_type, options", CASES, ids=lambda v: str(v) if isinstance(v, str)
                         else "-".join(f"{k}={v}" for k, v in v.items()) or "defaults")  # fmt: skip
def test_matches_onnxruntime(op_type: str, options: dict[str, Any]) -> None:
    model = _model(op_type, **options)
    feeds = _feeds(model)
    _close(ember.compile(model).run(feeds), _ort(model, feeds))


@pytest.mark.parametrize("op_type", list(GATES))
def test_batch_first_matches_the_reference(op_type: str) -> None:
    model = _model(op_type, direction="bidirectional", layout=1, lens=True, states=True)
    feeds = _feeds(model)
    _close(ember.compile(model).run(feeds), run(ember.import_onnx(model), feeds))


def test_symbolic_steps_and_batch_compile_once() -> None:
    model = _model("LSTM", steps="T", batch="N", direction="bidirectional", lens=True,
                   states=True)  # fmt: skip
    compiled = ember.compile(model)
    assert isinstance(compiled, GenericModel)
    for steps, batch in ((1, 1), (6, 3), (17, 2)):
        feeds = _feeds(model, steps, batch)
        _close(compiled.run(feeds), _ort(model, feeds))


def _tensor_level(model: onnx.ModelProto) -> Any:
    module = ember.import_onnx(model)
    for compiler_pass in (InferShapesPass(), FoldConstantsPass(), ConvertGraphToTensorPass()):
        compiler_pass.apply(Context(), module)
    return module


@pytest.mark.parametrize("op_type", list(GATES))
def test_one_loop_per_direction_at_any_length(op_type: str) -> None:
    """The steps are a loop, not copies of the cell: the IR is the same size
    for 2 steps and for 200."""
    sizes = []
    for steps in (2, 200):
        module = _tensor_level(_model(op_type, steps=steps, direction="bidirectional"))
        loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
        assert len(loops) == 2
        sizes.append(len(list(module.walk())))
    assert sizes[0] == sizes[1]


@pytest.mark.parametrize("options", [{"opt_level": 0}, {"opt_level": 1}, {"threads": 2}],
                         ids=["O0", "O1", "2-threads"])  # fmt: skip
def test_every_level_and_two_threads(options: dict[str, int]) -> None:
    model = _model("GRU", direction="bidirectional", lens=True, states=True)
    feeds = _feeds(model)
    _close(ember.compile(model, **options).run(feeds), _ort(model, feeds))


@pytest.mark.parametrize("op_type", list(GATES))
def test_lengths_outside_the_steps_are_clamped(op_type: str) -> None:
    """onnxruntime rejects them; Ember runs 0 steps for a length of 0 or
    less and all of them for one past the end, as its reference does."""
    model = _model(op_type, direction="bidirectional", lens=True, states=True)
    feeds = _feeds(model)
    feeds["lens"] = np.array([0, 9, -2], np.int32)
    got = ember.compile(model).run(feeds)
    _close(got, run(ember.import_onnx(model), feeds))
    np.testing.assert_array_equal(got[0][:, :, 0], 0)  # no steps: Y is zero
    np.testing.assert_array_equal(got[1][:, 0], feeds["h0"][:, 0])  # and the state stays
