"""Depthwise and grouped convolutions on the cuda target, emulated on the
CPU and checked against onnxruntime: a depthwise one (one channel a group,
as MobileNet's, 3 x 3, stride 1 and 2, padded, with a bias and a Relu)
runs as one `#ember_gpu.window` kernel whose blocks stage their input
window in shared memory, its padding and its epilogue folded in; a grouped one with 32 or more filters a group as the
block-tiled implicit GEMM, the group on the grid's z. ptxas takes their
kernels without spills.
"""

from __future__ import annotations

import functools
import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp

from ember.dialects.ember_gpu import SharedOp
from ember.frontends.onnx import import_onnx
from ember.options import Options
from ember.report import CompileReport
from ember.targets.cuda.ptxas import assemble
from ember.targets.cuda.target import GpuModule
from ember.targets.registry import target_named
from tests.support.models import random_inputs, run_onnxruntime
from tests.targets.cuda.test_reductions import _assert_close, _run


def _conv(channels: int, filters: int, group: int, size: int, stride: int) -> onnx.ModelProto:
    """Relu(Conv(x) + bias): 3 x 3, padding 1, on a 1 x channels x size x size input."""
    rng = np.random.default_rng(group + stride)
    weights = rng.standard_normal((filters, channels // group, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(filters).astype(np.float32)
    out = (size - 1) // stride + 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=group, kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[stride, stride]),
             helper.make_node("Relu", ["c"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, filters, out, out])],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODELS = {
    "depthwise_stride_1": lambda: _conv(16, 16, 16, 20, 1),  # tiles of 16 x 32 over 20 x 20
    "depthwise_stride_2": lambda: _conv(16, 16, 16, 15, 2),  # 8 x 8 outputs
    "depthwise_multiplier_2": lambda: _conv(8, 16, 8, 9, 1),  # two filters a channel
    "grouped_2": lambda: _conv(64, 64, 2, 6, 1),  # 32 filters a group
    "grouped_4": lambda: _conv(128, 128, 4, 12, 2),  # 6 x 6 outputs
}


@functools.cache
def _lowered(name: str) -> GpuModule:
    target = target_named("cuda")
    return target.lower(import_onnx(MODELS[name]()), CompileReport(), Options())  # type: ignore[attr-defined]


def _staging_kernel(module: ModuleOp) -> gpu.FuncOp:
    """The one kernel that stages tiles in shared memory."""
    [kernel] = [op for op in module.walk() if isinstance(op, gpu.FuncOp)
                and any(isinstance(o, SharedOp) for o in op.walk())]  # fmt: skip
    return kernel


@pytest.mark.parametrize("name", MODELS)
def test_emulated_convolutions_match_onnxruntime(name: str) -> None:
    model = MODELS[name]()
    x = random_inputs(model)["x"]
    [want] = run_onnxruntime(model, {"x": x})
    assert np.asarray(want).std() > 0
    lowered = _lowered(name)
    _assert_close(_run(lowered.module.clone(), lowered, x), want)


@pytest.mark.parametrize(("name", "grid", "block", "shared"), [
    # 20 x 20 outputs of 16 channels: tiles of 16 x 32, 16 x 8 threads; a
    # window of (16 - 1) + 3 = 18 rows by (32 - 1) + 3 = 34 columns.
    ("depthwise_stride_1", (1, 2, 16), (16, 8, 1), [18, 34]),
    # 8 x 8 outputs: 4 x 4 threads cover them; (8 - 1) * 2 + 3 = 17 a side.
    ("depthwise_stride_2", (1, 1, 16), (4, 4, 1), [17, 17]),
    # 8 channels by 2 filters: a plane per (channel, filter); 9 x 9 outputs.
    ("depthwise_multiplier_2", (1, 1, 16), (8, 8, 1), [18, 18]),
    # The implicit GEMM: 32 filters by 36 pixels a group, one group a z index.
    ("grouped_2", (2, 1, 2), (16, 16, 1), [2, 32, 16]),
    ("grouped_4", (2, 1, 4), (16, 16, 1), [2, 32, 16]),
])  # fmt: skip
def test_each_convolution_runs_one_staging_kernel(name: str, grid: tuple[int, int, int],
                                                  block: tuple[int, int, int],
                                                  shared: list[int]) -> None:  # fmt: skip
    lowered = _lowered(name)
    kernel = _staging_kernel(lowered.module)
    [launch] = [launch for launch in lowered.plan.launches if launch.kernel == kernel.sym_name.data]
    assert (launch.grid, launch.block) == (grid, block)
    first = next(op for op in kernel.walk() if isinstance(op, SharedOp))
    assert first.results[0].type.get_shape() == tuple(shared)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["depthwise_stride_1", "depthwise_stride_2"])
def test_a_depthwise_convolution_is_one_launch(name: str) -> None:
    # Its input's padding runs in the staging (bounds checks, no padded
    # copy), its bias and Relu in registers.
    lowered = _lowered(name)
    [launch] = lowered.plan.launches
    assert launch.kernel == _staging_kernel(lowered.module).sym_name.data


def test_the_window_needs_its_barrier() -> None:
    # Without it, the products run in one phase with the staging: thread t
    # reads window elements that threads after it have not written yet.
    lowered = _lowered("depthwise_stride_1")
    model = MODELS["depthwise_stride_1"]()
    x = random_inputs(model)["x"]
    [expected] = run_onnxruntime(model, {"x": x})
    mutated = lowered.module.clone()
    kernel = _staging_kernel(mutated)
    [barrier] = [op for op in kernel.walk() if isinstance(op, gpu.BarrierOp)]
    _assert_close(_run(lowered.module.clone(), lowered, x), expected)
    barrier.detach()
    barrier.erase()
    assert not np.allclose(_run(mutated, lowered, x), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) is not on PATH")
@pytest.mark.parametrize("name", ["depthwise_stride_1", "depthwise_stride_2", "grouped_4"])
def test_ptxas_takes_the_staging_kernels_without_spills(name: str) -> None:
    lowered = _lowered(name)
    kernel = _staging_kernel(lowered.module).sym_name.data
    resources = assemble(lowered.ptx("sm_90"), "sm_90").kernels[kernel]
    assert resources.shared_bytes > 0 and resources.barriers == 1
    assert (resources.spill_stores, resources.spill_loads, resources.stack_bytes) == (0, 0, 0)
