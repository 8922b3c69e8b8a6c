"""Model sources the tools accept: a file path, or `light:NAME` for one of the
small real architectures that ship with the `onnx` package (no download),
optionally with their weights replaced by seeded random values.

    ember run light:resnet50 --random-weights 0 --check

The shipped light models hold placeholder weights (every weight is 0.02),
so every class gets the same score and their outputs are one repeated
value: a check against them shows little. Random weights make outputs that
differ from each other, so a comparison can fail.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from ember.errors import ModelLoadError

LIGHT_PREFIX = "light:"
LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def light_model_names() -> list[str]:
    return sorted(p.stem.removeprefix("light_") for p in LIGHT_DIR.glob("light_*.onnx"))


def resolve_model(source: str) -> str:
    """The file path for a CLI model argument."""
    if not source.startswith(LIGHT_PREFIX):
        return source
    name = source.removeprefix(LIGHT_PREFIX)
    path = LIGHT_DIR / f"light_{name}.onnx"
    if not path.exists():
        raise ModelLoadError(
            f"{source}: no such light model; available: {', '.join(light_model_names())}"
        )
    return str(path)


def _variance_inputs(model: onnx.ModelProto) -> set[str]:
    return {n.input[4] for n in model.graph.node if n.op_type == "BatchNormalization"}


def _random_weight(
    shape: tuple[int, ...], is_variance: bool, rng: np.random.Generator
) -> np.ndarray:
    """He-style scaling (standard normal over sqrt(fan-in)) keeps activations of
    deep networks near 1, so their outputs stay well-conditioned."""
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    values = (rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))).astype(np.float32)
    return np.abs(values) + np.float32(0.5) if is_variance else values


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` whose weights are seeded random float32 values: the
    outputs of `ConstantOfShape` nodes with constant shapes (how the light
    models store weights) and float32 initializers. BatchNormalization
    variances stay positive. Other tensors (integer shapes, indices) are kept."""
    rng = np.random.default_rng(seed)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    initial = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    variances = _variance_inputs(model)
    weights: dict[str, np.ndarray] = {}
    kept = []
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in initial:
            shape = tuple(int(d) for d in initial[node.input[0]])
            weights[node.output[0]] = _random_weight(shape, node.output[0] in variances, rng)
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    used = {i for n in kept for i in n.input} | {o.name for o in graph.output}
    initializers = []
    for tensor in graph.initializer:
        if tensor.name not in used:
            continue
        value = initial[tensor.name]
        if value.dtype == np.float32:
            random = _random_weight(value.shape, tensor.name in variances, rng)
            tensor = numpy_helper.from_array(random, tensor.name)
        initializers.append(tensor)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in weights.items())
    real_inputs = [i for i in graph.input if i.name not in initial and i.name not in weights]
    del graph.input[:]
    graph.input.extend(real_inputs)
    return model


__all__ = ["light_model_names", "resolve_model", "with_random_weights"]
