"""Block- and warp-per-row reductions on the cuda target (`#ember_gpu.reduce`,
`lowering/loop_to_gpu/reduction.py`): models whose reductions run so match
onnxruntime when emulated on this CPU, the kernel needs each barrier of its
shared-memory tree and the right mask on each warp shuffle, starts from the combiner's exact identity (the output's old value and
NaN rows stay what a sequential fold makes of them), and passes ptxas.

A tree sum adds in another order than onnxruntime's loop, so results are
compared with a tolerance any correct order meets: 1e-5 relative to the
data's scale."""

from __future__ import annotations

import dataclasses
import functools
import shutil
from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import arith, gpu
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.parser import Parser

import ember
from ember.context import make_context
from ember.dialects.ember_gpu import SharedOp, ShuffleXorOp
from ember.frontends.onnx import import_onnx
from ember.lowering.loop_to_gpu import ConvertLoopToGpuPass
from ember.options import Options
from ember.passes.loop.generate import LoopGeneratePass
from ember.report import CompileReport
from ember.targets.cuda.default_schedule import GpuDefaultSchedulePass
from ember.targets.cuda.emulator import emulate
from ember.targets.cuda.ptxas import assemble
from ember.targets.cuda.target import EmulatedModel, GpuModule
from ember.targets.registry import target_named
from tests.support.models import random_inputs, run_onnxruntime

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None,
                                 reason="ptxas (CUDA toolkit) is not on PATH")  # fmt: skip


def _model(nodes: list[onnx.NodeProto], shape: list[int], out: list[int],
           inits: list[onnx.TensorProto] | None = None) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(nodes, "reduction",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
                              inits or [])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _softmax() -> onnx.ModelProto:
    return _model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [8, 768], [8, 768])


def _layer_norm() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal(768).astype(np.float32), "scale"),
             numpy_helper.from_array(rng.standard_normal(768).astype(np.float32), "bias")]  # fmt: skip
    node = helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1)
    return _model([node], [8, 768], [8, 768], inits)


def _reduce(kind: str, shape: list[int], out: list[int]) -> onnx.ModelProto:
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    return _model([helper.make_node(kind, ["x", "axes"], ["y"], keepdims=1)], shape, out, [axes])


def _global_average_pool() -> onnx.ModelProto:
    node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
    return _model([node], [1, 512, 7, 7], [1, 512, 1, 1])


MODELS: dict[str, tuple[Callable[[], onnx.ModelProto], int]] = {
    "softmax": (_softmax, 256),
    "layer_norm": (_layer_norm, 256),
    "reduce_mean": (lambda: _reduce("ReduceMean", [6, 3072], [6, 1]), 256),
    "reduce_max": (lambda: _reduce("ReduceMax", [16, 512], [16, 1]), 256),
    "global_average_pool": (_global_average_pool, 256),  # 49 points: a warp a row, 8 a block
    "short_rows": (lambda: _reduce("ReduceSum", [20, 48], [20, 1]), 256),  # the same, 20 rows
}
"""Each model and the threads of its reductions' blocks."""


def _lowered(model: onnx.ModelProto) -> GpuModule:
    target = target_named("cuda")
    return target.lower(import_onnx(model), CompileReport(), Options())  # type: ignore[attr-defined]


def _reduction_kernels(module: ModuleOp) -> list[gpu.FuncOp]:
    """The kernels that finish a reduction with warp shuffles."""
    return [op for op in module.walk() if isinstance(op, gpu.FuncOp)
            and any(isinstance(o, ShuffleXorOp) for o in op.walk())]  # fmt: skip


def _assert_close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


@pytest.mark.parametrize("name", MODELS)
def test_emulated_reductions_match_onnxruntime(name: str) -> None:
    make, threads = MODELS[name]
    model = make()
    lowered = _lowered(model)
    kernels = {k.sym_name.data for k in _reduction_kernels(lowered.module)}
    launches = [launch for launch in lowered.plan.launches if launch.kernel in kernels]
    assert launches and all(launch.block == (threads, 1, 1) for launch in launches)
    feeds = random_inputs(model)
    compiled = ember.compile(model, target="cuda", emulate=True)
    assert isinstance(compiled, EmulatedModel)
    [got], [want] = compiled.run(feeds), run_onnxruntime(model, feeds)
    assert np.asarray(want).std() > 0
    _assert_close(got, want)


