"""Compiled models on threads: splitting parallel loops changes no bit of
any result (each element's arithmetic, reductions included, stays in one
thread, in its order), and agrees with onnxruntime as the serial code does."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.compiler import CompiledModel
from ember.deploy import compile_to_directory
from ember.dialects.loop import aligned_zeros
from ember.lowering.loop_to_llvm.parallel import PARALLEL_FOR
from ember.options import Options
from tests.support.models import (
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    with_random_weights,
)


def _model(nodes: list, inputs: list, outputs: list, inits: list) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _value(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def matmul_model() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    weight = numpy_helper.from_array(rng.standard_normal((96, 80)).astype(np.float32), "w")
    return _model([helper.make_node("MatMul", ["x", "w"], ["y"])], [_value("x", [67, 96])],
                  [_value("y", [67, 80])], [weight])  # fmt: skip


def conv_model() -> onnx.ModelProto:
    rng = np.random.default_rng(2)
    weight = numpy_helper.from_array(rng.standard_normal((24, 8, 3, 3)).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.standard_normal(24).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["y"])]  # fmt: skip
    return _model(nodes, [_value("x", [2, 8, 29, 31])], [_value("y", [2, 24, 15, 16])],
                  [weight, bias])  # fmt: skip


def tiny_model() -> onnx.ModelProto:
    """Too little work for any launch."""
    return _model([helper.make_node("Add", ["x", "x"], ["y"])], [_value("x", [2, 3])],
                  [_value("y", [2, 3])], [])  # fmt: skip


def _launches(compiled: CompiledModel) -> bool:
    """Whether the compiled code calls the thread pool at all."""
    return PARALLEL_FOR in compiled._function._ember_jit_module.imported  # noqa: SLF001


MODELS = {"matmul": matmul_model, "conv": conv_model,
          "mlp": lambda: mlp(batch=16, sizes=(256, 512, 10))}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MODELS))
def test_threads_change_no_bit(name: str) -> None:
    model = MODELS[name]()
    inputs = random_inputs(model)
    serial = ember.compile(model, threads=1)
    assert not _launches(serial)
    expected = serial.run(inputs)
    for threads in (2, 3):
        compiled = ember.compile(model, threads=threads)
        assert _launches(compiled)
        for got, want in zip(compiled.run(inputs), expected):
            np.testing.assert_array_equal(got, want)
    for got, want in zip(expected, run_onnxruntime(model, inputs)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # SqueezeNet compiled twice: 10 s
def test_squeezenet_on_two_threads_matches_one() -> None:
    model = with_random_weights(onnx.load(light_model_path("squeezenet")))
    inputs = random_inputs(model)
    (one,) = ember.compile(model, threads=1).run(inputs)
    (two,) = ember.compile(model, threads=2).run(inputs)
    np.testing.assert_array_equal(two, one)
    np.testing.assert_allclose(two, run_onnxruntime(model, inputs)[0], rtol=1e-3, atol=1e-6)


def test_two_models_alternately_share_the_pool() -> None:
    """Models compiled for different thread counts, called in turn many
    times, use one pool without mixing their work."""
    first, second = matmul_model(), conv_model()
    inputs = [random_inputs(first), random_inputs(second)]
    expected = [ember.compile(m, threads=1).run(x)[0] for m, x in zip((first, second), inputs)]
    compiled = [ember.compile(first, threads=2), ember.compile(second, threads=3)]
    for _ in range(50):
        for model, x, want in zip(compiled, inputs, expected):
            np.testing.assert_array_equal(model.run(x)[0], want)


def test_a_model_without_parallel_work_has_no_launches() -> None:
    model = tiny_model()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    compiled = ember.compile(model, threads=4)
    assert not _launches(compiled)
    np.testing.assert_array_equal(compiled(x)[0], x + x)


def test_default_is_every_available_core() -> None:
    from ember.options import available_cores

    compiled = ember.compile(matmul_model())
    assert _launches(compiled) == (available_cores() > 1)


def test_shared_library_with_threads(tmp_path: Path) -> None:
    """The .so carries its own pool: it loads with ctypes, runs on 2 threads,
    and NAME_set_threads changes the count without changing a bit."""
    model = conv_model()
    inputs = random_inputs(model)
    (want,) = ember.compile(model, threads=1).run(inputs)
    deployed = compile_to_directory(model, tmp_path, "conv", options=Options(threads=2))
    assert "void conv_set_threads(int64_t threads);" in deployed.header.read_text()
    manifest = json.loads(deployed.manifest.read_text())
    assert (manifest["threads"], manifest["set_threads"]) == (2, "conv_set_threads")
    library = ctypes.CDLL(str(deployed.library))
    library.conv_run.argtypes = [ctypes.c_void_p] * 3
    library.conv_set_threads.argtypes = [ctypes.c_int64]
    blob = deployed.weights.read_bytes()
    weights = aligned_zeros(len(blob))
    weights[:] = np.frombuffer(blob, dtype=np.uint8)
    arena = aligned_zeros(deployed.arena_bytes)
    x = inputs["x"]
    for threads in (0, 1, 3, 0):
        library.conv_set_threads(threads)
        y = np.zeros_like(want)
        buffers = (ctypes.c_void_p * 2)(x.ctypes.data, y.ctypes.data)
        library.conv_run(ctypes.addressof(buffers), weights.ctypes.data, arena.ctypes.data)
        np.testing.assert_array_equal(y, want)


def test_shared_library_for_one_thread_has_no_pool(tmp_path: Path) -> None:
    deployed = compile_to_directory(conv_model(), tmp_path, "serial", options=Options(threads=1))
    library = ctypes.CDLL(str(deployed.library))
    library.serial_set_threads.argtypes = [ctypes.c_int64]
    library.serial_set_threads(4)  # there, and harmless
    with pytest.raises(AttributeError):
        library.ember_parallel_for  # noqa: B018 - the pool's entry is never exported
