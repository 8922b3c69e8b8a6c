"""A MatMul of two activations whose B panel, one block wide, outgrows the
L2 cache: the default schedule copies it per call (`long_panels` in
`targets/cpu/schedule/cache_blocking.py`), and the product stays exact to f32
rounding, on one thread and two. The host's L2 is made 64 KiB so that a
small product qualifies on every machine."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx import TensorProto, helper

import ember
from ember.targets.cpu.schedule import default_schedule
from ember.targets.cpu.schedule.cpu_target import host_target

RNG = np.random.default_rng(11)
M, K, N = 512, 1536, 64  # 32 row blocks even of 16 rows


def _model() -> object:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "long",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [M, K]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [K, N])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [M, N])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.skipif(not host_target().has_micro_kernels, reason="no vector micro-kernels here")
@pytest.mark.parametrize("threads", [1, 2])
def test_long_run_time_panel_is_copied_and_exact(monkeypatch: pytest.MonkeyPatch,
                                                  threads: int) -> None:  # fmt: skip
    small_l2 = dataclasses.replace(host_target(), l2_bytes=64 * 1024)
    monkeypatch.setattr(default_schedule, "cpu_target", lambda name: small_l2)
    long_panels = default_schedule.long_panels
    found: list[list[int]] = []

    def spy(*args: object) -> list[int]:
        found.append(long_panels(*args))
        return found[-1]

    monkeypatch.setattr(default_schedule, "long_panels", spy)
    compiled = ember.compile(_model(), threads=threads)
    assert [1] in found  # B, the second input, is the long panel

    a = RNG.standard_normal((M, K)).astype(np.float32)
    b = (RNG.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32)
    (c,) = compiled.run({"a": a, "b": b})
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = K * np.finfo(np.float32).eps * (np.abs(a).astype(np.float64) @ np.abs(b))
    assert np.all(np.abs(c - exact) <= bound)