def test_the_reduce_mean_runs_one_block_per_row() -> None:
    lowered = _lowered(_reduce("ReduceMean", [6, 3072], [6, 1]))
    [kernel] = _reduction_kernels(lowered.module)
    [launch] = [launch for launch in lowered.plan.launches if launch.kernel == kernel.sym_name.data]
    assert (launch.grid, launch.block) == ((6, 1, 1), (256, 1, 1))
    barriers = [op for op in kernel.walk() if isinstance(op, gpu.BarrierOp)]
    assert len(barriers) == 3  # halving 256 partials to 32 in shared memory
    masks = [op.lane_mask for op in kernel.walk() if isinstance(op, ShuffleXorOp)]
    assert masks == [16, 8, 4, 2, 1]  # then 32 to 1 in the first warp


def _run(module: ModuleOp, lowered: GpuModule, x: np.ndarray) -> np.ndarray:
    """The emulated result of `module`, a (possibly changed) copy of `lowered`'s."""
    changed = dataclasses.replace(lowered, module=module)
    [result] = EmulatedModel(changed, emulate(module, target_named("cpu").jit))(x)
    return result


def _reduce_mean_mutated(mutate: Callable[[gpu.FuncOp], None]) -> None:
    """The 256-thread ReduceMean matches onnxruntime as lowered, and not once
    `mutate` has changed its kernel."""
    model = _reduce("ReduceMean", [6, 3072], [6, 1])
    lowered = _lowered(model)
    x = random_inputs(model)["x"]
    [expected] = run_onnxruntime(model, {"x": x})
    _assert_close(_run(lowered.module.clone(), lowered, x), expected)
    mutated = lowered.module.clone()
    [kernel] = _reduction_kernels(mutated)
    mutate(kernel)
    assert not np.allclose(_run(mutated, lowered, x), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("which", [0, 1, -1], ids=["first", "middle", "last"])
def test_the_tree_needs_each_barrier(which: int) -> None:
    # Without barrier `which`, its step runs in one phase with the step
    # before: thread t combines slot t + h before thread t + h (later in
    # the phase) has written it, so it reads the slot's stale value (the
    # last barrier guards the first warp's read of slots 32..63).
    def remove_barrier(kernel: gpu.FuncOp) -> None:
        barrier = [op for op in kernel.walk() if isinstance(op, gpu.BarrierOp)][which]
        barrier.detach()
        barrier.erase()

    _reduce_mean_mutated(remove_barrier)


@pytest.mark.parametrize("which", [0, -1], ids=["first", "last"])
def test_the_warp_needs_each_shuffles_mask(which: int) -> None:
    # Mask 16 or 1 replaced by 8: half the warp's lanes (16..31, or every
    # odd lane) never reach lane 0, and another half counts twice.
    def wrong_mask(kernel: gpu.FuncOp) -> None:
        shuffle = [op for op in kernel.walk() if isinstance(op, ShuffleXorOp)][which]
        shuffle.properties["mask"] = IntegerAttr(8, i32)

    _reduce_mean_mutated(wrong_mask)


def test_short_rows_run_a_warp_each_without_barriers() -> None:
    # 20 rows of 48 points: a warp a row, 8 rows a block (the third block's
    # last 4 warps fold nothing and store nothing), shuffles only.
    lowered = _short_rows()[0]
    [kernel] = _reduction_kernels(lowered.module)
    [launch] = [launch for launch in lowered.plan.launches if launch.kernel == kernel.sym_name.data]
    assert (launch.grid, launch.block) == ((3, 1, 1), (256, 1, 1))
    assert not any(isinstance(op, gpu.BarrierOp | SharedOp) for op in kernel.walk())
    masks = [op.lane_mask for op in kernel.walk() if isinstance(op, ShuffleXorOp)]
    assert masks == [16, 8, 4, 2, 1]
    if shutil.which("ptxas") is not None:
        resources = assemble(lowered.ptx("sm_90"), "sm_90").kernels[kernel.sym_name.data]
        assert (resources.shared_bytes, resources.barriers, resources.spill_stores) == (0, 0, 0)


@functools.cache
def _short_rows() -> tuple[GpuModule, np.ndarray, np.ndarray]:
    """The warp-per-row ReduceSum lowered, an input, onnxruntime's output."""
    model = _reduce("ReduceSum", [20, 48], [20, 1])
    x = random_inputs(model)["x"]
    [expected] = run_onnxruntime(model, {"x": x})
    return _lowered(model), x, expected


def _short_rows_mutated(mutate: Callable[[gpu.FuncOp], None]) -> None:
    """The warp-per-row ReduceSum (right as lowered:
    test_emulated_reductions_match_onnxruntime[short_rows]) is wrong once
    `mutate` has changed its kernel."""
    lowered, x, expected = _short_rows()
    mutated = lowered.module.clone()
    [kernel] = _reduction_kernels(mutated)
    mutate(kernel)
    assert not np.allclose(_run(mutated, lowered, x), expected, rtol=1e-4, atol=1e-4)


def test_each_warp_needs_its_own_row() -> None:
    # The warp number dropped from the row (row = block * 8): every warp of
    # a block sums the block's first row, and the others are never written.
    def same_row(kernel: gpu.FuncOp) -> None:
        warp = next(op for op in kernel.walk() if isinstance(op, arith.DivUIOp))
        zero = arith.ConstantOp.from_int_and_width(0, warp.result.type)
        kernel.body.block.insert_op_before(zero, kernel.body.block.first_op)
        warp.result.replace_all_uses_with(zero.result)

    _short_rows_mutated(same_row)


def test_each_warp_needs_its_shuffles_mask() -> None:
    def wrong_mask(kernel: gpu.FuncOp) -> None:
        shuffle = next(op for op in kernel.walk() if isinstance(op, ShuffleXorOp))
        shuffle.properties["mask"] = IntegerAttr(8, i32)

    _short_rows_mutated(wrong_mask)


_FOLDS = """
func.func @folds(%x: memref<4x100xf32>, %sum: memref<4xf32>, %max: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x100xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x100xf32>) outs(%max : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maxnumf %a, %acc : f32
    linalg.yield %m : f32
  }
  func.return
}
"""


def test_the_kernel_starts_from_the_identity_and_the_output() -> None:
    # linalg's output is the initial accumulator: the sums start from it;
    # maxnumf ignores NaN, so a row of NaNs keeps its output (NaN stays NaN,
    # 5 stays 5), which an infinite start would replace.
    module = Parser(make_context(), _FOLDS).parse_module()
    for compiler_pass in (GpuDefaultSchedulePass(), LoopGeneratePass(), ConvertLoopToGpuPass()):
        compiler_pass.apply(Context(), module)
    assert len(_reduction_kernels(module)) == 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 100)).astype(np.float32)
    x[2:] = np.nan
    sums = np.array([10.0, -3.0, 0.0, 1.0], np.float32)
    maxima = np.array([0.5, 100.0, np.nan, 5.0], np.float32)
    got_sums, got_maxima = sums.copy(), maxima.copy()
    emulate(module, target_named("cpu").jit)["folds"](x, got_sums, got_maxima)
    _assert_close(got_sums[:2], sums[:2] + x[:2].sum(axis=1, dtype=np.float64))
    assert np.isnan(got_sums[2:]).all()
    expected_maxima = [max(0.5, float(x[0].max())), 100.0, np.nan, 5.0]
    np.testing.assert_array_equal(got_maxima, np.array(expected_maxima, np.float32))


@needs_ptxas
def test_the_reduction_kernels_pass_ptxas() -> None:
    lowered = _lowered(_layer_norm())
    reductions = {k.sym_name.data for k in _reduction_kernels(lowered.module)}
    assert len(reductions) == 2  # the mean and the variance
    for arch in ("sm_80", "sm_90"):
        report = assemble(lowered.ptx(arch), arch)
        for name in reductions:
            kernel = report.kernels[name]
            assert kernel.shared_bytes == 256 * 4 and kernel.barriers >= 1
            assert kernel.spill_stores == 0
